"""The coverage report as a `Document`: the summary, a table per query and per system, the
completeness of each query against the threshold, and each query's discovery curve."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from workbench.core.adaptive.rest import HEAVY_REST
from workbench.core.audit.figures import ceiling_help, completeness_words, est_rel_words
from workbench.core.coverage import KS, CoverageReport, QueryFigures
from workbench.core.coverage.summary import round_figure
from workbench.core.coverage.to_go import to_go
from workbench.core.display import visible
from workbench.core.model import Status
from workbench.reports.document import (
    Bullets,
    Column,
    Curve,
    Document,
    Heading,
    Interval,
    IntervalChart,
    IntervalRow,
    Paragraph,
    SmallMultiples,
    Style,
    Styled,
    Table,
    figure,
)

if TYPE_CHECKING:
    from workbench.core.adaptive.saving import JudgeSaving
    from workbench.core.study import Plan

SHARE_DIGITS = 2
"""Completeness, ceilings and judged@k: two decimals are all a reader acts on."""
STATUS_STYLE: dict[str, Style] = {
    Status.COMPLETE: "good",
    Status.INCOMPLETE: "warn",
    Status.UNMEASURED: "muted",
}
QUERY_COLUMNS = [
    Column("query", "left"),
    Column("pool", help="items pooled from the systems' top results", priority=9),
    Column("judged", help="items graded (pool, samples and any other judged doc)", priority=8),
    Column("rel", help="judged relevant (grade >= the relevance threshold)", priority=5),
    Column(
        "est|Rel|",
        digits=0,
        priority=4,
        help="estimated relevant documents in the whole corpus, with its 95% interval",
    ),
    Column(
        "complete",
        digits=SHARE_DIGITS,
        priority=2,
        help="judged relevant / est |Rel|: the share of the relevant set you have",
    ),
    Column(
        "low",
        digits=SHARE_DIGITS,
        priority=3,
        help="lower end of its 95% interval: the figure the status uses",
    ),
    Column("ceiling est.", digits=SHARE_DIGITS, priority=7, help=ceiling_help(estimated=True)),
    Column(
        "last¼",
        digits=SHARE_DIGITS,
        priority=10,
        help="share of relevant found in the last quarter of judgments (high: keep going)",
    ),
    Column(
        "status",
        "left",
        priority=1,
        help="complete (low >= threshold), incomplete, or unmeasured (no judged sample)",
    ),
]
TO_GO = Column(
    "to go",
    priority=6,
    help="adaptive queue: '≈ N', the judgments the model expects this query still needs before its "
    "lower bound reaches the threshold; 'N (all)': judging its whole frame certifies it; '> N': "
    "more than the N its frame has left, as the model sees it; '≈ N to estimate': judgments "
    "until it has an estimate; '-': certified",
)
STATIC_TO_GO = Column(
    "to go",
    priority=6,
    help="'≈ N to estimate': judgments in queue order until enough of its sampled passages are "
    "judged for an estimate; 'needs --sample': no sampled passage left to judge (pool again "
    "with --sample N); '-': measured",
)
SYSTEM_COLUMNS = [
    Column("system", "left"),
    *(Column(f"judged@{k}", digits=SHARE_DIGITS, help=f"share of its top {k} judged") for k in KS),
    Column("relevant found", help="relevant documents it retrieved within the pool depth"),
    Column("unique relevant", help="relevant documents no other system found (Zobel)"),
]
ADAPTIVE_METHOD = (
    "Estimate (adaptive queue): the candidates (every system's top 100, or as pooled with "
    "--candidate-depth) by the model-assisted Des Raj estimator from draws whose probabilities "
    "were recorded when drawn, valid however the queue chose; the rest of the corpus from a "
    "random reserve, pooled across queries (Gamma-Poisson). The candidates count as the pool."
)
METHOD = (
    "Estimate: stratified random samples from outside the pool (by best rank) are judged blind "
    "among pool items; a relevance-vs-rank model shared by all queries, with a level and a "
    "steepness per query, gives each query's posterior for the relevant documents left unjudged."
)


def coverage_document(
    report: CoverageReport,
    plan: Plan | None = None,
    judge: JudgeSaving | None = None,
    relevant: str = "",
) -> Document:
    """The whole report, for render_text, render_markdown or render_html; an adaptive store's
    study block (`plan`) first: the decision comes before the queries' detail; the judge
    stored with the study and what it saved (`judge`) closes the summary. `relevant`: which
    grades count as relevant, in words (`display.relevant_wording`), said under the title."""
    rule = report.rule
    document = Document(
        "Coverage report",
        subtitle=f"k = {report.k}; a query is complete when the {rule.level:.0%} lower bound of "
        f"its completeness reaches {rule.complete_at:g}."
        + (f" Counted as {relevant}." if relevant else ""),
    )
    if plan is not None:
        document.add(Heading("Study"), Bullets(study_lines(plan)))
    summary = summary_lines(report)
    if judge is not None:
        summary.append(judge_line(judge))
    document.add(Heading("Summary"), Bullets(summary))
    if not report.queries:
        return document.add(Paragraph("No queries in the store yet.", "note"))
    adaptive = report.policy == "adaptive"
    to_go_column = adaptive or any(r.status == Status.UNMEASURED for r in report.queries.values())
    columns = QUERY_COLUMNS
    if to_go_column:
        columns = [*QUERY_COLUMNS[:-1], TO_GO if adaptive else STATIC_TO_GO, QUERY_COLUMNS[-1]]
    rows = [_query_row(qid, row, adaptive, to_go_column) for qid, row in report.queries.items()]
    document.add(Heading("Per query"), Table(columns, rows))
    document.add(Heading("Per system"), _system_table(report))
    document.add(_completeness_chart(report))
    if any(row.discovery for row in report.queries.values()):
        document.add(_discovery_curves(report))
    document.add(
        Heading("Columns"),
        Bullets([f"{c.header}: {c.help}" for c in columns if c.help]),
        Paragraph(ADAPTIVE_METHOD if adaptive else METHOD),
    )
    return document


def study_lines(plan: Plan) -> list[str]:
    """The study against its target: each pooled run's mean with its joint 95% interval, then
    reached, or the judgments to go and where, or what it waits on."""
    key = plan.target.key
    runs = []
    for name, interval in plan.runs.items():
        if interval.low is None or interval.high is None or interval.estimate is None:
            runs.append(f"{visible(name, one_line=True)} -")
        else:
            runs.append(
                f"{visible(name, one_line=True)} {figure(interval.estimate)} "
                f"[{figure(interval.low)}, {figure(interval.high)}]"
            )
    queries = max((i.queries for i in plan.runs.values()), default=0)
    plural = "y" if queries == 1 else "ies"
    over = f" (the mean over {queries} quer{plural} with a relevant passage found)"
    lines = [f"study: {key} " + ", ".join(runs) + over if runs else f"study: {key}: no pooled run"]
    width = f"target width {plan.target.width:g}"
    if plan.reached:
        lines.append(f"{width}: reached (every pooled run's {key} interval is at most that wide)")
    elif plan.unmeasured:
        left = ", ".join(visible(q, one_line=True) for q in plan.unmeasured[:5])
        more = f" and {len(plan.unmeasured) - 5} other queries" if len(plan.unmeasured) > 5 else ""
        first = "" if plan.to_first is None else f"; the first figure in ≈ {plan.to_first:,} "
        first += "judgments in the app's order" if first else ""
        lines.append(
            f"{width}: not yet measurable: {left}{more} "
            f"{'has' if len(plan.unmeasured) == 1 else 'have'} no estimate of |Rel| yet "
            f"(keep judging: the queue measures each query in turn{first})"
        )
    elif plan.to_target is None:
        lines.append(
            f"{width}: out of reach even with every passage of the frames judged, as far as "
            "the model sees; a wider target (coverage --target) can be reached"
        )
    else:
        where = ", ".join(visible(q, one_line=True) for q in plan.next)
        lines.append(
            f"{width}: ≈ {plan.to_target:,} more human judgments ({plan.judged:,} so far), most "
            f"of them on {where}"
        )
    lines.append(
        "the interval is the mean's over every query's unjudged relevant passages drawn at "
        "once (shared parameters drawn once per draw), not the per-query intervals' ends"
    )
    return lines


def judge_line(judge: JudgeSaving) -> str:
    """The judge covariate's cost as a figure: the human judgments so far beside the about M
    the no-judge design would need for the same widths (`core.adaptive.saving`)."""
    version = visible(judge.version, one_line=True) if judge.version else "no recorded version"
    named = f"judge {visible(judge.name, one_line=True)} (version {version})"
    saving = judge.saving
    if saving is None or saving.queries == 0:
        return f"{named}: no query has an estimate yet, so what it saves cannot be told."
    plural = "y" if saving.queries == 1 else "ies"
    if saving.saved > 0:
        effect = f"saves ≈ {saving.saved:,}"
    elif saving.saved < 0:
        effect = f"costs ≈ {-saving.saved:,} more: it helps less than rank and text alone"
    else:
        effect = "no saving"
    return (
        f"{named}: {saving.judged:,} human judgments so far (the {saving.queries} quer{plural} "
        f"with an estimate); without the judge the same width would need about "
        f"{saving.without:,} ({effect}); an approximation: the no-judge model's variance on the "
        "same judgments and draws, taken to fall as 1 / judgments."
    )


def summary_lines(report: CoverageReport) -> list[str]:
    """The summary: statuses, then totals and mean completeness; on an adaptive store, how much
    of the relevant set lies outside the candidates (the rest's estimate, the least certain)."""
    s = report.summary
    lines = [
        f"{s.queries} queries: {s.complete} complete, {s.incomplete} incomplete, "
        f"{s.unmeasured} unmeasured.",
        f"judged {s.judged}, relevant {s.relevant}; {est_rel_words(s)}; "
        f"{completeness_words(s, SHARE_DIGITS)}.",
    ]
    share = report.outside_candidates
    if report.policy == "adaptive" and share is not None:
        # Down, as the rule reads it: 0.395 shown as 40% without the 40% note reads as a bug.
        line = (
            f"outside every system's candidates (the rest of the corpus): an estimated "
            f"{math.floor(share * 100)}% of the relevant documents."
        )
        if share == 0:
            line = (
                "outside every system's candidates (the rest of the corpus): no judged reserve "
                "passage is relevant yet, so its share cannot be told from none."
            )
        elif share >= HEAVY_REST:
            line += (
                f" The systems miss much (from {HEAVY_REST:.0%}), and the intervals allow for "
                "it: a query's rest may differ more from what its candidates suggest, which "
                "widens them (on cisi, 45% outside: |Rel| inside the interval for 95% of "
                "queries, median width 1.8 x |Rel|)."
            )
        lines.append(line)
    return lines


def _query_row(
    qid: str, row: QueryFigures, adaptive: bool = False, to_go_column: bool = False
) -> list:
    cells = [
        qid,
        row.pool,
        row.judged,
        row.relevant,
        Interval(row.est_rel, row.est_rel_low, row.est_rel_high, digits=0),
        row.completeness,
        # Down, as the status reads it: 0.7996 shown as 0.80 beside "incomplete" reads as a bug.
        round_figure(row.completeness_low, SHARE_DIGITS, "down"),
        row.ceiling_est,
        row.last_quarter_share,
        Styled(str(row.status), STATUS_STYLE.get(row.status, "")),
    ]
    if to_go_column:
        cell = to_go(row, adaptive).cell
        cells.insert(-1, None if cell == "–" else cell)
    return cells


def _system_table(report: CoverageReport) -> Table | Paragraph:
    if not report.summary.systems:
        return Paragraph("No system has pooled for these queries.", "note")
    rows = [
        [name, *(f.judged_at.get(k) for k in KS), f.relevant, f.unique_relevant]
        for name, f in report.summary.systems.items()
    ]
    return Table(SYSTEM_COLUMNS, rows)


def _completeness_chart(report: CoverageReport) -> IntervalChart:
    rows = [
        IntervalRow(qid, r.completeness, r.completeness_low, r.completeness_high, str(r.status))
        for qid, r in report.queries.items()
    ]
    threshold = report.rule.complete_at
    return IntervalChart(
        f"Completeness per query, with {report.rule.level:.0%} intervals",
        rows,
        axis_label="completeness: judged relevant / estimated |Rel|",
        threshold=threshold,
        threshold_label=f"complete at {threshold:g}",
    )


def _discovery_curves(report: CoverageReport) -> SmallMultiples:
    curves = [
        Curve(qid, r.discovery, highlight=r.status == Status.INCOMPLETE, note=str(r.status))
        for qid, r in report.queries.items()
        if r.discovery
    ]
    return SmallMultiples(
        "Discovery curves",
        curves,
        x_label="judgments, in queue order",
        y_label="relevant found",
        legend=[("incomplete", True), ("complete or unmeasured", False)],
    )
