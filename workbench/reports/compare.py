"""The comparison report as a `Document`: what was tested and how it was corrected, then per
run a table (measure, both means, delta, p, Holm's p, verdict, wins/losses/ties, the queries
that moved most) and its notes (R@k under the estimated |Rel|, queries a run does not rank).
Data strings go in as plain text: the renderers own every escape."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.evaluation.comparison import CompareReport, Comparison
from workbench.core.measures.measure_key import parse_key
from workbench.core.measures.significance import RESOLUTION
from workbench.reports.document import (
    Bullets,
    Cell,
    Column,
    Document,
    Heading,
    Paragraph,
    Styled,
    Table,
    figure,
)
from workbench.reports.render import render_as
from workbench.reports.study_words import imputed_words

if TYPE_CHECKING:
    from workbench.core.evaluation.chunk_report import ChunkingReport

TEST_WORDS = {
    "randomization": "the paired randomization test, two-sided: each query's difference given "
    "a random sign, the mean difference set against that null",
    "paired-t": "Student's paired t test, two-sided",
    "wilcoxon": "Wilcoxon's signed-rank test, two-sided (zero differences dropped, ties averaged)",
}


def render(
    report: CompareReport,
    fmt: str = "table",
    width: int | None = None,
    chunking: ChunkingReport | None = None,
) -> str:
    """The report as `fmt`: 'table' (terminal text, fitted to `width` when given), 'markdown'
    or 'html'; `chunking`: the runs rank chunks (`--chunks`), whose rule it states."""
    doc = compare_document(report)
    if chunking is not None:
        from workbench.reports.chunk_figures import rule_blocks

        doc.add(Heading("chunks (--chunks)"), *rule_blocks(chunking))
    return render_as(doc, fmt, width)


def compare_document(report: CompareReport) -> Document:
    ks = ", ".join(map(str, report.ks))
    subtitle = (
        f"baseline {report.baseline}; {len(report.queries)} queries (every query of the qrels "
        f"with a judged relevant document; a query a run does not rank scores 0 there, as in "
        f"workbench eval); k = {ks}"
    )
    doc = Document("Comparison", subtitle=subtitle)
    doc.add(Paragraph(method_text(report)))
    for run in report.runs:
        mine = [c for c in report.comparisons if c.run == run]
        doc.add(Heading(f"{run} vs {report.baseline}"), run_table(report, run, mine))
        notes = run_notes(report, run, mine)
        if notes:
            doc.add(Bullets(notes, "note"))
    doc.add(Bullets(legend(report)))
    if report.audit:
        counts = "; ".join(f"{name}: {count.words}" for name, count in report.audit.items())
        doc.add(Paragraph(
            f"the audit found, per run, {counts}: workbench eval on the same files lists them",
            "warning",
        ))  # fmt: skip
    return doc


def method_text(report: CompareReport) -> str:
    """Which test, how many comparisons Holm's correction spans, and the threshold."""
    test = TEST_WORDS.get(report.test, report.test)
    if report.test == "randomization":
        test += (
            f" (every sign pattern when there are at most {report.permutations:,}, else "
            f"{report.permutations:,} drawn with seed {report.seed})"
        )
    family = "the one comparison" if report.family == 1 else f"all {report.family} comparisons"
    return (
        f"Test: {test}. p (Holm): adjusted by Holm's method over {family} (runs × measures); "
        f"a change is significant when its adjusted p is ≤ {report.alpha:g}."
    )


def p_text(p: float | None) -> str:
    """A p-value: four decimals, '<0.0001' below that, '-' when untested."""
    if p is None:
        return "-"
    return "<0.0001" if p < 0.00005 else f"{p:.4f}"


def signed(value: float | None) -> str:
    """A change with its sign ('0.000' when it rounds to none)."""
    if value is None:
        return "-"
    text = f"{value:+.3f}"
    return "0.000" if text in ("+0.000", "-0.000") else text


def verdict_cell(comparison: Comparison) -> Cell:
    verdict = comparison.verdict
    if verdict.startswith("worse"):
        text = "worse (|Rel| uncertain)" if comparison.drop_within_rel else verdict
        return Styled(text, "bad")
    if verdict.startswith("better"):
        return Styled(verdict, "good")
    return Styled("n.s." if verdict == "no significant change" else "-", "muted")


def run_table(report: CompareReport, run: str, comparisons: list[Comparison]) -> Table:
    # a narrow terminal keeps the change and its verdict first (the heading names both runs)
    columns = [
        Column("measure", "left"),
        Column(report.baseline, help="the baseline's mean", priority=4),
        Column(run, help="this run's mean", priority=5),
        Column("delta", help="run − baseline", priority=1),
        Column("p", help=f"two-sided p of the {report.test} test", priority=7),
        Column("p (Holm)", help="p adjusted by Holm's method over every run × measure", priority=3),
        Column("verdict", "left", priority=2),
        Column(
            "W/L/T", help="queries the run wins / loses / ties against the baseline", priority=6
        ),
        Column(
            "moved most",
            "left",
            help="queries with the largest change (run − baseline)",
            priority=8,
        ),
    ]
    rows: list[list[Cell]] = []
    for c in comparisons:
        moved = ", ".join(f"{m.qid} {signed(m.delta)}" for m in c.most_moved) or "-"
        rows.append([
            c.measure, c.baseline_mean, c.run_mean, signed(c.delta), p_text(c.test.p_value),
            p_text(c.p_adjusted), verdict_cell(c), f"{c.wins}/{c.losses}/{c.ties}", moved,
        ])  # fmt: skip
    return Table(columns, rows)


def run_notes(report: CompareReport, run: str, comparisons: list[Comparison]) -> list[str]:
    """R@k under the estimated |Rel|, queries the run does not rank, untested comparisons."""
    notes = [study_note(c) for c in comparisons if c.study_delta is not None]
    notes += [
        rel_note(report, c) for c in comparisons if c.rel is not None and c.study_delta is None
    ]
    missing = report.missing.get(run, [])
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        notes.append(
            f"{run} does not rank {len(missing)} of the {len(report.queries)} queries "
            f"({shown}): each scores 0 there, as in workbench eval (trec_eval -c)"
        )
    base_missing = report.missing.get(report.baseline, [])
    if base_missing:
        notes.append(
            f"the baseline {report.baseline} does not rank {len(base_missing)} of the queries: "
            "each scores 0 there"
        )
    for c in comparisons:
        if c.test.p_value is None:
            notes.append(f"{c.measure}: not tested ({c.test.method})")
    return notes


def study_note(c: Comparison) -> str:
    """The delta's study interval: what these queries' missing judgments leave open (the
    paired test's p is another question: whether the difference holds on other queries)."""
    delta = c.study_delta
    assert delta is not None
    if delta.low is None or delta.high is None or delta.estimate is None:
        left = ", ".join(delta.unmeasured[:5])
        return (f"{c.measure} study delta: none yet ({left} without an estimate of |Rel|); the "
                "delta above is against the judged set")  # fmt: skip
    verdict = (
        "the missing judgments cannot undo its sign"
        if delta.low > 0 or delta.high < 0
        else "the missing judgments leave its sign open"
    )
    return (
        f"{c.measure} study delta (every query's unjudged relevant drawn at once, 95%, over "
        f"{delta.queries} queries): {signed(delta.estimate)} [{signed(delta.low)}, "
        f"{signed(delta.high)}]{imputed_words(delta)}: {verdict}. The paired test asks another "
        "question: whether the difference would hold on other queries."
    )


def rel_note(report: CompareReport, c: Comparison) -> str:
    """What the coverage estimate's |Rel| does to an R@k comparison."""
    rel = c.rel
    assert rel is not None
    k = parse_key(c.measure).cutoff
    head = (
        f"{c.measure} against the judged set: {figure(c.baseline_mean)} → {figure(c.run_mean)} "
        f"(delta {signed(c.delta)})."
    )
    if not rel.measured:
        return head + f" No paired query has a |Rel| estimate ({report.coverage_source})."
    span = (
        f" Under the estimated |Rel| ({report.coverage_source}; over the {rel.measured} "
        f"measured queries, as workbench eval shows it): {report.baseline} "
        f"{_span(rel.baseline_low, rel.baseline_high)}, {c.run} {_span(rel.run_low, rel.run_high)};"
        f" as each query's |Rel| spans its 95% interval the delta of mean R@{k} spans "
        f"{signed(rel.delta_low)} to {signed(rel.delta_high)}"
    )
    if c.drop_within_rel:
        what = "regression" if c.regression else "drop"
        return head + span + f": this {what} is within the uncertainty of |Rel|."
    if (c.delta or 0.0) < 0:
        return head + span + ": a drop for every |Rel| in the intervals."
    return head + span + "."


def _span(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{figure(low)}–{figure(high)}"


def legend(report: CompareReport) -> list[str]:
    return [
        "delta: the run's mean − the baseline's; every measure is higher-is-better.",
        f"W/L/T: queries where the run scores higher / lower / the same (differences below "
        f"{RESOLUTION:g} are ties); moved most: the largest changes, run − baseline.",
        "verdict: better / worse when the adjusted p is ≤ alpha, else n.s.; "
        "'|Rel| uncertain': a drop of R@k that some |Rel| inside the coverage estimate's "
        "intervals undoes; 'by ranks': Wilcoxon found the run moved one way while the mean "
        "moved the other (many small changes against a few large ones): a regression only "
        "when the ranks went down.",
    ]
