"""The overview's coverage panel: per query, the completeness status and estimate with its
interval, and the discovery curve (relevant found against judgments, in queue order)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from workbench.core.audit.figures import completeness_words, est_rel_words
from workbench.core.coverage import CoverageReport, QueryFigures
from workbench.core.coverage.summary import round_figure
from workbench.core.coverage.to_go import to_go
from workbench.core.display import visible
from workbench.reports.document import shared_top
from workbench.reports.render import interval_bar, sparkline
from workbench.tui.literal import literal, literal_plain

STATUS_STYLE = {"complete": "green", "incomplete": "yellow", "unmeasured": "dim"}


def _share(value: float | None, direction: str = "nearest") -> str:
    """Two decimals; a lower bound `direction` "down" (never shown reaching a threshold it
    misses)."""
    return "  –" if value is None else f"{round_figure(value, 2, direction):.2f}"


def _count(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


@dataclass(frozen=True)
class _Column:
    """One column of the per-query lines: its heading, its cell (`width` cells wide) and what
    the legend says of it ("" for nothing)."""

    heading: str
    width: int
    cell: Callable[[QueryFigures], Text]
    legend: str = ""


def _fit_lines(pieces: list[Text], width: int | None, sep: str = " │ ") -> list[Text]:
    """The pieces joined by `sep`, a new line wherever the next would pass `width`."""
    lines: list[Text] = []
    for piece in pieces:
        if lines and (width is None or lines[-1].cell_len + len(sep) + piece.cell_len <= width):
            lines[-1].append(sep)
            lines[-1].append_text(piece)
        else:
            lines.append(piece.copy())
    return lines


def _summary(report: CoverageReport, rel_threshold: int) -> list[Text]:
    """The summary's pieces. The adaptive queue's: queries certified and to go, with the
    judgments the model expects they need, then what was judged (never against its frame,
    which is what the queue may serve, not what it will)."""
    summary, queries = report.summary, report.queries
    relevant = f"{summary.relevant} relevant (grade ≥ {rel_threshold})"
    if report.policy == "adaptive":
        to_go = summary.queries - summary.complete
        pieces = [Text(f"{summary.complete} of {summary.queries} queries certified", style="bold")]
        more = [row.more_to_certify for row in queries.values() if row.more_to_certify is not None]
        if not more:
            pieces.append(Text(f"{to_go} to go"))
        elif len(more) == to_go:
            pieces.append(Text(f"{to_go} to go: ≈ {sum(more)} more judgments"))
        else:
            pieces.append(Text(f"{to_go} to go, ≈ {sum(more)} more judgments for {len(more)}"))
        pieces.append(Text(f"{summary.judged} judged, {relevant}"))
    else:
        items = sum(row.pool + row.sampled for row in queries.values())
        pieces = [
            Text(
                f"{summary.complete} complete · {summary.incomplete} incomplete · "
                f"{summary.unmeasured} unmeasured",
                style="bold",
            ),
            Text(f"judged {summary.judged}/{items} (pool + sample), {relevant}"),
        ]
    # `coverage`'s own words (core.figures), naming the measured queries when not all
    pieces.append(Text(est_rel_words(summary)))
    if summary.measured:
        pieces.append(Text(completeness_words(summary)))
    return pieces


def study_words(plan: Any) -> str:
    """The study against its target in one line (the overview's bottom border): the widest
    pooled run's mean with its joint interval, then reached or the judgments to go."""
    key = plan.target.key
    width = f"target width {plan.target.width:g}"
    if plan.unmeasured:
        n = len(plan.unmeasured)
        return f"study {key}: {width}, {n} quer{'y' if n == 1 else 'ies'} without an estimate yet"
    name, i = max(plan.runs.items(), key=lambda item: item[1].width or 0.0)
    figure = f"{visible(name, one_line=True)} {i.estimate:.3f} [{i.low:.3f}, {i.high:.3f}]"
    if plan.reached:
        verdict = "reached"
    elif plan.to_target is None:
        verdict = "out of the frames' reach"
    else:
        most = ", ".join(visible(q, one_line=True) for q in list(plan.next)[:3])
        verdict = f"≈ {plan.to_target:,} more, most on {most}"
    return f"study {key} {figure}; {width}: {verdict}"


# long: the columns as small closures over the report, in the order shown
def _columns(report: CoverageReport, bar_width: int) -> list[_Column]:
    """Every column after the query's, most useful first: where the query stands (its status,
    its completeness interval and, on the adaptive queue, the judgments it still needs), then
    what was found, the discovery curve and the interval drawn as a bar."""
    adaptive = report.policy == "adaptive"
    top = shared_top(row.discovery for row in report.queries.values())

    def status(row: QueryFigures) -> Text:
        word = "certified" if adaptive and row.status == "complete" else str(row.status)
        return Text(f"{word:<10}", style=STATUS_STYLE.get(row.status, ""))

    def interval(row: QueryFigures) -> Text:
        low, high = row.completeness_low, row.completeness_high
        bounds = "" if low is None else f"[{_share(low, 'down')}–{_share(high, 'up')}]"
        return Text(f"{_share(row.completeness):>4} {bounds:<13}")

    def to_certify(row: QueryFigures) -> Text:
        """The query's 'to go' (`core.coverage.to_go`, as the status line words it)."""
        return Text(f"{to_go(row, adaptive).cell:>16}", style="bold")

    def found(row: QueryFigures) -> Text:
        rel = f"{row.relevant}/{_count(row.est_rel)}"
        if row.est_rel_low is not None:
            rel += f" [{_count(row.est_rel_low)}–{_count(row.est_rel_high)}]"
        return Text(f"{rel:<16}")

    def discovery(row: QueryFigures) -> Text:
        curve = list(row.discovery)
        text = Text(f"{sparkline(curve, 16, top) or '(nothing judged)':<16}", style="cyan")
        text.append(f" {len(curve):>6}")
        return text

    def bar(row: QueryFigures) -> Text:
        low, high = row.completeness_low, row.completeness_high
        return Text(interval_bar(row.completeness, low, high, bar_width))

    columns = [
        _Column("status", 10, status),
        _Column("est. [95% interval]", 19, interval),
    ]
    if adaptive:
        legend = "to go: judgments to certify (> N: more than it has left)"
        columns.append(_Column(f"{'to go':>16}", 16, to_certify, legend))
    return [
        *columns,
        _Column(
            "found/|Rel| est.",
            16,
            found,
            "found/|Rel| est.: relevant judged / estimated total",
        ),
        _Column(
            f"{'discovery':<17}{'judged':>6}",
            23,
            discovery,
            "discovery: relevant found vs judgments, queue order",
        ),
        _Column(
            f"{'completeness 0→1':<{bar_width}}",
            bar_width,
            bar,
            "█ estimate ▒ 95% interval · beyond",
        ),
    ]


GAP = "  "


def render_coverage(
    report: CoverageReport,
    bar_width: int = 16,
    rel_threshold: int = 1,
    width: int | None = None,
) -> Text:
    """The report as panel text: a summary, then one line per query. Within `width` cells
    (None: no limit) the summary wraps between its parts and the per-query lines keep the
    columns that fit, most useful first (`_columns`)."""
    queries = report.queries
    text = Text()
    if not queries:
        text.append("No queries in the store yet.", style="dim")
        return text
    for line in _fit_lines(_summary(report, rel_threshold), width):
        text.append_text(line)
        text.append("\n")
    names = {qid: visible(qid, one_line=True) for qid in queries}
    name_width = min(max(5, *(len(name) for name in names.values())), 14)
    used = name_width
    columns = []
    for column in _columns(report, bar_width):
        if width is None or used + len(GAP) + column.width <= width:
            columns.append(column)
            used += len(GAP) + column.width
    heading = GAP.join([f"{'query':<{name_width}}", *(f"{c.heading:<{c.width}}" for c in columns)])
    text.append(heading.rstrip() + "\n", style="dim")
    for qid, row in queries.items():
        text.append(f"{names[qid][:name_width]:<{name_width}}")
        for column in columns:
            text.append(GAP)
            text.append_text(column.cell(row))
        text.rstrip()
        text.append("\n")
    legend = [Text(c.legend, style="dim") for c in columns if c.legend]
    for number, line in enumerate(_fit_lines(legend, width)):
        if number:
            text.append("\n")
        text.append_text(line)
    return text


class CoverageReady(Message):
    """The coverage report, computed off the UI thread."""

    def __init__(self, report: CoverageReport):
        super().__init__()
        self.report = report


class CoverageFailed(Message):
    """The report could not be computed; `reason` says why."""

    def __init__(self, reason: str):
        super().__init__()
        self.reason = reason


class CoveragePanel(VerticalScroll, can_focus=False):
    """Shows 'computing…' until a report (or the reason there is none) arrives; the report is
    fitted to the panel's width, again on every resize."""

    DEFAULT_CSS = """
    CoveragePanel { height: 1fr; border: round $secondary; padding: 0 1;
                    scrollbar-gutter: stable; }
    CoveragePanel > Static { width: 1fr; }
    """

    def __init__(self, rel_threshold: int = 1, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.rel_threshold = rel_threshold
        self.report: CoverageReport | None = None
        """The report shown (None until it arrives)."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("computing coverage…", style="dim italic"), id="coverage-text")

    def on_mount(self) -> None:
        self.border_title = "coverage: how complete the judged relevant set is"

    def on_resize(self) -> None:
        if self.report is not None:
            self._render_report()

    def show_report(self, report: CoverageReport) -> None:
        self.report = report
        if report.study is not None:
            self.border_subtitle = literal_plain(study_words(report.study))
        self._render_report()

    def _render_report(self) -> None:
        assert self.report is not None
        width = self.scrollable_content_region.width or None
        self.query_one("#coverage-text", Static).update(
            render_coverage(self.report, rel_threshold=self.rel_threshold, width=width)
        )

    def show_failure(self, reason: str) -> None:
        self.query_one("#coverage-text", Static).update(
            literal(f"coverage unavailable: {reason}", "yellow")
        )
