"""The eval report as a `Document`: per run a table (per query, then the mean) whose columns
come from the measures' own display, the coverage gate's columns and legend when coverage is
known, the capped-recall note, the problems; the two-stage table, then the floors, last. Data
strings go in as plain text: the renderers (`workbench.reports.render`) own every escape."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workbench.core.audit.audit import Problem
from workbench.core.audit.audit_coverage import GateMean, GateRow
from workbench.core.audit.figures import (
    ceiling_help,
    mean_label,
    mean_words,
    problem_count,
    subset_mark,
)
from workbench.core.audit.judged_coverage import Coverage
from workbench.core.evaluation.eval_report import (
    EvalReport,
    RunResult,
    StagesResult,
    eval_report,
    exit_code,
)
from workbench.core.measures.metrics import CUTOFF_BLOCK, Measure, capped_recall
from workbench.core.model import Level, Status
from workbench.core.study.intervals import RunStudy
from workbench.reports.document import (
    Bullets,
    Cell,
    Column,
    Document,
    Heading,
    Interval,
    Paragraph,
    Style,
    Styled,
    Table,
    figure,
    percent,
)
from workbench.reports.render import markdown_cell, render_as
from workbench.reports.study_words import study_line

__all__ = ["eval_document", "eval_report", "exit_code", "markdown_cell", "render"]
# eval_report and exit_code live in workbench.core.evaluation.eval_report; markdown_cell in
# workbench.reports.render (re-exported for workbench/commands/coverage.py until it moves).


ASSUMED_COMPLETE = (
    "assumed complete (--assume-complete): every query's judged relevant documents are taken "
    "as its whole relevant set; nothing here measured it, so recall is as honest as that "
    "assumption"
)


def render(report: EvalReport, fmt: str = "table", width: int | None = None) -> str:
    """The report as `fmt`: 'table' (terminal text, fitted to `width` when given), 'markdown'
    or 'html'."""
    return render_as(eval_document(report), fmt, width)


def eval_document(report: EvalReport) -> Document:
    """A table per run, its legend, note and problems; the two-stage table last."""
    ks = report.ks
    subtitle = (
        f"k = {', '.join(map(str, ks))}, relevant = grade >= {report.rel_threshold}, "
        f"{report.gain} gain"
    )
    doc = Document("Evaluation", subtitle=subtitle)
    if report.assumed_complete:
        doc.add(Paragraph(ASSUMED_COMPLETE, "note"))
    columns = table_columns(report)
    for name, run in report.runs.items():
        doc.add(Heading(f"run {name}"), run_table(run, columns))
        if run.study is not None:
            doc.add(Paragraph(study_line(run), "note"))
        if report.coverage is not None:
            doc.add(Bullets(coverage_legend(report.coverage, report.k, run)))
        note = capped_note(run, report.k)
        if note:
            doc.add(Paragraph(note, "note"))
        doc.add(*problem_blocks([p for p in report.problems if p.run == name]))
    if report.two_stage is not None:
        doc.add(*two_stage_blocks(report.two_stage, report.problems))
    if report.chunking is not None:
        from workbench.reports.chunk_figures import chunk_blocks

        doc.add(*chunk_blocks(report.chunking, ks))
    judged_set = [p for p in report.problems if p.run is None]
    if judged_set:
        doc.add(Heading("the judgments"), *problem_blocks(judged_set))
    if report.floors:
        doc.add(*floor_blocks(report))
    return doc


def floor_blocks(report: EvalReport) -> list[Heading | Bullets]:
    """The floors asked for, last: each run's figure against each floor, failures first."""
    checks = sorted(report.floors, key=lambda check: check.passed)
    failed = sum(1 for check in checks if not check.passed)
    title = f"floors: {failed} of {len(checks)} not cleared"
    return [Heading(title), Bullets([check.message for check in checks])]


# --- the run table ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a run table: a query's figures, or (with `gate_mean`) the mean's."""

    values: Mapping[str, float | None]
    rel: float | None
    gate: GateRow | None = None
    gate_mean: GateMean | None = None
    queries: int = 0
    study: RunStudy | None = None
    """The run's study (on the mean line): its R@k interval replaces the per-query ends' mean."""


@dataclass(frozen=True, slots=True)
class TableColumn:
    """A run table's column and how it shows a line."""

    column: Column
    cell: Callable[[Line], Cell]


KEY_MEASURES = ("R", "ceiling", "judged", "P", "nDCG")
"""The measures a narrow terminal keeps first, at each cutoff in turn (the first cutoff's with
|Rel| and the recall under the estimated |Rel|): recall and its denominator's audit (the
ceiling, how much of the top k is judged), then precision and nDCG."""
DETAIL_MEASURES = ("pct_of_ceiling", "MRR", "bpref")
"""Measures the HTML report shows in its folded second table (with est. |Rel| and compl.)."""
REST = 100
"""The priority of the other columns: kept, left to right, only where there is room."""


def table_columns(report: EvalReport) -> list[TableColumn]:
    """|Rel|, then each cutoff's block (P, R, its ceiling and the share of it: the measures in
    `CUTOFF_BLOCK`), the gate's columns after the first block when coverage is known, then the
    other measures in their `column` order, each at every k. Each column's priority (what a
    narrow terminal keeps) follows `KEY_MEASURES`."""
    block = [m for m in report.measures if m.cutoff and m.column == CUTOFF_BLOCK]
    rest = sorted((m for m in report.measures if m not in block), key=lambda m: m.column)
    rel = Column("|Rel|", digits=2, help="judged relevant documents", priority=2)
    columns = [TableColumn(rel, _rel)]
    for i, k in enumerate(report.ks):
        columns += [measure_column(m, k, i) for m in block]
        if i == 0 and report.coverage is not None:
            columns += gate_columns(k)
    for m in rest:
        ks = report.ks if m.cutoff else report.ks[:1]
        columns += [measure_column(m, k, i) for i, k in enumerate(ks)]
    return columns


def column_priority(measure: Measure, cutoff_index: int) -> int:
    """The first cutoff's recall 1 (|Rel| 2, the recall under the estimated |Rel| 3), then its
    other key measures; each further cutoff's key measures after those; the rest last."""
    if measure.name not in KEY_MEASURES:
        return REST
    rank = KEY_MEASURES.index(measure.name)
    if cutoff_index == 0:
        return 1 if rank == 0 else 3 + rank
    return 10 * cutoff_index + rank


def _rel(line: Line) -> Cell:
    return line.rel


def measure_column(measure: Measure, k: int, cutoff_index: int = 0) -> TableColumn:
    """A measure's column at cutoff k (the `cutoff_index`-th asked for), headed and formatted
    as the measure says."""
    key = measure.key(k)

    def cell(line: Line) -> Cell:
        value = line.values.get(key)
        if measure.percent:
            return percent(value)
        return None if value is None else float(value)

    column = Column(
        measure.heading(k),
        help=measure.description,
        priority=column_priority(measure, cutoff_index),
        detail=measure.name in DETAIL_MEASURES,
    )
    return TableColumn(column, cell)


def run_table(run: RunResult, columns: Sequence[TableColumn]) -> Table:
    gate = run.gate
    rows = []
    for qid, scores in run.per_query.items():
        line = Line(scores.values, scores.rel, gate.rows.get(qid) if gate else None)
        rows.append([qid, *(c.cell(line) for c in columns)])
    mean = Line(
        run.mean.values, run.mean.rel, gate_mean=gate.mean if gate else None,
        queries=run.mean.queries, study=run.study,
    )  # fmt: skip
    footer = [[mean_label(run.mean.queries), *(c.cell(mean) for c in columns)]]
    return Table([Column("query", "left"), *(c.column for c in columns)], rows, footer=footer)


def capped_note(run: RunResult, k: int) -> str | None:
    """The capped-recall lesson, only when some query has |Rel| > k (else both agree); the
    figure a min(|Rel|, k) denominator would give only when it differs, as printed."""
    in_mean = run.mean_covers.queries
    over = [q for q in in_mean if run.per_query[q].rel > k]
    if not over:
        return None
    honest = capped = 0.0
    for q in in_mean:
        rel = run.per_query[q].rel
        recall = run.per_query[q].values.get(f"R@{k}")
        if recall is None:
            return None  # recall is not among the measures scored
        honest += recall
        capped += capped_recall(round(recall * rel), rel, k) or 0.0
    shown = ", ".join(over[:5]) + (" ..." if len(over) > 5 else "")
    note = (
        f"{len(over)} quer{'y has' if len(over) == 1 else 'ies have'} more relevant "
        f"documents than k = {k} ({shown}): R@{k} cannot reach 1 there (see ceil@{k})."
    )
    capped_text, honest_text = figure(capped / len(in_mean)), figure(honest / len(in_mean))
    if capped_text != honest_text:
        note += (
            f" Dividing by min(|Rel|, k) would report mean R@{k} {capped_text}, "
            f"not the honest {honest_text}."
        )
    return note


def problem_blocks(problems: Sequence[Problem], per_code: int = 5) -> list[Paragraph | Bullets]:
    """A count, then each problem (errors first, at most `per_code` of a level and code)."""
    if not problems:
        return []
    count = Paragraph(f"problems: {problem_count(problems).words}")
    shown: dict[tuple[str, str], int] = {}
    hidden: dict[tuple[str, str], int] = {}
    items: list[str] = []
    for p in sorted(problems, key=lambda p: p.level != Level.ERROR):
        key = (str(p.level), p.code)
        if shown.get(key, 0) >= per_code:
            hidden[key] = hidden.get(key, 0) + 1
            continue
        shown[key] = shown.get(key, 0) + 1
        where = f"{p.qid}: " if p.qid is not None else ""
        items.append(f"{p.level} [{p.code}] {where}{p.message}")
    items += [f"... and {n} more {level} [{code}] (all of them in --json)"
              for (level, code), n in hidden.items()]  # fmt: skip
    return [count, Bullets(items)]


# --- the coverage gate's columns -------------------------------------------------------------

MARKERS = {Status.COMPLETE: "  ", Status.INCOMPLETE: " !", Status.UNMEASURED: " ?"}
"""After the recall interval: ! the judged set is incomplete (the gate), ? no usable estimate."""
STYLES: dict[Status, Style] = {Status.COMPLETE: "good", Status.INCOMPLETE: "warn"}
"""How a status is shown where styles show (HTML); the others are muted."""


def gate_columns(k: int) -> list[TableColumn]:
    """Recall@k under the estimated |Rel| (interval and marker), the estimate, completeness
    and status; on the mean line, their means over the measured queries and a status count."""
    recall = Column(
        f"R@{k} (est. |Rel|)", help="R@k with |Rel| in the estimate's 95% interval", priority=3
    )
    estimate = Column(
        "est. |Rel|", help="estimated |Rel| [95% interval]", priority=REST, detail=True
    )
    completeness = Column("compl.", help="judged relevant / est. |Rel|", priority=REST, detail=True)
    return [
        TableColumn(recall, lambda line: _recall_cell(line, k)),
        TableColumn(estimate, _estimate_cell),
        TableColumn(completeness, _completeness_cell),
        TableColumn(Column("coverage", "left", priority=9), _status_cell),
    ]


def _span(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{figure(low)}–{figure(high)}"


def _recall_cell(line: Line, k: int) -> Cell:
    if line.gate_mean is not None:
        study = line.study.intervals.get(f"R@{k}") if line.study is not None else None
        if study is not None and study.low is not None and study.high is not None:
            return f"{_span(study.low, study.high)} (study)"
        mean = line.gate_mean
        recall = mean.recall[k]
        measured = mean.measured
        return _span(recall.low, recall.high) + subset_mark(measured, line.queries)
    if line.gate is None:
        return None
    status = line.gate.coverage.status
    recall = line.gate.recall[k]
    text = _span(recall.low, recall.high) + MARKERS.get(status, " ?")
    return Styled(text, STYLES.get(status, "muted"))


def _estimate_cell(line: Line) -> Cell:
    info = line.gate.coverage if line.gate is not None else None
    if info is None or None in (info.est_rel, info.est_rel_low, info.est_rel_high):
        return None
    return Interval(info.est_rel, info.est_rel_low, info.est_rel_high, digits=1)


def _completeness_cell(line: Line) -> Cell:
    subset = ""
    if line.gate_mean is not None:
        value, low = line.gate_mean.completeness, line.gate_mean.completeness_low
        subset = subset_mark(line.gate_mean.measured, line.queries)
    elif line.gate is not None:
        value, low = line.gate.coverage.completeness, line.gate.coverage.completeness_low
    else:
        return None
    if value is None:
        return None
    return percent(value) + (f" (≥{percent(low)})" if low is not None else "") + subset


def _status_cell(line: Line) -> Cell:
    if line.gate_mean is not None:
        return f"{line.gate_mean.statuses[Status.COMPLETE]}/{line.queries} complete"
    if line.gate is None:
        return None
    status = line.gate.coverage.status
    return Styled(str(status), STYLES.get(status, "muted"))


def coverage_legend(coverage: Coverage, k: int, run: RunResult | None = None) -> list[str]:
    """The coverage columns' legend; with `run`, what its mean line covers, and the study line
    only where the run has one."""
    gate = coverage.complete_at
    bound = f"< {gate:g}" if gate is not None else "below the threshold"
    study = ""
    if run is not None and run.study is not None:
        study = (
            " On the mean line, (study): the mean's joint 95% interval (the study line below "
            "the table)."
        )
    covers = ""
    if run is not None:
        measured = run.gate.mean.measured if run.gate is not None else None
        covers = " " + mean_words(run.mean.queries, measured)
    return [
        f"R@{k} (est. |Rel|): recall@{k} with |Rel| anywhere in the estimate's 95% interval, "
        f"unjudged documents in the top {k} counted as non-relevant (coverage from "
        f"{coverage.source}).",
        f"R@{k} against the judged set is an upper bound when its top {k} is fully judged "
        f"(judged@{k} 100%): relevant documents nobody judged only lower true recall, but each "
        f"unjudged one in the top {k} that is relevant would raise it.",
        "est. |Rel|: estimate [95% interval]. "
        f"compl.: judged relevant / est. |Rel| (≥ its 95% lower bound).{study}",
        f"ceil@{k}: {ceiling_help(estimated=False)}.",
        f"! incomplete: completeness lower bound {bound}, --strict fails on it. ? unmeasured, "
        "or a summary that does not match these qrels: --strict fails on it too (its problem "
        f"says what would measure it).{covers}",
    ]


# --- two stages ------------------------------------------------------------------------------


def two_stage_blocks(
    staged: StagesResult, problems: Sequence[Problem]
) -> list[Heading | Table | Paragraph | Bullets]:
    n = staged.keep_n
    fetch = staged.fetch_k if staged.fetch_k is not None else "depth"
    title = f"two stages: {staged.stage1} (fetch-K = {fetch}) -> {staged.stage2} (keep-n = {n})"
    columns = [
        Column("query", "left"),
        Column("|Rel|"),
        Column("K"),
        Column("fetch-recall@K", help="relevant in stage 1's top K / |Rel|"),
        Column(f"keep-recall@{n}", help=f"relevant in stage 2's top {n} / |Rel|"),
        Column("dropped by stage 2", "left"),
    ]
    rows: list[list[Cell]] = [
        [qid, r.rel, r.fetch_k, r.fetch_recall, r.keep_recall, " ".join(r.dropped) or "-"]
        for qid, r in staged.result.rows.items()
    ]
    mean = staged.result.mean
    footer: list[list[Cell]] = [
        [f"mean ({mean.queries} q)", "", "", mean.fetch_recall, mean.keep_recall, ""]
    ]
    mine = [p for p in problems if p.run == staged.label]
    return [Heading(title), Table(columns, rows, footer=footer), *problem_blocks(mine)]
