"""The judging screen's read-only panels: the query, the passage, the provenance, the status,
the message line and the done panel."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from workbench.core.display import passage_lines, visible
from workbench.core.model import Doc, PoolEntry, Query
from workbench.core.queue import QueueCounts
from workbench.tui.highlight import highlight
from workbench.tui.literal import literal, literal_title


class QueryPanel(VerticalScroll, can_focus=False):
    """The query and its narrative (what counts as relevant, and what does not): grows to show
    all of it, up to 45% of the screen height (the passage scrolls in the rest); only a longer one
    scrolls. Folded (`fold`), it shows the query alone and its bottom border says a narrative is
    hidden. No side padding: at 80 columns every column saved is a line saved."""

    DEFAULT_CSS = """
    QueryPanel { height: auto; max-height: 45vh; padding: 0; border: round $primary; }
    QueryPanel > Static { width: 1fr; }
    """

    def __init__(self, fold_key: str | None = None, **kwargs):  # type: ignore[no-untyped-def]
        """`fold_key`: the key that folds the narrative, named on the border (None: no key)."""
        super().__init__(**kwargs)
        self.fold_key = fold_key
        self.folded = False
        """Whether the narrative is hidden (the query's line stays)."""
        self._query: Query | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="query-text")

    def show(self, query: Query) -> None:
        self._query = query
        self._draw()
        self.scroll_home(animate=False)

    def fold(self, folded: bool) -> None:
        """Hide the narrative (True) or show it whole again."""
        self.folded = folded
        self._draw()

    def _draw(self) -> None:
        query = self._query
        if query is None:
            return
        text = Text()
        text.append_text(literal(query.query_id, "dim", one_line=True))
        text.append("  ")
        text.append_text(literal(query.text, "bold"))
        if query.narrative and not self.folded:
            text.append("\n")
            text.append_text(literal(query.narrative, "italic"))
        self.query_one(Static).update(text)
        key = self.fold_key
        if not query.narrative or key is None:
            self.border_subtitle = ""
        elif self.folded:
            self.border_subtitle = f"narrative folded: {key} shows it"
        else:
            self.border_subtitle = f"{key} folds the narrative"


class PassageText(Static):
    """The passage's text; counts its drawings and the last one rendered for the terminal."""

    def __init__(self, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.drawing = 0
        """Bumped by every new content (PassageView.show, say)."""
        self.painted = 0
        """The drawing last rendered: the compositor renders a widget right before it writes
        the screen's update to the terminal."""

    def render_lines(self, crop: Region) -> list[Strip]:
        self.painted = self.drawing
        return super().render_lines(crop)


END_OF_PASSAGE = "── end of passage ──"
"""The passage's last line, so the annotator knows they read it all."""


class PassageView(VerticalScroll):
    """The passage (title + text), literal, query terms highlighted, scrollable; a Markdown
    heading shown as bold words, once (`display.passage_lines`); its last line says it ends,
    and while more of it is below the box its bottom border says how much."""

    DEFAULT_CSS = """
    PassageView { height: 1fr; padding: 0 1; border: round $secondary; }
    PassageView > Static { width: 1fr; }
    """
    BINDINGS = [Binding("space", "page_down", "Page down", show=False)]

    def compose(self):  # type: ignore[no-untyped-def]
        yield PassageText(id="passage-text")

    @property
    def drawing(self) -> int:
        """The number of the passage's latest drawing (`painted` reaches it once rendered)."""
        return self.query_one(PassageText).drawing

    @property
    def painted(self) -> int:
        return self.query_one(PassageText).painted

    def _update(self, content: Text) -> None:
        text = self.query_one(PassageText)
        text.drawing += 1
        text.update(content)

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._say_more, init=False)
        self.watch(self, "virtual_size", self._say_more, init=False)  # a new passage

    def on_resize(self) -> None:
        """The box changed size (a fold, the terminal)."""
        self._say_more()

    def _say_more(self) -> None:
        below = max(0, round(self.max_scroll_y - self.scroll_y))
        lines = f"{below} more line{'s' * (below != 1)}"
        self.border_subtitle = f"↓ {lines}: PgDn, space" if below else ""

    def show(self, doc: Doc | None, doc_id: str, terms: frozenset[str]) -> None:
        self.border_title = literal_title(doc_id)
        if doc is None:
            self._update(literal(f"(passage {doc_id} is missing from the store)", "red"))
        else:
            text = Text()
            if doc.title:
                title = highlight(visible(doc.title, one_line=True), terms)
                title.stylize("bold")
                text.append_text(title)
                text.append("\n\n")
            for n, (line, heading) in enumerate(passage_lines(doc.title, doc.text)):
                shown = highlight(line, terms)
                if heading:
                    shown.stylize("bold")
                text.append_text(shown if not n else Text("\n") + shown)
            text.append("\n\n")
            text.append(END_OF_PASSAGE, "dim")
            self._update(text)
        self.scroll_home(animate=False)

    def say(self, doc_id: str, message: str) -> None:
        """A line in the passage's place (it is being read, or could not be)."""
        self.border_title = literal_title(doc_id)
        self._update(literal(message, "dim"))
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


SEP = " │ "


def _piece(*parts: tuple[str, str]) -> Text:
    text = Text()
    for content, style in parts:
        text.append(content, style)
    return text


def _counts(progress: QueueCounts, rel_label: str, with_you: bool, sep: str) -> Text:
    """'{sep}rel≥1: R', or ' (you N, rel≥1: R)' when others did part of it and `with_you`."""
    rel = (f"{rel_label}: {progress.relevant}", "green")
    if with_you and progress.yours != progress.judged:
        return _piece((f" (you {progress.yours}, ", ""), rel, (")", ""))
    return _piece((sep, ""), rel)


def status_text(
    width: int,
    queue_place: tuple[int, int],
    query_place: tuple[int, int],
    this_query: QueueCounts,
    overall: QueueCounts,
    rel_threshold: int,
    grade_word: str | None,
    note: str,
    query_goal: str | None = None,
    study: str | None = None,
) -> Text:
    """The status line at `width` cells: the most verbose wording that fits, dropping the
    least useful parts first (wording, then the current grade, which the grade bar also marks,
    then who did what); the note is last and cut with an ellipsis. `query_goal` (the adaptive
    queue: 'certified', '≈ 40 to certify') replaces the counts of its whole frame (what the
    queue may serve, not what it will): the counts' `judged` are then the judgments that count
    toward the estimate, every annotator's. `study`: the study against its target, after the
    counts (cut with an ellipsis where the line ends)."""
    rel = f"rel≥{rel_threshold}"
    grade = None if grade_word is None else _piece((f"graded {grade_word}", "bold cyan"))
    graded = [grade] if grade is not None else []
    if query_goal is not None:
        candidates = _framed_candidates(query_place, this_query, overall, rel, query_goal, graded)
    else:
        candidates = _static_candidates(queue_place, query_place, this_query, overall, rel, graded)
    chosen = candidates[-1]
    for parts in candidates:
        if sum(len(p) for p in parts) + len(SEP) * (len(parts) - 1) <= width:
            chosen = parts
            break
    text = Text(SEP).join(chosen)
    if study:  # after the counts, never in their place: cut first, like the note
        text.append(SEP)
        text.append(study, "dim")
    if note:
        text.append(SEP)
        text.append_text(literal(f"note: {note}", "italic", one_line=True))
    text.truncate(width, overflow="ellipsis")
    return text


def _static_candidates(
    queue_place: tuple[int, int],
    query_place: tuple[int, int],
    this_query: QueueCounts,
    overall: QueueCounts,
    rel: str,
    graded: list[Text],
) -> list[list[Text]]:
    """The static queue's wordings, longest first: the annotator's queue, the query's and the
    pool's items done (by anyone)."""
    (position, size), (query_number, query_count) = queue_place, query_place

    def long() -> list[Text]:
        return [
            _piece((f"your queue {position}/{size}", "bold")),
            _piece((f"query {query_number}/{query_count}: ", "bold"))
            + Text(f"{this_query.judged}/{this_query.pooled} done")
            + _counts(this_query, rel, True, ", "),
            _piece(("all: ", "bold"))
            + Text(f"{overall.judged}/{overall.pooled} done")
            + _counts(overall, rel, True, ", "),
        ]

    def short(with_you: bool) -> list[Text]:
        return [
            _piece((f"queue {position}/{size}", "bold")),
            _piece((f"query {query_number}/{query_count} ", "bold"))
            + Text(f"{this_query.judged}/{this_query.pooled}")
            + _counts(this_query, rel, with_you, " "),
            _piece(("all ", "bold"))
            + Text(f"{overall.judged}/{overall.pooled}")
            + _counts(overall, rel, with_you, " "),
        ]

    return [
        long() + graded,
        short(True) + graded,
        long(),
        short(True),
        short(False) + graded,
        short(False),
        short(False)[:2],
    ]


def _framed_candidates(
    query_place: tuple[int, int],
    this_query: QueueCounts,
    overall: QueueCounts,
    rel: str,
    query_goal: str,
    graded: list[Text],
) -> list[list[Text]]:
    """The adaptive queue's wordings, longest first: the annotator's own grades, then the
    judgments that count toward the estimate (every annotator's: an oracle's or a colleague's
    too) for the query, with where it stands, and for all queries."""
    query_number, query_count = query_place
    you_long = _piece(("you: ", "bold"), (f"{overall.yours} judged, ", ""))
    you_long.append(f"{rel}: {overall.relevant}", "green")
    you_short = _piece((f"you {overall.yours}", "bold"))
    query = _piece((f"query {query_number}/{query_count}: ", "bold"))
    # Long: the annotator's part of the query, when others judged some of it.
    query_long = query + Text(f"{this_query.judged} judged")
    if this_query.yours != this_query.judged:
        query_long += _piece(
            (f" (you {this_query.yours}, ", ""),
            (f"{rel}: {this_query.relevant}", "green"),
            (")", ""),
        )
    query_long += Text(f", {query_goal}")
    query_mid = query + Text(f"{this_query.judged} judged, {query_goal}")
    query_short = query + Text(f"{this_query.judged}, {query_goal}")
    everyone = _piece(("all: ", "bold"), (f"{overall.judged} judged", ""))
    return [
        [you_long, query_long, everyone, *graded],
        [you_long, query_long, everyone],
        [you_long, query_mid, everyone, *graded],
        [you_long, query_mid, everyone],
        [you_short, query_mid, everyone],
        [you_short, query_short, everyone],
        [you_short, query_short],
    ]


class StatusLine(Widget):
    """Where the annotator stands: their own queue, this query and the whole pool (items
    needing nothing more, by anyone), relevant counts with their threshold; fitted to the
    width on every render."""

    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $boost; }
    """

    def __init__(self, rel_threshold: int = 1, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.rel_threshold = rel_threshold
        self._figures: tuple | None = None

    def show(
        self,
        query_number: int,
        query_count: int,
        this_query: QueueCounts,
        overall: QueueCounts,
        position: int,
        length: int,
        grade_word: str | None,
        note: str,
        query_goal: str | None = None,
        study: str | None = None,
    ) -> None:
        """`position`/`length`: the place in the annotator's own queue (JudgingQueue.your_queue);
        `query_goal`: where the adaptive queue says this query stands."""
        self._figures = (
            (position, length),
            (query_number, query_count),
            this_query,
            overall,
            self.rel_threshold,
            grade_word,
            note,
            query_goal,
            study,
        )
        self.refresh()

    def render(self) -> Text:
        if self._figures is None:
            return Text()
        return status_text(self.content_size.width, *self._figures)


class MessageLine(Static):
    """The app's messages (what a key did, why it did nothing), so they never cover the
    passage, the grade bar or the status line; each clears after its timeout. A message longer
    than the line wraps onto as many lines as the screen allows it (`allow`), the rest cut with
    an ellipsis."""

    DEFAULT_CSS = """
    MessageLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    MessageLine.-warning { color: $warning; }
    MessageLine.-error { color: $error; text-style: bold; }
    """

    STYLE = {"warning": "-warning", "error": "-error"}

    def __init__(self, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__("", **kwargs)
        self.message = ""
        """The message shown now ("" when none)."""
        self.severity = "information"
        self._timer: Timer | None = None
        self._lines = 1
        self._drawn: tuple[str, int, int] | None = None

    def allow(self, lines: int) -> None:
        """Let a long message wrap onto at most `lines` lines (one until the screen says)."""
        self._lines = max(1, lines)
        self._draw()

    def say(self, message: str, severity: str = "information", timeout: float = 4.0) -> None:
        self.message = message
        self.severity = severity
        for name, css in self.STYLE.items():
            self.set_class(name == severity, css)
        self._draw()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(max(timeout, 1.0), self.clear)

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        """The message wrapped at the line's width (once laid out; one line until then)."""
        width = self.content_size.width
        if (self.message, width, self._lines) == self._drawn:
            return
        self._drawn = (self.message, width, self._lines)
        text = literal(self.message, one_line=True)
        wrapped = list(text.wrap(self.app.console, width)) if width > 0 and self.message else []
        for line in wrapped:
            line.rstrip()
        if len(wrapped) > 1:
            shown = wrapped[: self._lines]
            if len(wrapped) > self._lines:  # the rest on the last line, cut
                shown[-1] = Text(" ").join(wrapped[self._lines - 1 :])
                shown[-1].truncate(width, overflow="ellipsis")
            text = Text("\n").join(shown)
        height = max(1, min(len(wrapped), self._lines))
        resized = self.styles.height is None or self.styles.height.value != height
        if resized:
            self.styles.height = height
        self.update(text, layout=resized)

    def clear(self) -> None:
        self.message = ""
        self._draw()

    def clear_stale(self) -> None:
        """Drop a message about the item left behind (a new one is on screen); an error (a
        grade not saved) stays until its timeout."""
        if self.message and self.severity != "error":
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self.clear()


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
