"""What the grading screens say while a key cannot act: that they wait on the store (locked,
slow, unreachable), that the terminal is too small to read a passage in, why a grade key was
dropped; and the message line's fitting (a long message wraps while the passage keeps its
lines). `grading.GradingScreen` holds one (`StoreWaits`); what it reads of the screen is
`GradingHost`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from textual.app import App
from textual.css.query import DOMQuery
from textual.widget import Widget

from workbench.core.store_url import is_url
from workbench.tui.fit import TooSmallScreen, too_small
from workbench.tui.passage import PassageView
from workbench.tui.status_lines import MessageLine
from workbench.tui.writer import Disconnected, ReadRequest, StoreWriter

if TYPE_CHECKING:
    from workbench.core.pool.queue import Key

STALL_S = 0.5
"""A request the store thread has been on this long waits on something (a lock another process
holds, a server that does not answer): a grade's write takes milliseconds. The screen says so."""
MESSAGE_LINES = 3
"""A long message (a start-up notice) wraps onto at most this many lines, and only while the
passage box keeps PASSAGE_KEPT lines of text beside it..."""
PASSAGE_KEPT = 6
"""...so a message never shrinks it to where grade keys are refused (fit.MIN_PASSAGE_LINES)."""


W = TypeVar("W", bound=Widget)


class GradingHost(Protocol):
    """What the waits read of the grading screen (`grading.GradingScreen`)."""

    writer: StoreWriter
    loaded: bool
    _in_flight: int
    _drawn: Key | None

    @property
    def app(self) -> App[Any]: ...

    def on_screen(self) -> Key | None: ...

    def _painted(self) -> bool: ...

    def waits_for_queue(self, key: Key) -> bool: ...

    def query(self, selector: type[W]) -> DOMQuery[W]: ...

    def query_one(self, selector: type[W]) -> W: ...

    def call_after_refresh(self, callback: Callable[..., object]) -> bool: ...


class StoreWaits:
    """The grading screen's messages and waits."""

    def __init__(self, screen: GradingHost) -> None:
        self.screen = screen
        self.reconnecting = False
        self.retry_note = ""
        """What the store thread keeps while the server is gone, and its last error."""
        self.refused: int | None = None
        """The last grade key dropped while the store is unreachable (said with each retry)."""
        self.said: str | None = None
        """The wait on the store last said (`watch`)."""

    def say(self, message: str, severity: str, timeout: float | None, title: str = "") -> None:
        """Messages go to the message line where the screen has one (never over the status or
        the grade bar), else to a toast."""
        lines = self.screen.query(MessageLine)
        if not lines:
            self.screen.app.notify(
                message,
                title=title,
                severity=severity,  # type: ignore[arg-type]
                timeout=timeout,
            )
            return
        line = lines.first()
        line.allow(1)  # until the layout is known: the passage may have just grown shorter
        line.say(message, severity, 4.0 if timeout is None else timeout)
        self.screen.call_after_refresh(self.fit_message)

    def fit_message(self) -> None:
        """Let a long message wrap onto up to MESSAGE_LINES lines while the passage keeps
        PASSAGE_KEPT lines beside it; one line (the rest cut) where it would not."""
        lines = self.screen.query(MessageLine)
        if not lines:
            return
        line = lines.first()
        view = self.screen.query_one(PassageView)
        if not view.display:
            line.allow(MESSAGE_LINES)
            return
        spare = view.content_region.height + line.size.height - PASSAGE_KEPT
        line.allow(min(MESSAGE_LINES, spare))

    # -- what the screen waits for ------------------------------------------------------------

    def store_wait(self) -> str | None:
        """Why the screen waits on the store now, in the annotator's words (None: it does not,
        or not for long enough to say)."""
        writer = self.screen.writer
        if writer.retrying:
            refused = f"key {self.refused} not taken: " if self.refused is not None else ""
            return f"{refused}store unreachable: retrying… {self.retry_note}".rstrip()
        if writer.stalled_s < STALL_S:
            return None
        if isinstance(writer.serving, ReadRequest):
            return "store slow to answer: waiting…"
        if is_url(writer.store.location):
            return "store not answering (locked by another session, or the network): waiting…"
        return "store locked by another process: waiting…"

    def watch(self) -> None:
        """Say why the screen waits on the store, and that it waits no more; cover the screen
        while the terminal is too small."""
        screen = self.screen
        self.fit()
        self.fit_message()
        waiting = self.store_wait()
        lines = screen.query(MessageLine)
        line = lines.first() if lines else None
        said = self.said
        if waiting is not None and (waiting != said or (line is not None and not line.message)):
            self.say(waiting, "warning", 3600 if line else 5)
            key = screen.on_screen()
            if not screen.loaded or (key is not None and screen._drawn != key):
                screen.query_one(PassageView).say(key[1] if key else "", waiting)
        elif waiting is None and said is not None and line is not None:
            if said in line.message:
                line.clear()
        self.said = waiting

    def fit(self) -> None:
        """Cover the screen while the terminal is too small to read a passage in (a dialog
        open on it takes no grade key: it is covered once closed)."""
        app = self.screen.app
        if too_small(app.size) and app.screen is self.screen:
            app.push_screen(TooSmallScreen())

    def refusal(self) -> str | None:
        """Why a grade key would grade no passage the annotator sees now (None: it grades the
        one drawn, even while the store is locked: the grade waits, then the screen does)."""
        screen = self.screen
        view = screen.query_one(PassageView)
        small = too_small(screen.app.size, view.content_region.height if view.display else None)
        if small is not None:
            return small
        key = screen.on_screen()
        if key is not None and screen.waits_for_queue(key):
            # the adaptive queue's next pick needs every passage read and indexed (seconds at
            # 100,000 x 500, in a thread after the first passage is shown): a grade now would
            # block the screen and keys typed meanwhile would grade passages drawn after them
            return "reading the passages for the adaptive queue…"
        if screen.loaded and key is None:
            return "no passage to grade"
        if not screen.loaded or screen._in_flight or screen._drawn != key:
            waiting = self.store_wait()
            if waiting is not None:
                return waiting
        if not screen.loaded:
            return "reading the store…"
        if screen._in_flight:
            return "saving the last grade…"
        if screen._drawn != key:
            return "reading the passage…"
        if not screen._painted():  # drawn, not on the terminal yet (a key already on its way)
            return "showing the passage…"
        return None

    def refuse(self, grade: int, refusal: str) -> None:
        """Say why a grade key was dropped; while the store is unreachable, with every retry
        (so that one does not wipe it)."""
        if self.screen.writer.retrying:
            self.refused = grade
            self.say(self.store_wait() or refusal, "warning", 3600)
            return
        self.say(f"key {grade} not taken: {refusal}", "warning", 3600 if self.said else 3)

    # -- the store's server gone and back -----------------------------------------------------

    def disconnected(self, message: Disconnected, what: str) -> None:
        """The store thread tries again (`what` it keeps): said until it is back."""
        self.reconnecting = True
        self.retry_note = (
            f"({what}; try {message.attempt}, next in {message.pause_s:g} s: {message.error})"
        )
        self.watch()

    def connected_again(self, what: str = "") -> None:
        if self.reconnecting:
            self.reconnecting = False
            self.retry_note = ""
            self.refused = None
            self.said = None
            self.say("Connected again" + (f": {what}" if what else ""), "information", 3)
