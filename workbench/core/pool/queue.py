"""An annotator's judging queue: the shared pool in order, their current grades, a cursor, skips
and undo. Pure: no store, no UI; the judging app drives it and persists what it records.

The pool is one queue shared by every annotator. An item needs `required` distinct human
judges (1, or 2 for items marked for overlap). An item is *open* to this annotator when they
have not graded it and fewer other annotators than it requires have graded it or hold it open
(a claim); it is *done* when this annotator graded it or enough others did. So annotators
working at once split the work, and an overlap item reaches two of them, each blind to the
other's grade. With one annotator and no overlap, open = not yet graded by them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from workbench.core.model import Judgment, PoolEntry, Role
from workbench.core.pool.queue_items import Chooser, Key, QueueCounts


class JudgingQueue:
    """The pool as one ordered list (queries in order, items by position) with a cursor.

    `grades` holds this annotator's current grades; `history` the keys in the order they were
    graded, so undo can walk back across sessions. `required` maps items needing more than one
    judge; `others` maps items to the other human annotators whose current grade exists;
    `claims` maps other annotators to the item they have open."""

    def __init__(
        self,
        pool: Sequence[PoolEntry],
        grades: Mapping[Key, int] | None = None,
        history: Iterable[Key] = (),
        rel_threshold: int = 1,
        *,
        required: Mapping[Key, int] | None = None,
        others: Mapping[Key, Iterable[str]] | None = None,
        claims: Mapping[str, Key] | None = None,
        notes: Mapping[Key, str] | None = None,
    ):
        self.items: list[PoolEntry] = list(pool)
        self.notes: dict[Key, str] = {k: v for k, v in (notes or {}).items() if v}
        """The note of this annotator's current grade of an item, where it has one."""
        self._keys: list[Key] = [(e.query_id, e.doc_id) for e in self.items]
        self.rel_threshold = rel_threshold
        self.required: dict[Key, int] = dict(required or {})
        self.grades: dict[Key, int] = {}
        self.history: list[Key] = []
        self._others: dict[Key, set[str]] = {k: set(v) for k, v in (others or {}).items() if v}
        self._claimed: dict[Key, set[str]] = {}
        self._claim_of: dict[str, Key] = {}
        self._pooled: dict[str, int] = {}
        self._done: set[Key] = set()
        self._judged: dict[str, int] = {}
        self._yours: dict[str, int] = {}
        self._relevant: dict[str, int] = {}
        for qid, _ in self._keys:
            self._pooled[qid] = self._pooled.get(qid, 0) + 1
        self._key_set = set(self._keys)
        for key, grade in (grades or {}).items():
            if key in self._key_set:
                self._set(key, grade)
        for key in self._others:
            if key in self._key_set:
                self._refresh(key)
        self.set_claims(claims or {})
        self.history = [k for k in history if k in self.grades]
        self._index = {k: i for i, k in enumerate(self._keys)}
        self.chooser: Chooser | None = None
        """The adaptive queue's choice (`use_policy`): the next item given the current query."""
        self.cursor = self._start()

    @classmethod
    def from_judgments(
        cls,
        pool: Sequence[PoolEntry],
        current: Iterable[Judgment],
        rel_threshold: int = 1,
        *,
        annotator: str | None = None,
        required: Mapping[Key, int] | None = None,
        claims: Mapping[str, Key] | None = None,
    ) -> JudgingQueue:
        """Build from the store's current judgments (oldest first). With `annotator`, `current`
        may hold everyone's: theirs become the grades, other humans' fill `others`, other roles
        (adjudicator, model, oracle) are left out. Without it, every row is this annotator's."""
        mine: list[Judgment] = []
        others: dict[Key, set[str]] = {}
        for j in current:
            if j.grade is None:
                continue
            if annotator is None or j.annotator == annotator:
                mine.append(j)
            elif j.role == Role.HUMAN:
                others.setdefault((j.query_id, j.doc_id), set()).add(j.annotator)
        grades = {(j.query_id, j.doc_id): int(j.grade) for j in mine}  # type: ignore[arg-type]
        notes = {(j.query_id, j.doc_id): j.note for j in mine}
        return cls(
            pool,
            grades,
            [(j.query_id, j.doc_id) for j in mine],
            rel_threshold,
            required=required,
            others=others,
            claims={a: k for a, k in (claims or {}).items() if a != annotator},
            notes=notes,
        )

    # -- reading ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.items)

    @property
    def current(self) -> PoolEntry | None:
        return self.items[self.cursor] if self.items else None

    def key_at(self, index: int) -> Key:
        return self._keys[index]

    def grade_of(self, key: Key) -> int | None:
        return self.grades.get(key)

    def index_of(self, key: Key) -> int:
        index = self._index.get(key)
        if index is None or self._keys[index] != key:  # skip() moved items: rebuild
            self._index = {k: i for i, k in enumerate(self._keys)}
            index = self._index[key]
        return index

    def use_policy(self, chooser: Chooser) -> None:
        """Serve by a policy from now on (workbench.core.adaptive): `advance` and `done` ask it
        for the next item, starting from the query of this annotator's last grade (reopening
        goes on where they stopped), else the current one; the cursor moves to its first, or,
        with nothing left, to their last grade (never to a passage the policy did not choose)."""
        self.chooser = chooser
        start = (
            self.history[-1][0]
            if self.history
            else (self.current.query_id if self.current else None)
        )
        if not self._choose(start) and self.history:
            self.cursor = self.index_of(self.history[-1])

    def _servable(self, query_id: str | None, chosen: bool = False) -> Key | None:
        """The policy's next item open to this annotator. When another annotator holds or
        graded its pick (the policy learns of their grades at the next look), the pick of
        another query: never a passage the policy did not choose (graded, it would be a pick
        with no draw recorded, and a reserve passage taken in frame order would pass for a
        random sample). `chosen`: the annotator went to `query_id` (a jump)."""
        assert self.chooser is not None
        skip: set[str] = set()
        while True:
            key = self.chooser(query_id, frozenset(skip), chosen)
            if key is None:
                return None
            if key in self._key_set and self.is_open(key):
                return key
            skip.add(key[0])

    def _choose(self, query_id: str | None, chosen: bool = False) -> bool:
        """Move to the policy's next item (`_servable`); False (cursor unchanged) when none."""
        key = self._servable(query_id, chosen)
        if key is None:
            return False
        self.cursor = self.index_of(key)
        return True

    def needs(self, key: Key) -> int:
        """Distinct human judges the item requires."""
        return self.required.get(key, 1)

    def is_open(self, key: Key) -> bool:
        """Not graded by this annotator, and other judges plus other claims leave a place."""
        if key in self.grades:
            return False
        taken = self._others.get(key, set()) | self._claimed.get(key, set())
        return len(taken) < self.needs(key)

    def is_done(self, key: Key) -> bool:
        """Graded by this annotator, or by as many others as the item requires."""
        return key in self.grades or len(self._others.get(key, ())) >= self.needs(key)

    def is_visible(self, key: Key) -> bool:
        """Reachable by prev/next: this annotator's own items and the open ones."""
        return key in self.grades or self.is_open(key)

    def first_open(self, start: int = 0) -> int | None:
        """The first open index at or after `start`, without wrapping."""
        for index in range(start, len(self._keys)):
            if self.is_open(self._keys[index]):
                return index
        return None

    def next_open(self, after: int) -> int | None:
        """The next open index after `after`, wrapping to the start; None if none is open."""
        found = self.first_open(after + 1)
        if found is None:
            found = self.first_open(0)
        return found

    @property
    def done(self) -> bool:
        """Nothing is open to this annotator (with a policy: it has nothing more to serve)."""
        if self.chooser is not None:
            return self._servable(self.current.query_id if self.current else None) is None
        return self.first_open(0) is None

    def progress(self, query_id: str) -> QueueCounts:
        return QueueCounts(
            self._judged.get(query_id, 0),
            self._pooled.get(query_id, 0),
            self._relevant.get(query_id, 0),
            self._yours.get(query_id, 0),
        )

    def overall(self) -> QueueCounts:
        return QueueCounts(
            len(self._done), len(self._keys), sum(self._relevant.values()), len(self.grades)
        )

    def your_queue(self) -> tuple[int, int]:
        """(1-based place of the cursor, size) in this annotator's own queue: the items they
        graded plus those still open to them. Others' grades and claims shrink it, so with a
        shared pool it is their share, not the pool. Only items others block are looked at
        one by one, so this stays cheap on a 20,000-item pool."""
        candidates = self._others.keys() | self._claimed.keys()
        blocked = {k for k in candidates if k in self._key_set and not self.is_visible(k)}
        size = len(self._keys) - len(blocked)
        if not size:
            return 0, 0
        before = self.cursor + 1
        if blocked:
            before -= sum(1 for k in self._keys[: self.cursor + 1] if k in blocked)
        return max(before, 1), size

    def query_ids(self) -> list[str]:
        """Query ids in queue order."""
        return list(self._pooled)

    # -- what others do -----------------------------------------------------------------------

    def observe(self, judgment: Judgment) -> None:
        """Another annotator's row reached the store: human grades count toward `required`,
        an undo frees the place again. Rows of other roles are ignored."""
        if judgment.role != Role.HUMAN:
            return
        key = (judgment.query_id, judgment.doc_id)
        judges = self._others.setdefault(key, set())
        if judgment.grade is None:
            judges.discard(judgment.annotator)
        else:
            judges.add(judgment.annotator)
        if key in self._key_set:
            self._refresh(key)

    def set_claims(self, claims: Mapping[str, Key]) -> None:
        """Other annotators' open items now (annotator -> key); replaces the earlier picture."""
        self._claim_of = dict(claims)
        self._claimed = {}
        for name, key in self._claim_of.items():
            self._claimed.setdefault(key, set()).add(name)

    # -- changing -----------------------------------------------------------------------------

    def _refresh(self, key: Key) -> None:
        """Keep the per-query done count in step with `is_done`."""
        qid = key[0]
        now = self.is_done(key)
        if now and key not in self._done:
            self._done.add(key)
            self._judged[qid] = self._judged.get(qid, 0) + 1
        elif not now and key in self._done:
            self._done.discard(key)
            self._judged[qid] -= 1

    def _set(self, key: Key, grade: int | None) -> None:
        qid = key[0]
        old = self.grades.pop(key, None)
        if old is not None:
            self._yours[qid] -= 1
            self._relevant[qid] -= old >= self.rel_threshold
        if grade is not None:
            self.grades[key] = grade
            self._yours[qid] = self._yours.get(qid, 0) + 1
            self._relevant[qid] = self._relevant.get(qid, 0) + (grade >= self.rel_threshold)
        self._refresh(key)

    def _start(self) -> int:
        """Resume point: the first open item, else the first visible one, else 0."""
        found = self.first_open(0)
        if found is None:
            found = next((i for i, k in enumerate(self._keys) if self.is_visible(k)), 0)
        return found

    def record(self, key: Key, grade: int, note: str = "") -> None:
        """A grade (with its note, "" for none) was committed for `key`."""
        self._set(key, grade)
        if note:
            self.notes[key] = note
        else:
            self.notes.pop(key, None)
        if key in self.history:
            self.history.remove(key)
        self.history.append(key)

    def advance(self) -> bool:
        """Move to the next open item (with a policy: its choice); False (cursor unchanged)
        when none is left."""
        if self.chooser is not None:
            return self._choose(self.current.query_id if self.current else None)
        found = self.next_open(self.cursor)
        if found is None:
            return False
        self.cursor = found
        return True

    def last_graded(self) -> Key | None:
        """The item an undo would clear."""
        return self.history[-1] if self.history else None

    def undo(self, key: Key) -> None:
        """An undo of `key` was committed: it becomes ungraded and the cursor returns to it."""
        self._set(key, None)
        self.notes.pop(key, None)
        if key in self.history:
            self.history.remove(key)
        self.cursor = self.index_of(key)

    def skip(self) -> None:
        """Move the current item to the end of the queue; the cursor then shows the next open
        item after it (or the first open one when the skipped one was last)."""
        if len(self.items) < 2:
            return
        index = self.cursor
        self.items.append(self.items.pop(index))
        self._keys.append(self._keys.pop(index))
        found = self.first_open(index)
        if found is None or found == len(self._keys) - 1:
            earlier = self.first_open(0)
            if earlier is not None and earlier < index:
                found = earlier
        self.cursor = found if found is not None else min(index, len(self._keys) - 1)

    def move(self, delta: int) -> bool:
        """Previous/next visible item (own or open; graded or not); False at either end. With a
        policy, see `_move_served`."""
        if self.chooser is not None:
            return self._move_served(delta)
        step = 1 if delta > 0 else -1
        target = self.cursor
        for _ in range(abs(delta)):
            target += step
            while 0 <= target < len(self._keys) and not self.is_visible(self._keys[target]):
                target += step
            if not 0 <= target < len(self._keys):
                return False
        self.cursor = target
        return True

    def _move_served(self, delta: int) -> bool:
        """With a policy, prev/next go through this annotator's own grades in the order given,
        then the policy's pick, and nowhere else: a passage the policy did not choose is never
        put in front of the annotator (graded, it would be a pick no draw recorded, and a
        reserve passage picked by hand would pass for a random sample)."""
        key = self._keys[self.cursor] if self._keys else None
        place = self.history.index(key) if key in self.history else len(self.history)
        target = place + delta
        if target < 0 or (place == len(self.history) and delta > 0):
            return False
        if target < len(self.history):
            self.cursor = self.index_of(self.history[target])
            return True
        return self._choose(self.current.query_id if self.current else None)

    def jump_to_query(self, query_id: str) -> bool:
        """The query's first open item (with a policy: its choice there), else its first own
        item; False when it has neither."""
        if self.chooser is not None and self._choose(query_id, chosen=True):
            return True
        first: int | None = None
        for index, (qid, _) in enumerate(self._keys):
            if qid != query_id:
                continue
            key = self._keys[index]
            if self.is_open(key) and self.chooser is None:  # a policy serves only its picks
                self.cursor = index
                return True
            if first is None and key in self.grades:
                first = index
        if first is None:
            return False
        self.cursor = first
        return True
