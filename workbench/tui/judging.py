"""The judging screen: one passage at a time, graded by key or click, each grade committed on
the store thread before the screen advances."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Footer

from workbench.core.model import PoolEntry
from workbench.core.queue import JudgingQueue, Key
from workbench.store import JudgmentStore
from workbench.tui.grade_bar import GradeBar
from workbench.tui.grading import PREFETCH, GradingScreen, grade_binding
from workbench.tui.judging_actions import JudgingActions
from workbench.tui.judging_catch_up import JudgingCatchUp, warm_up
from workbench.tui.panels import DonePanel, ProvenancePanel, QueryPanel
from workbench.tui.passage import PassageView
from workbench.tui.pickers import CoverageSource
from workbench.tui.reads import Start, start_judging, upcoming
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


class JudgingScreen(JudgingActions, JudgingCatchUp, GradingScreen):
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
        Binding("m", "raw", "Markdown source", id="raw", show=False),
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
        self._seen_systems: set[Key] = set()
        """Items whose systems were revealed: a grade key on one asks to be pressed again."""
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
        self._unfitted = 0
        """Grades recorded since the queue's model was last refitted (`_record`)."""
        self._figuring = False
        """A thread computes the status line's figures (`_figure_in_thread`)."""
        self._threads = True
        """Whether they are computed in a thread (False once one failed there)."""
        self._warmed = False
        self._indexing = False
        """A thread builds the queries' text indexes (`_build_indexes`)."""
        """Whether the warm-up is done (`_next_step`)."""

    def compose(self) -> ComposeResult:
        # No header: every row it took is the passage's (the help names annotator and store).
        yield QueryPanel(fold_key="f", id="query")
        yield PassageView(id="passage")
        yield DonePanel(id="done")
        yield ProvenancePanel(id="provenance")
        yield GradeBar(self.scale, id="grades")
        yield StatusLine(self.judging.rel_threshold, id="status")
        yield MessageLine(id="message", stands_for="footer")
        yield Footer(id="footer")

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
            self._warm = warm_up(self.session, start.queue.query_ids())
        self.show_current()
        if self.session is not None and self.session.vector_source is not None:
            self._build_when_painted()
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
        panel = self.query_one(QueryPanel)
        if entry.query_id != self._shown_query:
            first = self._shown_query is None
            self._shown_query = entry.query_id
            query = self.query_of(entry.query_id)
            panel.show(query)
            if panel.chosen and query.narrative and not first:
                self.notify(f"A new query, {entry.query_id}: its narrative is folded (f shows it)")
        if new_item:
            panel.passage_shown(entry.query_id)
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
                    self._record(row.query_id, row.doc_id, relevant)
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
                self._record(*key, judgment.grade >= self.judging.rel_threshold)
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

    def on_screen(self) -> Key | None:
        if not self.loaded or self.finished or self.judging.current is None:
            return None
        return self._shown_key
