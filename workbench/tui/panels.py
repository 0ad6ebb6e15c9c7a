"""The judging screen's small read-only panels: the query, the provenance and the done panel
(the passage is `passage.py`'s, the status and message lines `status_lines.py`'s)."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from workbench.core.model import PoolEntry, Query
from workbench.tui.literal import literal


class QueryPanel(VerticalScroll, can_focus=False):
    """The query bar: the query on one line, its narrative (what counts as relevant) under it
    on the query's first passage, folded on the next ones so the passage has the screen
    (`passage_shown`); `f` shows or folds it for every query from then on (`fold`). Up to 45%
    of the screen high; only a longer narrative scrolls. No border: every line is the passage's."""

    DEFAULT_CSS = """
    QueryPanel { height: auto; max-height: 45vh; padding: 0 1; background: $boost; }
    QueryPanel > Static { width: 1fr; }
    """

    def __init__(self, fold_key: str | None = None, **kwargs):  # type: ignore[no-untyped-def]
        """`fold_key`: the key that folds the narrative, named on the bar (None: no key)."""
        super().__init__(**kwargs)
        self.fold_key = fold_key
        self.folded = False
        """Whether the narrative is hidden (the query's line stays)."""
        self.chosen: bool | None = None
        """The fold the key chose for every query (None: shown on a query's first passage,
        folded on its next ones)."""
        self._seen: set[str] = set()
        self._query: Query | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="query-text")

    def show(self, query: Query) -> None:
        self._query = query
        self._draw()
        self.scroll_home(animate=False)

    def passage_shown(self, query_id: str) -> None:
        """A new passage of `query_id` is on screen: unless the key chose, its narrative shows
        on the query's first one and is folded on the next ones."""
        first = query_id not in self._seen
        self._seen.add(query_id)
        folded = self.chosen if self.chosen is not None else not first
        if folded != self.folded:
            self.folded = folded
            self._draw()

    def fold(self, folded: bool) -> None:
        """Hide the narrative (True) or show it whole again, for every query from now on."""
        self.folded = self.chosen = folded
        self._draw()

    def _draw(self) -> None:
        query = self._query
        if query is None:
            return
        text = Text()
        text.append_text(literal(query.query_id, "dim", one_line=True))
        text.append("  ")
        text.append_text(literal(query.text, "bold"))
        key = self.fold_key
        if not query.narrative or key is None:
            self.border_subtitle = ""
        elif self.folded:
            self.border_subtitle = f"narrative folded: {key} shows it"
        else:
            self.border_subtitle = f"{key} folds the narrative"
        if self.border_subtitle:
            text.append(f"  ({self.border_subtitle})", "dim")
        if query.narrative and not self.folded:
            text.append("\n")
            text.append_text(literal(query.narrative, "italic"))
        self.query_one(Static).update(text)


class ProvenancePanel(Static):
    """Which systems retrieved the passage, at what rank and score; hidden until revealed."""

    DEFAULT_CSS = """
    ProvenancePanel { height: auto; padding: 0 1; color: $text-muted; }
    """

    def show(self, entry: PoolEntry | None, revealed: bool) -> None:
        self.display = revealed and entry is not None
        if entry is None or not revealed:
            return
        if entry.stratum != "pool":
            text = Text("random sample from outside the pool: ", style="bold")
            text.append_text(
                literal(
                    f"stratum {entry.stratum}, inclusion probability {entry.inclusion_prob:.3g} "
                    "(it estimates what the pool missed)",
                    one_line=True,
                )
            )
        else:
            text = Text("retrieved by: ", style="bold")
            parts = [f"{p.system} rank {p.rank} (score {p.score:.4g})" for p in entry.provenance]
            text.append_text(literal(", ".join(parts) or "no system recorded", one_line=True))
        self.update(text)


class DonePanel(Static):
    """Shown in place of the passage once nothing is left in the annotator's queue; stays until
    they act (a move, an undo, a jump)."""

    DEFAULT_CSS = """
    DonePanel { height: 1fr; padding: 1 2; border: round $success; content-align: center middle;
                display: none; }
    """

    def show(
        self, graded: int, relevant: int, rel_threshold: int, counted: int | None = None
    ) -> None:
        """`counted`: the adaptive queue's judgments that count toward the estimate, every
        annotator's (None for a static queue)."""
        text = Text()
        if counted is not None:  # the queue stops by itself: say why, not that others took them
            text.append("Nothing is left for you to judge: ", "bold")
            text.append(
                "the adaptive queue has certified every query or judged all it may of it (its "
                "frame), counting every annotator's grades, or another annotator holds a "
                "query's next passage."
            )
            text.append(f"\n\n{counted} judged in all (every annotator's grades); ")
            if graded:
                text.append(f"you graded {graded} ")
                text.append(f"({relevant} relevant, grade ≥ {rel_threshold})", "bold green")
                text.append(".")
            else:
                text.append("none of them yours.")
            text.append("\n\nPress o for the overview and coverage, q to quit")
            text.append("; k goes back to change a grade." if graded else ".")
            text.append("\n`workbench export` writes the golden set.")
            self.update(text)
            return
        if not graded:
            text.append("Nothing is left for you: others judged (or hold open) every item.", "bold")
            text.append("\n\nPress o for the overview and coverage, q to quit.")
            self.update(text)
            return
        text.append(f"Your queue is done: {graded} graded ", "bold")
        text.append(f"({relevant} relevant, grade ≥ {rel_threshold})", "bold green")
        text.append(".\n\n")
        text.append("Press o for the overview and coverage, q to quit; k or u goes back to change")
        text.append(" a grade.\n`workbench export` writes the golden set.")
        self.update(text)
