"""What the grading screens say while a key cannot act: that they wait on the store (locked,
slow, unreachable), that the terminal is too small to read a passage in, why a grade key was
dropped; and the message line's fitting (a long message wraps while the passage keeps its
lines). A part of `grading.GradingScreen`, whose state it reads."""

from __future__ import annotations

from workbench.core.store_url import is_url
from workbench.tui.fit import TooSmallScreen, too_small
from workbench.tui.passage import PassageView
from workbench.tui.status_lines import MessageLine
from workbench.tui.writer import ReadRequest

STALL_S = 0.5
"""A request the store thread has been on this long waits on something (a lock another process
holds, a server that does not answer): a grade's write takes milliseconds. The screen says so."""
MESSAGE_LINES = 3
"""A long message (a start-up notice) wraps onto at most this many lines, and only while the
passage box keeps PASSAGE_KEPT lines of text beside it..."""
PASSAGE_KEPT = 6
"""...so a message never shrinks it to where grade keys are refused (fit.MIN_PASSAGE_LINES)."""


class GradingWaits:
    """The grading screen's messages and waits (mixed into `grading.GradingScreen`)."""

    def notify(  # type: ignore[override]
        self,
        message: str,
        *,
        title: str = "",
        severity: str = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Messages go to the message line where the screen has one (never over the status or
        the grade bar), else to a toast."""
        lines = self.query(MessageLine)
        if not lines:
            self.app.notify(
                message,
                title=title,
                severity=severity,  # type: ignore[arg-type]
                timeout=timeout,
            )
            return
        line = lines.first()
        line.allow(1)  # until the layout is known: the passage may have just grown shorter
        line.say(message, severity, 4.0 if timeout is None else timeout)
        self.call_after_refresh(self._fit_message)

    def _fit_message(self) -> None:
        """Let a long message wrap onto up to MESSAGE_LINES lines while the passage keeps
        PASSAGE_KEPT lines beside it; one line (the rest cut) where it would not."""
        lines = self.query(MessageLine)
        if not lines:
            return
        line = lines.first()
        view = self.query_one(PassageView)
        if not view.display:
            line.allow(MESSAGE_LINES)
            return
        spare = view.content_region.height + line.size.height - PASSAGE_KEPT
        line.allow(min(MESSAGE_LINES, spare))

    # -- what the screen waits for ------------------------------------------------------------

    def _store_wait(self) -> str | None:
        """Why the screen waits on the store now, in the annotator's words (None: it does not,
        or not for long enough to say)."""
        if self.writer.retrying:
            refused = f"key {self._refused} not taken: " if self._refused is not None else ""
            return f"{refused}store unreachable: retrying… {self._retry_note}".rstrip()
        if self.writer.stalled_s < STALL_S:
            return None
        if isinstance(self.writer.serving, ReadRequest):
            return "store slow to answer: waiting…"
        if is_url(self.writer.store.location):
            return "store not answering (locked by another session, or the network): waiting…"
        return "store locked by another process: waiting…"

    def _watch(self) -> None:
        """Say why the screen waits on the store, and that it waits no more; cover the screen
        while the terminal is too small."""
        self._fit()
        self._fit_message()
        waiting = self._store_wait()
        lines = self.query(MessageLine)
        line = lines.first() if lines else None
        said = self._said_wait
        if waiting is not None and (waiting != said or (line is not None and not line.message)):
            self.notify(waiting, severity="warning", timeout=3600 if line else 5)
            key = self.on_screen()
            if not self.loaded or (key is not None and self._drawn != key):
                self.query_one(PassageView).say(key[1] if key else "", waiting)
        elif waiting is None and said is not None and line is not None:
            if said in line.message:
                line.clear()
        self._said_wait = waiting

    def _fit(self) -> None:
        """Cover the screen while the terminal is too small to read a passage in (a dialog
        open on it takes no grade key: it is covered once closed)."""
        if too_small(self.app.size) and self.app.screen is self:
            self.app.push_screen(TooSmallScreen())

    def _refusal(self) -> str | None:
        """Why a grade key would grade no passage the annotator sees now (None: it grades the
        one drawn, even while the store is locked: the grade waits, then the screen does)."""
        view = self.query_one(PassageView)
        small = too_small(self.app.size, view.content_region.height if view.display else None)
        if small is not None:
            return small
        key = self.on_screen()
        if key is not None and self.waits_for_queue(key):
            # the adaptive queue's next pick needs every passage read and indexed (seconds at
            # 100,000 x 500, in a thread after the first passage is shown): a grade now would
            # block the screen and keys typed meanwhile would grade passages drawn after them
            return "reading the passages for the adaptive queue…"
        if self.loaded and key is None:
            return "no passage to grade"
        if not self.loaded or self._in_flight or self._drawn != key:
            waiting = self._store_wait()
            if waiting is not None:
                return waiting
        if not self.loaded:
            return "reading the store…"
        if self._in_flight:
            return "saving the last grade…"
        if self._drawn != key:
            return "reading the passage…"
        if not self._painted():  # drawn, not on the terminal yet (a key already on its way)
            return "showing the passage…"
        return None
