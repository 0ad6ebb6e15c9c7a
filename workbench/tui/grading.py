"""What the judging and adjudication screens share: they never call the store. Every write and
every read goes to the store thread (`writer.StoreWriter`) and comes back as a message; other
keys typed while one is on its way wait and then apply, in order, to the item they were meant
for. A grade key grades the passage on screen when it is pressed, or nothing: one typed while
no passage can be graded (the store is being read, a grade is being saved, the store is locked
or unreachable, the next passage is not drawn yet or not yet on the terminal, the terminal is
too small) is dropped and the screen says why, so no key typed ahead grades a passage the
annotator has not seen.
Passages are read ahead of the cursor, so showing the next one needs no read and no wait."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from textual import on
from textual.binding import Binding
from textual.screen import Screen

from workbench.core.model import DEFAULT_GRADE_SCALE, Query, outside_scale
from workbench.core.pool.queue import Key
from workbench.flows.judging_requests import Claim, JudgmentWrite, Look, UndoWrite
from workbench.flows.judging_start import Start, read_passages
from workbench.store import JudgmentStore
from workbench.tui.grade_bar import GradeBar
from workbench.tui.grading_waits import StoreWaits
from workbench.tui.highlight import query_terms
from workbench.tui.panels import QueryPanel
from workbench.tui.passage import PassageView
from workbench.tui.reads import PassageCache
from workbench.tui.writer import (
    Disconnected,
    ReadDone,
    ReadFailed,
    ReadRequest,
    Saved,
    SaveFailed,
    StoreWriter,
)

GRADES = Binding.Group("grade", compact=True)
PREFETCH = 64
"""Passages read ahead of the cursor, so showing the next one needs no read."""
WATCH_EVERY_S = 0.2
"""How often the screen looks whether it waits on the store, and at the terminal's size."""


def grade_binding(grade: int, id_prefix: str) -> Binding:
    """The key for `grade`, id `{id_prefix}-{grade}` (a keymap can rebind it)."""
    wording = DEFAULT_GRADE_SCALE.get(grade, f"grade {grade}")
    return Binding(str(grade), f"grade({grade})", wording, id=f"{id_prefix}-{grade}", group=GRADES)


class GradingScreen(Screen[None]):
    """A screen that grades items through the store thread. Subclasses say what to read at
    start (`start_read`), take it in (`started`), name the passages ahead (`ahead`), grade
    (`_grade`), take in a committed write (`saved`) and draw (`show_current`)."""

    def __init__(self, writer: StoreWriter, annotator: str):
        super().__init__()
        self.writer = writer
        self.annotator = annotator
        self.scale: dict[int, str] = dict(DEFAULT_GRADE_SCALE)
        """The store's grade scale (the default until the start read brings it)."""
        self.queries: dict[str, Query] = {}
        self.loaded = False
        """Whether the start read is back (until then keys wait, grade keys are dropped)."""
        self.passages = PassageCache()
        self._in_flight = 0
        self.waits = StoreWaits(self)
        """What the screen says while a key cannot act (the store, the terminal's size)."""
        self._waiting: deque[Callable[[], object]] = deque()
        self._awaiting: str | None = None
        self._drawn: Key | None = None
        self._drawing = 0
        """The passage view's drawing of `_drawn` (PassageView.drawing): a key read before it
        reaches the terminal grades nothing."""
        self._shown_at = time.time()
        self._terms: dict[str, frozenset[str]] = {}

    def notify(  # type: ignore[override]
        self,
        message: str,
        *,
        title: str = "",
        severity: str = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """On the message line where the screen has one, else a toast (`StoreWaits.say`)."""
        self.waits.say(message, severity, timeout, title)

    # -- for subclasses -----------------------------------------------------------------------

    def start_read(self) -> Callable[[JudgmentStore], Start]:
        raise NotImplementedError

    def started(self, start: Start) -> None:
        """The start read is back (scale, queries and first passages already taken in)."""

    def ahead(self) -> list[str]:
        """Doc ids that may be shown next, the current one first."""
        return []

    def saved(self, message: Saved) -> None:
        """A write of this screen is committed."""

    def show_current(self) -> None:
        raise NotImplementedError

    def on_screen(self) -> Key | None:
        """The item whose passage a grade key would grade now (None: none, e.g. done)."""
        raise NotImplementedError

    def _grade(self, key: Key, grade: int) -> None:
        """Grade `key`, the item whose passage is on screen (`grade` is on the scale)."""
        raise NotImplementedError

    def waits_for_queue(self, key: Key) -> bool:
        """Whether a grade of `key` must wait for the queue's own work (`StoreWaits.refusal`)."""
        return False

    def action_fold(self) -> None:
        """Fold the query's narrative away, or show it again: for every query until the app
        closes (until then it shows on each query's first passage only)."""
        panel = self.query_one(QueryPanel)
        panel.fold(not panel.folded)  # its border says so: the message line keeps its message
        self.call_after_refresh(self.waits.fit_message)

    def action_raw(self) -> None:
        """Show a Markdown passage as its source, or rendered again (kept for the next ones)."""
        raw = self.query_one(PassageView).toggle_raw()
        self.notify("Markdown shown as its source (m: rendered)" if raw else
                    "Markdown rendered (m: its source)")  # fmt: skip

    # -- keys wait for the store --------------------------------------------------------------

    @property
    def settled(self) -> bool:
        """Nothing on its way to or from the store that keys wait for, no key waiting, and the
        passage to grade on the terminal."""
        if self._blocked() or self._waiting:
            return False
        key = self.on_screen() if self.loaded else None
        return key is None or (self._drawn == key and self._painted())

    def _blocked(self) -> bool:
        return bool(self._in_flight) or self._awaiting is not None

    def _dispatch(self, action: Callable[[], object]) -> None:
        """Run `action` now, or once the writes in flight are committed and the current
        passage is read (keys typed ahead apply to the item they were meant for; grade keys
        never come here: `action_grade`)."""
        if self._blocked():
            self._waiting.append(action)
        else:
            action()

    def _drain(self) -> None:
        while self._waiting and not self._blocked():
            self._waiting.popleft()()

    # -- reads --------------------------------------------------------------------------------

    def _read_start(self) -> None:
        self.query_one(PassageView).say("", "reading the store…")
        self._in_flight += 1
        self.writer.submit(ReadRequest(self.start_read(), "start"), self)
        self.set_interval(WATCH_EVERY_S, self.waits.watch)
        self.waits.fit()

    def _prefetch(self) -> None:
        """Ask for the passages ahead a batch at a time, or at once when one of the next few is
        missing; keys wait (grade keys are dropped) while the current one is read."""
        ahead = self.ahead()
        if not ahead:
            return
        self._awaiting = None if self.passages.has(ahead[0]) else ahead[0]
        unread = self.passages.unasked(ahead)
        if len(unread) >= PREFETCH // 2 or set(ahead[:5]) & set(unread):
            self._ask(unread)

    def _ask(self, doc_ids: Iterable[str]) -> None:
        """Read these passages on the store thread (those neither read nor on their way)."""
        unread = self.passages.unasked(doc_ids)
        if unread:
            self.passages.asking(unread)
            read = partial(read_passages, doc_ids=unread)
            self.writer.submit(ReadRequest(read, "passages"), self)

    @on(ReadDone)
    async def _read_done(self, message: ReadDone) -> None:
        value: Any = message.value
        self.waits.connected_again()
        if message.request.what == "start":
            self._in_flight -= 1
            await self._take_start(value)
        elif message.request.what == "passages":
            self.passages.take(value)
            if self._awaiting is not None and self.passages.has(self._awaiting):
                self._awaiting = None
                self.show_current()
        self._drain()

    async def _take_start(self, start: Start) -> None:
        if start.scale != self.scale:
            self.scale = start.scale
            await self.query_one(GradeBar).set_scale(start.scale)
        self.queries = start.queries
        self.passages.take(start.passages)
        self.loaded = True
        self.started(start)
        self.refresh_bindings()

    @on(ReadFailed)
    def _read_failed(self, message: ReadFailed) -> None:
        if message.request.what == "start" and message.damaged:
            # a store no workbench wrote: the command exits 2 saying which table and row, as
            # it did when the pool was read before the app (`commands.judge.open_app`)
            self.app.damaged = message.error  # type: ignore[attr-defined]
            self.app.exit(return_code=2)
            return
        if message.request.what == "start":
            self._in_flight -= 1
            self._waiting.clear()
            self.query_one(PassageView).say("", f"The store could not be read: {message.error}")
        self.notify(f"Could not read the store: {message.error}", severity="error", timeout=10)

    def _show_passage(self, key: Key, doc_id: str) -> bool:
        """Draw the item's passage if it is not on screen yet and has been read (True then); a
        placeholder until it is."""
        if self._drawn == key:
            return False
        view = self.query_one(PassageView)
        self._prefetch()
        if not self.passages.has(doc_id):
            view.say(doc_id, "reading the passage…")
            return False
        error = self.passages.error(doc_id)
        if error:
            view.say(doc_id, f"(passage {doc_id} could not be read: {error})")
        else:
            view.show(self.passages.get(doc_id), doc_id, self.terms(key[0]))
        self._drawn = key
        self._drawing = view.drawing
        self._shown_at = time.time()
        return True

    def _painted(self) -> bool:
        """Whether the drawn passage has been rendered to the terminal."""
        return self.query_one(PassageView).painted >= self._drawing

    def query_of(self, query_id: str) -> Query:
        return self.queries.get(query_id, Query(query_id, "(query text missing)"))

    def terms(self, query_id: str) -> frozenset[str]:
        """The query's terms, highlighted in its passages."""
        if query_id not in self._terms:
            self._terms[query_id] = query_terms(self.query_of(query_id).text)
        return self._terms[query_id]

    # -- writes -------------------------------------------------------------------------------

    def _submit(self, write: JudgmentWrite) -> None:
        """Send a row to the store thread; keys wait until it is committed (`Saved`)."""
        self._in_flight += 1
        self.writer.submit(write, self)

    @on(Saved)
    def _on_saved(self, message: Saved) -> None:
        self._in_flight -= 1
        self.saved(message)
        self.waits.connected_again("saved")
        self._drain()

    @on(Disconnected)
    def _on_disconnected(self, message: Disconnected) -> None:
        """The grade stays on screen, unsaved, while the store thread tries again; grade keys
        are dropped meanwhile (`StoreWaits.refusal`)."""
        request = message.request
        if isinstance(request, ReadRequest | Claim | Look):
            what = "reading the store"
        elif isinstance(request, UndoWrite):
            what = "undo kept, not saved"
        else:
            what = f"grade {request.judgment.grade} for {request.judgment.doc_id} kept, not saved"
        self.waits.disconnected(message, what)

    @on(SaveFailed)
    def _on_save_failed(self, message: SaveFailed) -> None:
        if isinstance(message.request, Claim | Look):
            return  # judging goes on unclaimed; at worst an item gets one judgment too many
        self._in_flight -= 1
        self._waiting.clear()
        self.notify(f"Not saved: {message.error}", severity="error", timeout=10)

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "grade":  # the footer offers the scale's keys only
            return not outside_scale([parameters[0]], self.scale)  # type: ignore[list-item]
        return True

    def action_grade(self, grade: int) -> None:
        """Grade the passage on screen now, or nothing (never one drawn later): the key is
        dropped, and the message says why, while no passage can be graded."""
        refusal = self.waits.refusal()
        if refusal is not None:
            self.waits.refuse(grade, refusal)
            return
        key = self.on_screen()
        assert key is not None
        self._grade(key, grade)

    @on(GradeBar.Chosen)
    def _clicked(self, event: GradeBar.Chosen) -> None:
        self.action_grade(event.grade)

    def action_quit(self) -> None:
        """Quit after the keys typed before `q` are committed. While a grade waits for an
        unreachable server, quit goes to the app at once (it waits, or leaves on a second q)
        instead of queueing behind that grade."""
        if self.app.writer.retrying:  # type: ignore[attr-defined]
            self.app.call_later(self.app.action_quit)
            return
        self._dispatch(lambda: self.app.call_later(self.app.action_quit))
