"""The judging screen's read-only panels: the query, the passage, the provenance, the status."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from workbench.model import Doc, PoolEntry, Query
from workbench.queue import Progress
from workbench.tui.highlight import highlight


class QueryPanel(VerticalScroll, can_focus=False):
    """The query and its narrative (what counts as relevant); scrolls when the narrative is long."""

    DEFAULT_CSS = """
    QueryPanel { height: auto; max-height: 35%; padding: 0 1; border: round $primary; }
    QueryPanel > Static { width: 1fr; }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="query-text")

    def show(self, query: Query) -> None:
        text = Text()
        text.append(f"{query.query_id}  ", style="dim")
        text.append(query.text, style="bold")
        if query.narrative:
            text.append("\n")
            text.append(query.narrative, style="italic")
        self.query_one(Static).update(text)
        self.scroll_home(animate=False)


class PassageView(VerticalScroll):
    """The passage (title + text), literal, query terms highlighted, scrollable."""

    DEFAULT_CSS = """
    PassageView { height: 1fr; padding: 0 1; border: round $secondary; }
    PassageView > Static { width: 1fr; }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="passage-text")

    def show(self, doc: Doc | None, doc_id: str, terms: frozenset[str]) -> None:
        self.border_title = doc_id
        body = self.query_one("#passage-text", Static)
        if doc is None:
            body.update(Text(f"(passage {doc_id} is missing from the store)", style="red"))
        else:
            text = Text()
            if doc.title:
                title = highlight(doc.title, terms)
                title.stylize("bold")
                text.append_text(title)
                text.append("\n\n")
            text.append_text(highlight(doc.text, terms))
            body.update(text)
        self.scroll_home(animate=False)


class ProvenancePanel(Static):
    """Which systems retrieved the passage, at what rank and score; hidden until revealed."""

    DEFAULT_CSS = """
    ProvenancePanel { height: auto; padding: 0 1; color: $text-muted; }
    """

    def show(self, entry: PoolEntry | None, revealed: bool) -> None:
        self.display = revealed and entry is not None
        if entry is None or not revealed:
            return
        text = Text("retrieved by: ", style="bold")
        parts = [f"{p.system} rank {p.rank} (score {p.score:.4g})" for p in entry.provenance]
        text.append(", ".join(parts) or "no system recorded")
        if entry.stratum != "pool":
            text.append(f"   stratum {entry.stratum} (p={entry.inclusion_prob:.3g})")
        self.update(text)


class StatusLine(Static):
    """Progress for this query and overall (items needing nothing more, by anyone), what this
    annotator judged and found relevant when others share the pool, and the queue position."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $boost; text-wrap: nowrap;
                 text-overflow: ellipsis; }
    """

    def show(
        self,
        query_number: int,
        query_count: int,
        this_query: Progress,
        overall: Progress,
        position: int,
        length: int,
        grade_word: str | None,
        note: str,
    ) -> None:
        text = Text()
        text.append(f"query {query_number}/{query_count}: ", style="bold")
        text.append(f"{this_query.judged}/{this_query.pooled} done")
        self._yours(text, this_query)
        text.append(" │ all: ", style="bold")
        text.append(f"{overall.judged}/{overall.pooled} done")
        self._yours(text, overall)
        text.append(f" │ item {position}/{length}")
        if grade_word is not None:
            text.append(f" │ graded {grade_word}", style="bold cyan")
        if note:
            text.append(f" │ note: {note}", style="italic")
        self.update(text, layout=False)

    @staticmethod
    def _yours(text: Text, progress: Progress) -> None:
        """', R relevant' alone, or ' (you N, R relevant)' when others did part of it."""
        if progress.yours == progress.judged:
            text.append(", ")
            text.append(f"{progress.relevant} relevant", style="green")
            return
        text.append(f" (you {progress.yours}, ")
        text.append(f"{progress.relevant} relevant", style="green")
        text.append(")")
