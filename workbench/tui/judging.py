"""The judging screen: one passage at a time, graded by key or click, each grade committed on
the store thread before the screen advances."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Footer, Header

from workbench.core.coverage.to_go import to_go
from workbench.core.model import PoolEntry
from workbench.core.queue import JudgingQueue, Key
from workbench.store import JudgmentStore
from workbench.tui.grade_bar import GradeBar
from workbench.tui.grading import PREFETCH, GradingScreen, grade_binding
from workbench.tui.help import HelpScreen, judging_help
from workbench.tui.panels import DonePanel, ProvenancePanel, QueryPanel
from workbench.tui.passage import PassageView
from workbench.tui.pickers import CoverageSource, NoteScreen, QueryPicker, query_rows
from workbench.tui.reads import Start, jump_targets, start_judging, upcoming
from workbench.tui.status_lines import MessageLine, StatusLine
from workbench.tui.writer import (
    Claimed,
    Looked,
    Saved,
    SharedUpdate,
    StoreWriter,
    WriteRequest,
)

LOOK_EVERY_S = 5.0
"""How often the screen asks the store what other annotators did (figures stay current) and
renews its claim (well inside store.CLAIM_TTL_S)."""
AFTER_GRADE_ONLY = frozenset({"grade", "note", "reveal", "skip"})
"""Actions that act on the passage, so do nothing while the done panel hides it."""


class JudgingScreen(GradingScreen):
    """Grade the annotator's queue, one passage at a time."""

    BINDINGS = [
        *[grade_binding(grade, "grade") for grade in range(10)],
        Binding("u", "undo", "Undo", id="undo"),
        Binding("s", "skip", "Skip", id="skip"),
        Binding("n", "note", "Note", id="note"),
        # Reveal and the overview stay in help (?) and the palette, off the footer: at 80
        # columns the footer then keeps Quit, Prev and Next.
        Binding("r", "reveal", "Reveal", id="reveal", show=False),
        Binding("f", "fold", "Fold narrative", id="fold", show=False),
        Binding("g,slash", "jump", "Jump to query", id="jump", show=False),
        Binding("o", "overview", "Queries", id="overview", show=False),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("k,left", "move(-1)", "Prev", id="previous"),
        Binding("j,right", "move(1)", "Next", id="next"),
    ]

    revealed: reactive[bool] = reactive(False)
    """Whether systems, ranks and scores are shown for the current (already graded) item."""
    finished: reactive[bool] = reactive(False, bindings=True)
    """Whether the done panel stands in place of the passage (nothing left; the user has not
    acted since)."""

    def __init__(
        self,
        writer: StoreWriter,
        annotator: str,
        rel_threshold: int = 1,
        pool: list[PoolEntry] | None = None,
        coverage: CoverageSource | None = None,
        notices: tuple[str, ...] = (),
    ):
        super().__init__(writer, annotator)
        self.notices = notices
        """Said on the message line at start (e.g. a system the pool was built without)."""
        self.coverage = coverage
        """Computes the coverage report for the overview's panel (run in a worker thread)."""
        self._pool = pool
        self.judging = JudgingQueue([], rel_threshold=rel_threshold)
        """The annotator's queue (empty until the start read brings it)."""
        self._query_order: dict[str, int] = {}
        self._notes: dict[Key, str] = {}
        self._shown_key: Key | None = None
        self._shown_query: str | None = None
        self.session: Any = None
        self.ranking: Any = None
        """The adaptive queue's state (core.adaptive.AdaptiveSession), None for a static
        queue; only this (the UI) thread touches it after the start read."""
        self.on_shown: Callable[[Key], None] | None = None
        """A hook called after a new item's passage is on screen (the latency bench uses it)."""
        self._goals: dict[str, tuple[int, str | None]] = {}
        """Per query, the adaptive queue's word on it and the judgments it was computed at
        (`_query_goal`): the status line shows it at once, and it is computed again off the
        grade key's path (`_catch_up`)."""
        self._warm: Iterator[Callable[[], object]] = iter(())
        """The catch-up's last steps: each query's passage vectors, a few dozen a step, then its
        relevance model, computed once (built on first use otherwise: on a grade's path)."""
        self._catching_up: Any = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield QueryPanel(fold_key="f", id="query")
        yield PassageView(id="passage")
        yield DonePanel(id="done")
        yield ProvenancePanel(id="provenance")
        yield GradeBar(self.scale, id="grades")
        yield MessageLine(id="message")
        yield StatusLine(self.judging.rel_threshold, id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PassageView).focus()
        self._read_start()

    def start_read(self) -> Callable[[JudgmentStore], Start]:
        return partial(
            start_judging,
            annotator=self.annotator,
            rel_threshold=self.judging.rel_threshold,
            pool=self._pool,
            follow=self.writer.follow,
            prefetch=PREFETCH,
        )

    def started(self, start: Start) -> None:
        assert start.queue is not None
        self.judging = start.queue
        self._pool = None  # the queue holds it now
        self.session = start.session
        self.ranking = start.ranking
        self._query_order = {qid: n for n, qid in enumerate(start.queue.query_ids(), start=1)}
        if self.session is not None:
            self._warm = _warm_up(self.session, start.queue.query_ids())
        self.show_current()
        self.finished = self.judging.done
        self.set_interval(LOOK_EVERY_S, self._look)
        if self.notices:  # stays until the first grade (or 30 s), never over the narrative
            self.notify(" · ".join(self.notices), severity="warning", timeout=30)

    def ahead(self) -> list[str]:
        return upcoming(self.judging, PREFETCH)

    # -- showing ------------------------------------------------------------------------------

    def show_current(self) -> None:
        entry = self.judging.current
        if entry is None:
            return
        key = (entry.query_id, entry.doc_id)
        new_item = key != self._shown_key
        if new_item:
            self._shown_key = key
            self.revealed = False
            # A message about the item left behind (skipped, undone, ...) is stale now; one
            # about the new item is said after this call.
            self.query_one(MessageLine).clear_stale()
        if entry.query_id != self._shown_query:
            first = self._shown_query is None
            self._shown_query = entry.query_id
            panel = self.query_one(QueryPanel)
            query = self.query_of(entry.query_id)
            panel.show(query)
            if panel.folded and query.narrative and not first:
                self.notify(f"A new query, {entry.query_id}: its narrative is folded (f shows it)")
        drawn = self._show_passage(key, entry.doc_id)
        grade = self.judging.grade_of(key)
        self.query_one(GradeBar).mark(grade)
        self.query_one(ProvenancePanel).show(entry, self.revealed)
        self._show_status(key, grade)
        if new_item and grade is None:
            self._claim(key)
        if drawn and self.on_shown is not None:
            self.call_after_refresh(self.on_shown, key)
        if self.session is not None:  # after the frame that shows it
            self._pause_catch_up()
            self.call_after_refresh(self._schedule_catch_up)

    def _show_status(self, key: Key, grade: int | None) -> None:
        counted = self._counted()
        overall = self.judging.overall()
        this_query = self.judging.progress(key[0])
        if counted is not None:  # the adaptive queue: what counts toward the estimate
            overall = replace(overall, judged=sum(counted.values()))
            this_query = replace(this_query, judged=counted.get(key[0], this_query.judged))
        if self.finished:
            self.query_one(DonePanel).show(
                overall.yours, overall.relevant, self.judging.rel_threshold,
                None if counted is None else overall.judged,
            )  # fmt: skip
        self.query_one(StatusLine).show(
            self._query_order.get(key[0], 0),
            len(self._query_order),
            this_query,
            overall,
            *self.judging.your_queue(),
            None if grade is None else f"{grade} {self.scale.get(grade, '')}",
            self.note_of(key),
            self._query_goal(key[0]),
            self.ranking.words(key[0]) if self.ranking is not None else None,
        )

    def _counted(self) -> dict[str, int] | None:
        """Per query, the judgments that count toward the adaptive estimate: every annotator's
        (an oracle's, a colleague's) by the project's resolution rule, as the session holds
        them; None for a static queue."""
        if self.session is None:
            return None
        return {qid: self.session.judged(qid) for qid in self.session.queries}

    def _query_goal(self, query_id: str) -> str | None:
        """The adaptive queue's word on the query (None for a static queue), as last computed:
        its refitted state takes tens of ms, so it is brought up to date by `_catch_up`, after
        the next passage is on screen."""
        if self.session is None or query_id not in self.session.queries:
            return None
        cached = self._goals.get(query_id)
        return cached[1] if cached is not None else None

    def _fresh_goal(self, query_id: str) -> str | None:
        return to_go(self.session.refitted_state(query_id), adaptive=True).words

    # -- work done while the annotator reads --------------------------------------------------

    CATCH_UP_S = 0.01
    """The catch-up starts this long after the frame that shows a passage..."""
    STEP_GAP_S = 0.005
    """...and leaves this long between two steps (each a few ms, the word on the query tens):
    a key typed meanwhile is handled before the next step."""

    def _pause_catch_up(self) -> None:
        if self._catching_up is not None:
            self._catching_up.stop()
            self._catching_up = None

    def _schedule_catch_up(self, delay: float | None = None) -> None:
        """The next catch-up step after `delay` (CATCH_UP_S by default), replacing a step
        already waiting."""
        self._pause_catch_up()
        wait = self.CATCH_UP_S if delay is None else delay
        self._catching_up = self.set_timer(wait, self._catch_up)

    def _catch_up(self) -> None:
        """One step of the adaptive queue's work kept off the grade key's path, while the
        annotator reads: the status line's word on the query on screen, then the study's
        ranking of the queries when it is due (so the next choice finds it made), then one
        query's relevance model computed once (its similarity index built). Steps go on,
        one per timer, until nothing is left; a grade starts them again."""
        self._catching_up = None
        if self.session is None or not self.is_mounted:
            return
        step = self._next_step()
        if step is None:
            return
        step()
        self._schedule_catch_up(self.STEP_GAP_S)

    def _next_step(self, peek: bool = False) -> Callable[[], None] | None:
        """The catch-up's next step; with `peek`, only those the status line waits for."""
        session = self.session
        key = self._shown_key
        judged = sum(session.judged(q) for q in session.queries)
        if key is not None and key[0] in session.queries:
            cached = self._goals.get(key[0])
            if cached is None or cached[0] != judged:
                return partial(self._update_goal, key[0], judged)
        if self.ranking is not None and self.ranking.due():
            return self._update_ranking
        if peek:
            return None
        return next(self._warm, None)

    def _update_goal(self, query_id: str, judged: int) -> None:
        before = self._goals.get(query_id)
        words = self._fresh_goal(query_id)
        self._goals[query_id] = (judged, words)
        if before is None or before[1] != words:
            self._redraw_status()

    def _update_ranking(self) -> None:
        assert self.ranking is not None
        before = self.ranking.words(self._shown_query or "")
        self.ranking.refresh()
        if self.ranking.words(self._shown_query or "") != before:
            self._redraw_status()

    def _redraw_status(self) -> None:
        key = self._shown_key
        if key is not None and self.judging.current is not None:
            self._show_status(key, self.judging.grade_of(key))

    def watch_revealed(self, revealed: bool) -> None:
        if self.is_mounted:
            self.query_one(ProvenancePanel).show(self.judging.current, revealed)

    def watch_finished(self, finished: bool) -> None:
        self.query_one(PassageView).display = not finished
        self.query_one(DonePanel).display = finished
        if finished:
            self.revealed = False
        self.show_current()

    # -- the store thread ---------------------------------------------------------------------

    def _claim(self, key: Key) -> None:
        """Tell the store this annotator has the item open, so others pass it by (no wait:
        the answer comes as Claimed)."""
        self.writer.submit(
            WriteRequest(None, "claim", self, claim=(self.annotator, key[0], key[1]))
        )

    def _look(self) -> None:
        """Ask what others did and renew the claim (skipped while a write is on its way: that
        one's reply brings the same news, and the next look renews)."""
        if not self.writer.busy:
            self.writer.submit(WriteRequest(None, "look", self))

    @on(Looked)
    def _looked(self, message: Looked) -> None:
        self._apply(message.update)
        reopened = self.finished and not self.judging.done and self.judging.advance()
        self.finished = self.finished and not reopened
        self.show_current()
        if reopened:
            self.notify("More passages opened up for you (another annotator undid a grade)")
        self._drain()

    def _apply(self, update: SharedUpdate | None) -> None:
        """Take in what other annotators did (their grades stay unseen: only counts change)."""
        if update is None:
            return
        for row in update.rows:
            self.judging.observe(row)
            if self.session is not None and row.role == "human" and row.annotator != self.annotator:
                # Another annotator's grade counts for the policy too (its draws included).
                if row.grade is None:
                    self.session.forget(row.query_id, row.doc_id)
                else:
                    relevant = row.grade >= self.judging.rel_threshold
                    self.session.record(row.query_id, row.doc_id, relevant)
        self.judging.set_claims(update.claims)

    def _submit_grade(self, key: Key, grade: int | None, kind: str, note: str = "") -> None:
        draw = None
        if self.session is not None and kind == "grade":
            pick = self.session.next_pick(key[0])
            if pick is not None and pick.doc_id == key[1]:
                draw = pick.draw
        self._send(key[0], key[1], grade, note, kind, draw=draw)

    def saved(self, message: Saved) -> None:
        self._apply(message.update)
        judgment = message.request.judgment
        assert judgment is not None
        key = (judgment.query_id, judgment.doc_id)
        if message.request.kind == "undo":
            if self.session is not None:
                self.session.forget(*key)
            self.judging.undo(key)
            self._claim(key)
        else:
            if self.session is not None and judgment.grade is not None:
                self.session.record(*key, judgment.grade >= self.judging.rel_threshold)
            self.judging.record(key, judgment.grade, judgment.note)  # type: ignore[arg-type]
            self._notes.pop(key, None)
            if message.request.kind == "note":
                if judgment.note:
                    self.notify(f"Note saved for {key[1]} (a new row, same grade)", timeout=3)
                else:
                    self.notify(f"Note removed from {key[1]} (a new row, same grade)", timeout=3)
            if message.request.kind == "grade":
                self.judging.cursor = self.judging.index_of(key)
                if not self.judging.advance():
                    self.finished = True
        self.show_current()
        if message.request.kind == "undo":
            kept = " (its note stays for the next grade)" if key in self._notes else ""
            self.notify(f"Undone: {key[1]} is ungraded again{kept}", timeout=3)

    @on(Claimed)
    def _claimed(self, message: Claimed) -> None:
        """A lost claim means enough others judge the item: move on, unless this annotator
        already acted on it (then their grade simply adds a judgment)."""
        self._apply(message.update)
        claim = message.request.claim
        assert claim is not None
        key = (claim[1], claim[2])
        acted = self.judging.grade_of(key) is not None or self._in_flight or self._waiting
        if message.won or key != self._shown_key or acted:
            self.show_current()
            self._drain()
            return
        if self.judging.advance():
            self.show_current()
            self.notify("Another annotator has that passage: here is the next one", timeout=3)
        else:
            self.finished = True
            self.show_current()
            self.notify("Nothing is left for you: others have the remaining items", timeout=5)
        self._drain()

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.finished and action in AFTER_GRADE_ONLY:
            return False
        return super().check_action(action, parameters)

    @property
    def settled(self) -> bool:
        """As the grading screen's, and the status line up to date (`_catch_up`'s first steps
        done; the models still to compute once do not count)."""
        return super().settled and not self._status_behind()

    def _status_behind(self) -> bool:
        if self.session is None or not self.loaded:
            return False
        step = self._next_step(peek=True)
        return step is not None

    def on_screen(self) -> Key | None:
        if not self.loaded or self.finished or self.judging.current is None:
            return None
        return self._shown_key

    def _grade(self, key: Key, grade: int) -> None:
        if grade in self.scale:
            self._submit_grade(key, grade, "grade", self.note_of(key))

    def note_of(self, key: Key) -> str:
        """The item's note: one typed and not saved yet (waiting for a grade, or on its way),
        else the one saved with this annotator's current grade."""
        if key in self._notes:
            return self._notes[key]
        return self.judging.notes.get(key, "")

    def action_undo(self) -> None:
        self._dispatch(self._undo)

    def _undo(self) -> None:
        key = self.judging.last_graded()
        if key is None:
            self.notify("Nothing to undo", timeout=2)
            return
        self.judging.cursor = self.judging.index_of(key)
        self.finished = False
        note = self.judging.notes.get(key)
        if note and key not in self._notes:  # kept for the next grade, shown in the status
            self._notes[key] = note
        self.show_current()
        self._submit_grade(key, None, "undo")

    def action_skip(self) -> None:
        def skip() -> None:
            if self.session is not None:
                self.notify(  # the advice first: the message line is cut at its width
                    "No skip: grade it, or g for another query (the queue may have drawn it at "
                    "random)",
                    timeout=4,
                )
                return
            self.judging.skip()
            self.show_current()
            self.notify(
                "Skipped for this session: it comes back at the end of your queue", timeout=3
            )

        self._dispatch(skip)

    def action_move(self, delta: int) -> None:
        def move() -> None:
            if self.finished:  # the first move shows the last graded passage again
                if self.session is not None and not self.judging.history:
                    # The adaptive queue shows only its picks and this annotator's grades.
                    self.notify("You have graded nothing to go back to", timeout=2)
                    return
                self.finished = False
                return
            moved = self.judging.move(delta)
            self.show_current()
            current = self.judging.current
            pick = current is not None and (
                self.judging.grade_of((current.query_id, current.doc_id)) is None
            )
            if not moved and delta > 0 and self.session is not None and pick:
                self.notify("This is the queue's pick, nothing comes after it: grade it", timeout=2)
            elif not moved:
                self.notify(
                    "That is the " + ("last" if delta > 0 else "first") + " item", timeout=2
                )

        self._dispatch(move)

    def action_reveal(self) -> None:
        if self._shown_key is None or self.judging.grade_of(self._shown_key) is None:
            self.notify(
                "Grade it first: systems, ranks and scores stay hidden until then (k: back to"
                " the one you just graded)",
                severity="warning",
                timeout=3,
            )
            return
        self.revealed = not self.revealed
        if self.revealed:
            self.notify("Systems shown: let them not sway the grades that follow", timeout=3)

    def action_note(self) -> None:
        self._dispatch(self._open_note)

    def _open_note(self) -> None:
        """A note on the passage on screen, graded or not: the dialog names it, its place and
        whether it is graded (n pressed after a grade is on the next passage, not the one just
        graded). Not graded yet, the note waits for its grade (said in the status line)."""
        key = self._shown_key
        if key is None:
            return
        grade = self.judging.grade_of(key)
        position, length = self.judging.your_queue()
        where = f"query {key[0]}, passage {position}/{length} of your queue"
        if grade is not None:
            state = f"graded {grade} {self.scale.get(grade, '')}: the note is saved at once"
        else:
            state = "not graded yet: the note is saved with its grade"
            last = self.judging.last_graded()
            if last is not None and last != key:
                state += " (for the one you graded last: Escape, then k)"

        def done(text: str | None) -> None:
            if text is None or self._shown_key != key:
                return
            before = self.note_of(key)
            if text == before:
                self.notify("Note unchanged" if text else "No note added", timeout=2)
                return
            graded = self.judging.grade_of(key)
            if graded is not None:  # a new row, same grade: the latest row's note is current
                self._notes[key] = text
                self._dispatch(lambda: self._submit_grade(key, graded, "note", text))
            elif text:
                self._notes[key] = text
                self.notify(f"Note kept for {key[1]}: saved with its grade", timeout=3)
            else:
                self._notes.pop(key, None)
                self.notify(f"Note removed from {key[1]}", timeout=3)
            self.show_current()

        self.app.push_screen(NoteScreen(self.note_of(key), key[1], where, state), done)

    def _pick_query(self, filter_first: bool) -> None:
        self._ask(jump_targets(self.judging))  # read while the annotator picks
        rows = query_rows(self.judging, self.queries, counted=self._counted())
        current = self.judging.current.query_id if self.judging.current else None

        def done(query_id: str | None) -> None:
            if query_id is None:
                return
            if self.judging.jump_to_query(query_id):
                self.finished = False
                self.show_current()
            else:
                self.notify(f"Nothing in {query_id} is left for you: others judge it", timeout=3)

        self.app.push_screen(
            QueryPicker(
                rows,
                current,
                filter_first,
                None if filter_first else self.coverage,
                self.judging.rel_threshold,
            ),
            done,
        )

    def action_jump(self) -> None:
        self._dispatch(lambda: self._pick_query(filter_first=True))

    def action_overview(self) -> None:
        self._dispatch(lambda: self._pick_query(filter_first=False))

    def action_help(self) -> None:
        self.app.push_screen(
            HelpScreen(
                judging_help(
                    self.scale, self.judging.rel_threshold, adaptive=self.session is not None
                )
            )
        )


WARM_STEP = 32
"""Passage vectors computed in one step of the warm-up (a few ms)."""


def _warm_up(session: Any, query_ids: Sequence[str]) -> Iterator[Callable[[], object]]:
    """Steps that compute, once, what the adaptive queue otherwise computes on first use: each
    query's passage vectors, then its relevance model (the frame's similarity index)."""
    for query_id in query_ids:
        if query_id not in session.queries:
            continue
        doc_ids = list(session.queries[query_id].frame.doc_ids)
        for start in range(0, len(doc_ids), WARM_STEP):
            chunk = doc_ids[start : start + WARM_STEP]
            yield partial(_vectors, session.vectors, chunk)
        yield partial(session.probabilities, query_id)


def _vectors(vectors: Any, doc_ids: list[str]) -> None:
    for doc_id in doc_ids:
        vectors.of(doc_id)
