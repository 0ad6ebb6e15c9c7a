"""The judging app's use case without a screen: one annotator's queue (the adaptive session and
the study's ranking with it, when the store was pooled for them) and what a key asks of it. The
screen asks what to show (`show`: the passage, its grade and note, and the draw record of the
adaptive pick it is, which then travels with the grade), asks to grade, undo, note, jump, and
why this query (`why`); the session answers with a store request to send (`flows.
judging_requests`) or what to say, and takes in what the store committed (`saved`) and what
other annotators did (`apply`). A grade is checked against the scale here, once. No store call,
no thread, no Textual: tests drive it directly (tests/flows/test_judging_session.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from workbench.core.adaptive.chooser import needs_vectors
from workbench.core.model import (
    DEFAULT_GRADE_SCALE,
    Judgment,
    PoolEntry,
    Role,
    outside_scale,
)
from workbench.core.pool.queue import JudgingQueue
from workbench.core.pool.queue_items import Key, QueueCounts
from workbench.flows.judging_requests import (
    GradeWrite,
    JudgmentWrite,
    NoteWrite,
    UndoWrite,
    timed_judgment,
)
from workbench.flows.judging_start import Start, start_judging
from workbench.reports.ranking_words import ranking_words
from workbench.store import JudgmentStore

if TYPE_CHECKING:
    from workbench.core.adaptive import AdaptiveSession
    from workbench.core.adaptive.estimate import Draw
    from workbench.core.study.target import StudyRanking

PENDING_GOAL = "…"
"""The adaptive queue's word on a query before it is first worked out."""


@dataclass(frozen=True)
class Shown:
    """The item to show: its passage's key, pool entry, this annotator's grade and note, and,
    when it is the adaptive queue's random pick, the draw record saved with its grade."""

    key: Key
    entry: PoolEntry
    grade: int | None
    note: str
    draw: Draw | None
    draw_known: bool
    """False while the adaptive queue's pick for the query is to be made again (a grade in it
    taken in since the chooser chose the item): the grade key makes it (`JudgingSession.grade`)."""
    new_item: bool
    """Not the item shown last (its passage is drawn, its claim asked for)."""


@dataclass(frozen=True)
class Refused:
    """A key that does nothing, and why."""

    why: str


@dataclass(frozen=True)
class ConfirmGrade:
    """A grade of an item whose systems were revealed: asked to be pressed again."""

    key: Key
    grade: int


@dataclass(frozen=True)
class Why:
    """Why this query, in the status line's words: the adaptive queue's word on it (what it
    still needs) and the study's (its interval, and whether this query is the plan's first)."""

    goal: str | None
    study: str | None


class JudgingSession:
    """One annotator's judging: the queue and the state a key reads, and the decisions."""

    def __init__(self, annotator: str, rel_threshold: int = 1) -> None:
        self.annotator = annotator
        self.scale: dict[int, str] = dict(DEFAULT_GRADE_SCALE)
        """The store's grade scale (the default until the start read brings it)."""
        self.queue = JudgingQueue([], rel_threshold=rel_threshold)
        """The annotator's queue (empty until the start read brings it)."""
        self.adaptive: AdaptiveSession | None = None
        """The adaptive queue's state, None for a static queue."""
        self.ranking: StudyRanking | None = None
        """The study's ranking of the queries the adaptive queue's chooser follows."""
        self.query_order: dict[str, int] = {}
        self.notes: dict[Key, str] = {}
        """Notes typed and not saved yet (waiting for a grade, or on their way)."""
        self.seen_systems: set[Key] = set()
        """Items whose systems were revealed: a grade of one asks to be pressed again."""
        self.shown: Shown | None = None
        self.confirming: tuple[Key, int] | None = None
        self.goals: dict[str, tuple[int, str | None]] = {}
        """Per query, the adaptive queue's word on it and the judgments it was computed at
        (computed off the grade key's path, while the annotator reads)."""
        self.unfitted = 0
        """Grades recorded since the adaptive queue's model was last refitted (`record`)."""

    def start_read(
        self,
        pool: list[PoolEntry] | None,
        follow: Callable[[str, int], None],
        prefetch: int,
    ) -> Callable[[JudgmentStore], Start]:
        """The start read, for the store thread (`start`'s input)."""
        return partial(
            start_judging,
            annotator=self.annotator,
            rel_threshold=self.rel_threshold,
            pool=pool,
            follow=follow,
            prefetch=prefetch,
        )

    def start(self, start: Start) -> None:
        """Take in the start read (`flows.judging_start.start_judging`)."""
        assert start.queue is not None
        self.scale = start.scale
        self.queue = start.queue
        self.adaptive = start.session
        self.ranking = start.ranking
        self.query_order = {qid: n for n, qid in enumerate(start.queue.query_ids(), start=1)}

    @property
    def rel_threshold(self) -> int:
        return self.queue.rel_threshold

    # -- what to show -------------------------------------------------------------------------

    def show(self) -> Shown | None:
        """The item to show now (None: the queue is empty)."""
        entry = self.queue.current
        if entry is None:
            return None
        key = (entry.query_id, entry.doc_id)
        grade = self.queue.grade_of(key)
        last = self.shown
        new_item = last is None or last.key != key
        draw, known = (None, True) if grade is not None else self._draw_of(key)
        self.shown = Shown(key, entry, grade, self.note_of(key), draw, known, new_item)
        return self.shown

    def _draw_of(self, key: Key) -> tuple[Draw | None, bool]:
        """The draw record of the adaptive queue's pick when `key` is it, and whether that is
        known: the pick the chooser made when it chose the item (no model computed here). A
        pick undone since (a grade taken in, in its query) is made again on the grade key
        (`grade`), as the chooser would."""
        if self.adaptive is None:
            return None, True
        record = self.adaptive.queries.get(key[0])
        if record is None:
            return None, True
        if record.pending is None and not record.next_ready:
            return None, False
        return self._pick_draw(key), True

    def _pick_draw(self, key: Key) -> Draw | None:
        assert self.adaptive is not None
        pick = self.adaptive.next_pick(key[0])
        return pick.draw if pick is not None and pick.doc_id == key[1] else None

    def note_of(self, key: Key) -> str:
        """The item's note: one typed and not saved yet, else the one saved with this
        annotator's current grade."""
        if key in self.notes:
            return self.notes[key]
        return self.queue.notes.get(key, "")

    def why(self, query_id: str) -> Why:
        """Why this query is served, as the status line says it (nothing for a static queue)."""
        study = ranking_words(self.ranking, query_id) if self.ranking is not None else None
        return Why(self.goal(query_id), study)

    def goal(self, query_id: str) -> str | None:
        """The adaptive queue's word on the query as last computed (`goals`), PENDING_GOAL
        before the first time."""
        if self.adaptive is None or query_id not in self.adaptive.queries:
            return None
        cached = self.goals.get(query_id)
        return cached[1] if cached is not None else PENDING_GOAL

    def counted(self) -> dict[str, int] | None:
        """Per query, the judgments that count toward the adaptive estimate: every annotator's
        by the project's resolution rule; None for a static queue."""
        if self.adaptive is None:
            return None
        return {qid: self.adaptive.judged(qid) for qid in self.adaptive.queries}

    def progress(self, query_id: str) -> tuple[QueueCounts, QueueCounts]:
        """The query's counts and the whole queue's; for the adaptive queue, judged is what
        counts toward the estimate (every annotator's), this annotator's own said apart."""
        this_query, overall = self.queue.progress(query_id), self.queue.overall()
        counted = self.counted()
        if counted is not None:
            overall = replace(overall, judged=sum(counted.values()))
            this_query = replace(this_query, judged=counted.get(query_id, this_query.judged))
        return this_query, overall

    # -- what a key asks ----------------------------------------------------------------------

    def needs_vectors(self, key: Key) -> bool:
        """Whether the adaptive queue's pick after a grade of `key` needs every passage read
        and indexed (a grade then waits: it would block the screen for seconds)."""
        return self.adaptive is not None and needs_vectors(self.adaptive, *key)

    def takes(self, grade: int) -> bool:
        """Whether `grade` is on the store's scale (`core.model.outside_scale`, the rule
        every write of a grade passes): the footer offers only these keys."""
        return not outside_scale([grade], self.scale)

    def grade(self, grade: int, shown_at: float) -> GradeWrite | ConfirmGrade | Refused:
        """Grade the item shown. Once its systems were revealed, only when the same grade is
        asked twice (a grade made knowing which systems found the passage is not a blind one)."""
        shown = self.shown
        if not self.takes(grade):
            return Refused(f"grade {grade} is not on the scale {sorted(self.scale)}")
        if shown is None:
            return Refused("no passage to grade")
        key = shown.key
        if key in self.seen_systems and self.confirming != (key, grade):
            self.confirming = (key, grade)
            return ConfirmGrade(key, grade)
        self.confirming = None
        judgment = self._stamp(key, grade, self.note_of(key), shown_at)
        draw = shown.draw if shown.draw_known else self._pick_draw(key)
        return GradeWrite(judgment, draw)

    def undo(self) -> Key | None:
        """Go back to the last graded item (its note kept for the next grade); None when there
        is none. The screen shows it, then sends `undo_write`."""
        key = self.queue.last_graded()
        if key is None:
            return None
        self.queue.cursor = self.queue.index_of(key)
        note = self.queue.notes.get(key)
        if note and key not in self.notes:
            self.notes[key] = note
        return key

    def undo_write(self, key: Key, shown_at: float) -> UndoWrite:
        return UndoWrite(self._stamp(key, None, "", shown_at))

    def note(self, key: Key, text: str, shown_at: float) -> NoteWrite | str | None:
        """A note typed for `key`: a row to write when it is graded (the same grade again), the
        word "kept" or "removed" while it waits for its grade, None when it did not change."""
        if text == self.note_of(key):
            return None
        graded = self.queue.grade_of(key)
        if graded is not None:
            self.notes[key] = text
            return NoteWrite(self._stamp(key, graded, text, shown_at))
        if text:
            self.notes[key] = text
            return "kept"
        self.notes.pop(key, None)
        return "removed"

    def jump(self, query_id: str) -> bool:
        """Go to the query's next item for this annotator; False when none is left to them."""
        return self.queue.jump_to_query(query_id)

    def skip(self) -> bool:
        """Put the item shown at the end of the queue, for this session; False for the adaptive
        queue (it may have drawn it at random: a skip would bias its estimate)."""
        if self.adaptive is not None:
            return False
        self.queue.skip()
        return True

    def can_go_back(self) -> bool:
        """Whether a move from the done panel has an item to show: the adaptive queue shows
        only its picks and this annotator's grades."""
        return self.adaptive is None or bool(self.queue.history)

    def at_pick(self) -> bool:
        """Whether the item shown is the adaptive queue's pick (nothing comes after it)."""
        current = self.queue.current
        if self.adaptive is None or current is None:
            return False
        return self.queue.grade_of((current.query_id, current.doc_id)) is None

    def reveal(self, key: Key) -> None:
        """Systems were shown for `key`: its next grade asks to be confirmed."""
        self.seen_systems.add(key)

    def _stamp(self, key: Key, grade: int | None, note: str, shown_at: float) -> Judgment:
        return timed_judgment(self.annotator, key[0], key[1], grade, note, shown_at, Role.HUMAN)

    # -- what the store answers ---------------------------------------------------------------

    def saved(self, write: JudgmentWrite) -> bool:
        """A row of this annotator is committed: the queue and the adaptive state take it in;
        a grade moves on. False when a grade left nothing to move on to."""
        key = write.key
        if isinstance(write, UndoWrite):
            if self.adaptive is not None:
                self.adaptive.forget(*key)
            self.queue.undo(key)
            return True
        grade = write.judgment.grade
        assert grade is not None
        if self.adaptive is not None:
            self.record(*key, grade >= self.rel_threshold)
        self.queue.record(key, grade, write.judgment.note)
        self.notes.pop(key, None)
        if isinstance(write, GradeWrite):
            self.queue.cursor = self.queue.index_of(key)
            return self.queue.advance()
        return True

    def apply(self, rows: tuple[Judgment, ...], claims: Mapping[str, Key] | None = None) -> None:
        """Other annotators' rows (their grades stay unseen, only counts change; a human's
        counts for the adaptive queue too, its draws included) and live claims."""
        for row in rows:
            self.queue.observe(row)
            theirs = row.role == "human" and row.annotator != self.annotator
            if self.adaptive is not None and theirs:
                if row.grade is None:
                    self.adaptive.forget(row.query_id, row.doc_id)
                else:
                    self.record(row.query_id, row.doc_id, row.grade >= self.rel_threshold)
        if claims is not None:
            self.queue.set_claims(claims)

    def claim_lost(self, key: Key) -> bool | None:
        """Enough others have `key`, the item shown, open: move on (None: the queue stays
        where it is; False: nothing is left to move on to)."""
        if self.shown is None or key != self.shown.key or self.queue.grade_of(key) is not None:
            return None  # shown no more, or this annotator acted on it: their grade adds one
        return self.queue.advance()

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        """A grade that counts, into the adaptive state; the refit it makes due (every
        `refit_every` grades) waits until the next passage is drawn (its pick, and the draw
        record with it, are of the model before it)."""
        assert self.adaptive is not None
        self.adaptive.record(query_id, doc_id, relevant, refit=False)
        self.unfitted += 1

    def refit(self) -> None:
        assert self.adaptive is not None
        self.unfitted = 0
        self.adaptive.refit()
