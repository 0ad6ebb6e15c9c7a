"""The overview's coverage panel: per query, the completeness status and estimate with its
interval, and the discovery curve (relevant found against judgments, in queue order)."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from workbench.core.coverage import CoverageReport
from workbench.core.coverage.store_summary import round_figure
from workbench.core.display import visible
from workbench.reports.render import interval_bar, sparkline
from workbench.tui.literal import literal

STATUS_STYLE = {"complete": "green", "incomplete": "yellow", "unmeasured": "dim"}


def _share(value: float | None, direction: str = "nearest") -> str:
    """Two decimals; a lower bound `direction` "down" (never shown reaching a threshold it
    misses)."""
    return "  –" if value is None else f"{round_figure(value, 2, direction):.2f}"


def _count(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def render_coverage(report: CoverageReport, bar_width: int = 16, rel_threshold: int = 1) -> Text:
    """The report as panel text: a summary line, then one line per query."""
    queries = report.queries
    summary = report.summary
    text = Text()
    if not queries:
        text.append("No queries in the store yet.", style="dim")
        return text
    text.append(
        f"{summary.complete} complete · {summary.incomplete} incomplete · "
        f"{summary.unmeasured} unmeasured",
        style="bold",
    )
    items = sum(row.pool + row.sampled for row in queries.values())
    frame = "the queue's frame" if report.policy == "adaptive" else "pool + sample"
    text.append(
        f" │ judged {summary.judged}/{items} ({frame}),"
        f" {summary.relevant} relevant (grade ≥ {rel_threshold})"
    )
    if summary.mean_completeness is not None:
        text.append(f" │ mean completeness {summary.mean_completeness:.2f}")
    text.append("\n")
    names = {qid: visible(qid, one_line=True) for qid in queries}
    name_width = min(max(len(name) for name in names.values()), 14)
    text.append(
        f"{'query':<{name_width}}  {'status':<10}  {'completeness 0→1':<{bar_width}}"
        f"  {'est.':>4} {'[95% interval]':<14}  {'found/|Rel| est.':<16}  discovery\n",
        style="dim",
    )
    for qid, row in queries.items():
        text.append(f"{names[qid][:name_width]:<{name_width}}  ")
        text.append(f"{row.status:<10}", style=STATUS_STYLE.get(row.status, ""))
        text.append("  ")
        text.append(
            interval_bar(row.completeness, row.completeness_low, row.completeness_high, bar_width)
        )
        low, high = row.completeness_low, row.completeness_high
        interval = "" if low is None else f"[{_share(low, 'down')}–{_share(high, 'up')}]"
        text.append(f"  {_share(row.completeness):>4} {interval:<14}  ")
        rel = f"{row.relevant}/{_count(row.est_rel)}"
        if row.est_rel_low is not None:
            rel += f" [{_count(row.est_rel_low)}–{_count(row.est_rel_high)}]"
        text.append(f"{rel:<16}  ")
        curve = list(row.discovery)
        text.append(sparkline(curve, 16) or "(nothing judged)", style="cyan")
        text.append(f" {len(curve)} judged")
        if report.policy == "adaptive" and row.more_to_certify is not None:
            text.append(f" · ≈ {row.more_to_certify} more to certify", style="bold")
        text.append("\n")
    text.append(
        "█ estimate ▒ 95% interval · beyond │ found/|Rel| est.: relevant judged / estimated total"
        " │ discovery: relevant found vs judgments, queue order",
        style="dim",
    )
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
    """Shows 'computing…' until a report (or the reason there is none) arrives."""

    DEFAULT_CSS = """
    CoveragePanel { height: 1fr; border: round $secondary; padding: 0 1; }
    CoveragePanel > Static { width: auto; }
    """

    def __init__(self, rel_threshold: int = 1, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.rel_threshold = rel_threshold

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("computing coverage…", style="dim italic"), id="coverage-text")

    def on_mount(self) -> None:
        self.border_title = "coverage: how complete the judged relevant set is"

    def show_report(self, report: CoverageReport) -> None:
        self.query_one("#coverage-text", Static).update(
            render_coverage(report, rel_threshold=self.rel_threshold)
        )

    def show_failure(self, reason: str) -> None:
        self.query_one("#coverage-text", Static).update(
            literal(f"coverage unavailable: {reason}", "yellow")
        )
