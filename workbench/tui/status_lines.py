"""The lines under the passage: the status line (where the annotator stands, fitted to the
width) and the message line (what a key did, why it did nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from workbench.core.pool.queue import QueueCounts
from workbench.tui.literal import literal

if TYPE_CHECKING:
    from workbench.flows.judging_session import JudgingSession

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
    counts, which take a shorter wording to leave it whole (else it is cut with an ellipsis
    where the line ends)."""
    rel = f"rel≥{rel_threshold}"
    grade = None if grade_word is None else _piece((f"graded {grade_word}", "bold cyan"))
    graded = [grade] if grade is not None else []
    if query_goal is not None:
        candidates = _framed_candidates(query_place, this_query, overall, rel, query_goal, graded)
    else:
        candidates = _static_candidates(queue_place, query_place, this_query, overall, rel, graded)
    chosen = candidates[-1]
    room = width - (len(SEP) + len(study) if study else 0)  # the study kept whole if it can be
    for parts in candidates:
        if sum(len(p) for p in parts) + len(SEP) * (len(parts) - 1) <= room:
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
        self._rendered: tuple[tuple, Text] | None = None

    def show(self, session: JudgingSession) -> None:
        """Where the annotator stands with the item the session shows: their place in their own
        queue and the query's in the queue, the counts, its grade and note, and why this query
        (the adaptive queue's word on it, the study's)."""
        shown = session.shown
        assert shown is not None
        key, queue = shown.key, session.queue
        grade = queue.grade_of(key)
        this_query, overall = session.progress(key[0])
        why = session.why(key[0])
        figures = (
            queue.your_queue(),
            (session.query_order.get(key[0], 0), len(session.query_order)),
            this_query,
            overall,
            self.rel_threshold,
            None if grade is None else f"{grade} {session.scale.get(grade, '')}",
            session.note_of(key),
            why.goal,
            why.study,
        )
        if figures != self._figures:  # the same figures: nothing to draw again
            self._figures = figures
            self.refresh()

    def render(self) -> Text:
        """Worked out again only when the figures or the width change: the screen redraws
        every widget after a passage's layout, and the wording's fitting took a millisecond."""
        if self._figures is None:
            return Text()
        key = (self.content_size.width, self._figures)
        if self._rendered is None or self._rendered[0] != key:
            self._rendered = (key, status_text(key[0], *self._figures))
        return self._rendered[1]


class MessageLine(Static):
    """The app's messages (what a key did, why it did nothing), never over the passage or the
    grade bar; each clears after its timeout. While one shows it stands in the key hints'
    place (`stands_for`: the footer), so neither takes a row of the passage's. A message longer
    than the line wraps onto as many lines as the screen allows it (`allow`), the rest cut with
    an ellipsis."""

    DEFAULT_CSS = """
    MessageLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    MessageLine.-warning { color: $warning; }
    MessageLine.-error { color: $error; text-style: bold; }
    """

    STYLE = {"warning": "-warning", "error": "-error"}

    def __init__(self, stands_for: str | None = None, **kwargs):  # type: ignore[no-untyped-def]
        """`stands_for`: the id of the line hidden while a message shows (None: none)."""
        super().__init__("", **kwargs)
        self.stands_for = stands_for
        self.display = stands_for is None
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
        shown = bool(self.message) or self.stands_for is None
        if shown != self.display:
            self.display = shown
            if self.stands_for is not None:
                for line in self.screen.query(f"#{self.stands_for}"):
                    line.display = not shown
        self.update(text, layout=resized)

    def clear(self) -> None:
        """No message, and no severity's colour left on the blank line (it painted its spaces
        in the last warning's colour: a screen after a warning differed from one without)."""
        self.message = ""
        self.severity = "information"
        for css in self.STYLE.values():
            self.remove_class(css)
        self._draw()

    def clear_stale(self) -> None:
        """Drop a message about the item left behind (a new one is on screen); an error (a
        grade not saved) stays until its timeout."""
        if self.message and self.severity != "error":
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self.clear()
