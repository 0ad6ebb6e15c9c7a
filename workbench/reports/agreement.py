"""`workbench agree`'s report as a `Document`: human pairs, Fleiss, model judges, confusion
matrices and the disagreement list. `agreement_blocks` gives the same blocks for a larger
report (`workbench report`); data strings go in plain, the renderers escape them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.core.agreement.agreement import (
    AgreementReport,
    FleissResult,
    JudgeAgreement,
    JudgeVersionAgreement,
)
from workbench.core.agreement.kappa import Kappa, PairAgreement
from workbench.core.agreement.krippendorff import AlphaResult
from workbench.core.judgments.judge_versions import UNKNOWN, describe_version
from workbench.core.model import Role
from workbench.reports.document import (
    Block,
    Cell,
    Column,
    Document,
    Heading,
    Interval,
    Paragraph,
    Styled,
    Table,
    figure,
)

DISAGREEMENTS_SHOWN = 20
QUERIES_SHOWN = 8
TITLE = "Agreement between annotators"
FIGURE_NAMES = {
    "kappa": "kappa",
    "weighted_kappa": "weighted kappa",
    "binary_kappa": "binary kappa",
}
"""How each of `PairAgreement.figures()` is written in reports."""

FIGURE_COLUMNS = (
    Column("n", help="items both graded"),
    Column("exact agreement", help="share of items given the same grade"),
    Column("kappa", help="Cohen's kappa with its 95% CI"),
    Column("weighted kappa", help="quadratic-weighted kappa with its 95% CI"),
    Column("binary kappa", help="kappa on relevant vs not, with its 95% CI"),
    Column("verdict", align="left", help="against the bar; why a figure is missing"),
)


def kappa_cell(kappa: Kappa) -> Cell:
    """A kappa with its interval; a dash when undefined (the verdict says why)."""
    if kappa.kappa is None:
        return Styled(None, "muted")
    low, high = kappa.ci if kappa.ci is not None else (None, None)
    return Interval(kappa.kappa, low, high)


def verdict(figures: PairAgreement, bar: float) -> Styled:
    """'ok', or which figures fall below the bar and which are missing, and why."""
    if figures.meets_bar and not figures.below_bar:
        return Styled("ok", "good")
    kappas = figures.figures()
    undefined = [name for name in figures.below_bar if kappas[name].kappa is None]
    below = [FIGURE_NAMES[name] for name in figures.below_bar if name not in undefined]
    parts = [f"BELOW {bar}: " + ", ".join(below)] if below else []
    by_reason: dict[str, list[str]] = {}
    for name in undefined:
        by_reason.setdefault(figures.reasons.get(name, "undefined"), []).append(FIGURE_NAMES[name])
    parts += [f"no {', '.join(names)}: {why}" for why, names in by_reason.items()]
    return Styled("; ".join(parts), "bad" if below else "warn")


def figure_cells(figures: PairAgreement, bar: float) -> list[Cell]:
    """The cells under `FIGURE_COLUMNS` for one comparison."""
    kappas = [kappa_cell(k) for k in figures.figures().values()]
    return [figures.n, figures.agreement, *kappas, verdict(figures, bar)]


def figures_table(
    title: str, first: str, rows: Sequence[tuple[str, PairAgreement]], bar: float
) -> Table:
    """One row per comparison, `first` naming what the rows are."""
    return Table(
        columns=(Column(first, align="left"), *FIGURE_COLUMNS),
        rows=[[label, *figure_cells(figures, bar)] for label, figures in rows],
        title=title,
    )


def confusion_table(
    label: str, figures: PairAgreement, scale: Sequence[int], rows: str, columns: str
) -> Table:
    return Table(
        columns=(Column("grade", align="left"), *(Column(str(g)) for g in scale)),
        rows=[[str(g), *counts] for g, counts in zip(scale, figures.confusion, strict=True)],
        title=f"{label}: rows {rows}, columns {columns}",
    )


def query_line(label: str, figures: PairAgreement) -> Paragraph | None:
    """The queries where the two disagreed at least once, with their exact agreement."""
    low = [(q, f) for q, f in figures.per_query.items() if f.agreement < 1.0]
    if not low:
        return None
    shown = ", ".join(f"{q} {figure(f.agreement)} (n={f.n})" for q, f in low[:QUERIES_SHOWN])
    more = f" ... and {len(low) - QUERIES_SHOWN} more" if len(low) > QUERIES_SHOWN else ""
    return Paragraph(f"{label}: queries with disagreement (exact agreement, n): {shown}{more}")


def detail_blocks(
    label: str, figures: PairAgreement, scale: Sequence[int], rows: str, columns: str
) -> list[Block]:
    """A comparison's confusion matrix and the queries it disagrees on."""
    if not figures.n:
        return []
    line = query_line(label, figures)
    return [confusion_table(label, figures, scale, rows, columns), *([line] if line else [])]


def no_overlap(report: AgreementReport) -> Paragraph:
    roles = list(report.annotators.values())
    humans, oracles = roles.count(Role.HUMAN), roles.count(Role.ORACLE)
    judges = len(report.judges)
    left_out = (
        f" {oracles} oracle annotator(s) (workbench simulate) are left out: they answer"
        " from existing qrels, so their agreement measures nothing."
        if oracles
        else ""
    )
    return Paragraph(
        f"No overlap: no item was graded by two human annotators ({humans} human"
        f" annotator{'s' * (humans != 1)}, {judges} model judge{'s' * (judges != 1)})."
        f" Agreement needs shared items.{left_out}"
    )


def alpha_blocks(alpha: AlphaResult, level: int) -> list[Block]:
    """Krippendorff's ordinal alpha: every item graded by two or more, missing grades allowed."""
    said = Styled(alpha.reason or "undefined", "warn") if alpha.alpha is None else ""
    table = Table(
        columns=(
            Column("annotators", align="left"),
            Column("items", help="graded by two or more"),
            Column("grades", help="given to those items"),
            Column("alpha", help="ordinal"),
            Column("", align="left"),
        ),
        rows=[[", ".join(alpha.annotators), alpha.items, alpha.pairable_values, alpha.alpha, said]],
    )
    return [
        Heading("Krippendorff's alpha", level),
        table,
        Paragraph("Over every item graded by two or more of them; a missing grade is allowed."),
    ]


def fleiss_blocks(fleiss: FleissResult, bar: float, level: int) -> list[Block]:
    kappa = fleiss.kappa
    if kappa.kappa is None:
        said = Styled(fleiss.reason or "undefined", "warn")
    else:
        said = Styled("ok", "good") if kappa.meets_bar else Styled(f"BELOW {bar}", "bad")
    table = Table(
        columns=(
            Column("annotators", align="left"),
            Column("n", help="items all graded"),
            Column("kappa"),
            Column("verdict", align="left"),
        ),
        rows=[[", ".join(fleiss.annotators), kappa.n, kappa_cell(kappa), said]],
    )
    return [Heading("Fleiss' kappa", level), table, Paragraph(f"95% CI: {fleiss.ci_method}")]


def version_label(version: JudgeVersionAgreement) -> str:
    """A version as a row names it: its id and identity (or why it has none), its labels."""
    return f"{describe_version(version.version, version.identity)}, {version.labels} labels"


def version_blocks(judge: JudgeAgreement, bar: float) -> list[Block]:
    """Which version of the judge gave its labels; with several, each one's agreement with
    the resolved human grade, so an upgrade that changed the judge is seen as one."""
    versions = judge.versions
    if len(versions) == 1:
        only = versions[0]
        return [] if only.version == UNKNOWN else [Paragraph(f"version {version_label(only)}")]
    if not versions:
        return []
    rows = [(version_label(v), v.resolved) for v in versions if v.resolved is not None]
    return [
        Paragraph(
            f"{judge.judge}'s labels come from {len(versions)} versions of the judge, each"
            " measured apart below on the items it labelled. They are not the same items, so a"
            " gap can also be the items': to compare two versions on equal footing, let each"
            " grade every item under a name of its own. `workbench eval` warns when one judged"
            " set mixes versions.",
            "warning",
        ),
        figures_table(
            f"{judge.judge} by version, against the resolved human grade", "version", rows, bar
        ),
    ]


def judge_blocks(
    judge: JudgeAgreement, scale: Sequence[int], bar: float, level: int
) -> list[Block]:
    """One model judge against each human and against the resolved human grade, then per
    version when it has several."""
    heading = Heading(f"Model judge {judge.judge} ({judge.labels} labels)", level)
    versions = version_blocks(judge, bar)
    if not judge.against:
        return [heading, *versions, Paragraph("No item shared with a human annotator.")]
    rows = [(f"{a.annotator} ({a.human_labels} human labels)", a.figures) for a in judge.against]
    resolved = judge.resolved
    resolved_label = (
        f"resolved human grade ({resolved.human_labels} resolved, {resolved.unresolved} unresolved)"
    )
    if resolved.figures.n:
        rows.append((resolved_label, resolved.figures))
    blocks: list[Block] = [heading, figures_table("", "against", rows, bar), *versions]
    for a in judge.against:
        name = f"{judge.judge} vs {a.annotator}"
        blocks += detail_blocks(name, a.figures, scale, a.annotator, judge.judge)
    name = f"{judge.judge} vs the resolved grade"
    return blocks + detail_blocks(name, resolved.figures, scale, "resolved", judge.judge)


def _grades(grades: Mapping[str, int]) -> str:
    return " ".join(f"{name}={grade}" for name, grade in sorted(grades.items()))


def disagreement_blocks(report: AgreementReport, show: int, level: int) -> list[Block]:
    found = report.disagreements
    blocks: list[Block] = [
        Heading(f"Disagreements between humans: {len(found)} (widest spread first)", level)
    ]
    if found:
        columns = (
            Column("query", align="left"),
            Column("doc", align="left"),
            Column("grades", align="left"),
            Column("spread"),
            Column("adjudicated"),
        )
        rows = [
            [d.query_id, d.doc_id, _grades(d.grades), d.spread, d.adjudicated] for d in found[:show]
        ]
        blocks.append(Table(columns, rows))
    if len(found) > show:
        blocks.append(Paragraph(f"... and {len(found) - show} more (--json lists all)"))
    return blocks


def agreement_blocks(
    report: AgreementReport, show: int = DISAGREEMENTS_SHOWN, level: int = 2
) -> list[Block]:
    """The report's blocks, its section headings at `level` (3 inside a larger report)."""
    scale = list(report.grade_scale)
    blocks: list[Block] = [
        Paragraph(
            f"Grade scale {', '.join(map(str, scale))}; relevant at grade >= "
            f"{report.rel_threshold}; bar kappa >= {report.bar}; no kappa on fewer than "
            f"{report.min_shared_items} shared items. 95% CIs: {report.ci_method}."
        )
    ]
    if not report.has_overlap:
        return [*blocks, no_overlap(report)]
    if report.pairs:
        rows = [(f"{p.annotators[0]} vs {p.annotators[1]}", p.figures) for p in report.pairs]
        blocks += [Heading("Human pairs", level), figures_table("", "pair", rows, report.bar)]
        for pair, (label, figures) in zip(report.pairs, rows, strict=True):
            blocks += detail_blocks(label, figures, scale, *pair.annotators)
    if report.fleiss is not None:
        blocks += fleiss_blocks(report.fleiss, report.bar, level)
    if report.alpha is not None and report.alpha.items:
        blocks += alpha_blocks(report.alpha, level)
    for judge in report.judges:
        blocks += judge_blocks(judge, scale, report.bar, level)
    return blocks + disagreement_blocks(report, show, level)


def agreement_document(report: AgreementReport, show: int = DISAGREEMENTS_SHOWN) -> Document:
    """`workbench agree`'s report, for any renderer."""
    return Document(TITLE, agreement_blocks(report, show))
