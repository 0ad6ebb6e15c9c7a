"""An annotator's judging queue: the pool in order, their current grades, a cursor, skips and
undo. Pure: no store, no UI; the judging app drives it and persists what it records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.model import Judgment, PoolEntry

Key = tuple[str, str]
"""(query_id, doc_id): one judging item."""


@dataclass(frozen=True, slots=True)
class Progress:
    judged: int
    pooled: int
    relevant: int


class JudgingQueue:
    """The pool as one ordered list (queries in order, items by position) with a cursor.

    `grades` holds this annotator's current grades; `history` the keys in the order they were
    graded, so undo can walk back across sessions."""

    def __init__(
        self,
        pool: Sequence[PoolEntry],
        grades: Mapping[Key, int] | None = None,
        history: Iterable[Key] = (),
        rel_threshold: int = 1,
    ):
        self.items: list[PoolEntry] = list(pool)
        self._keys: list[Key] = [(e.query_id, e.doc_id) for e in self.items]
        self.rel_threshold = rel_threshold
        self.grades: dict[Key, int] = {}
        self.history: list[Key] = []
        self._pooled: dict[str, int] = {}
        self._judged: dict[str, int] = {}
        self._relevant: dict[str, int] = {}
        for qid, _ in self._keys:
            self._pooled[qid] = self._pooled.get(qid, 0) + 1
        pooled_keys = set(self._keys)
        for key, grade in (grades or {}).items():
            if key in pooled_keys:
                self._set(key, grade)
        self.history = [k for k in history if k in self.grades]
        self.cursor = self.first_unjudged() or 0

    @classmethod
    def from_judgments(
        cls, pool: Sequence[PoolEntry], current: Iterable[Judgment], rel_threshold: int = 1
    ) -> JudgingQueue:
        """Build from the store's current judgments of one annotator (oldest first)."""
        current = [j for j in current if j.grade is not None]
        grades = {(j.query_id, j.doc_id): int(j.grade) for j in current}  # type: ignore[arg-type]
        return cls(pool, grades, [(j.query_id, j.doc_id) for j in current], rel_threshold)

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
        return self._keys.index(key)

    def first_unjudged(self, start: int = 0) -> int | None:
        """The first ungraded index at or after `start`, without wrapping."""
        for index in range(start, len(self._keys)):
            if self._keys[index] not in self.grades:
                return index
        return None

    def next_unjudged(self, after: int) -> int | None:
        """The next ungraded index after `after`, wrapping to the start; None if all are graded."""
        found = self.first_unjudged(after + 1)
        if found is None:
            found = self.first_unjudged(0)
        return found

    @property
    def done(self) -> bool:
        return len(self.grades) >= len(self._keys)

    def progress(self, query_id: str) -> Progress:
        return Progress(
            self._judged.get(query_id, 0),
            self._pooled.get(query_id, 0),
            self._relevant.get(query_id, 0),
        )

    def overall(self) -> Progress:
        return Progress(len(self.grades), len(self._keys), sum(self._relevant.values()))

    def query_ids(self) -> list[str]:
        """Query ids in queue order."""
        return list(self._pooled)

    # -- changing -----------------------------------------------------------------------------

    def _set(self, key: Key, grade: int | None) -> None:
        qid = key[0]
        old = self.grades.pop(key, None)
        if old is not None:
            self._judged[qid] -= 1
            self._relevant[qid] -= old >= self.rel_threshold
        if grade is not None:
            self.grades[key] = grade
            self._judged[qid] = self._judged.get(qid, 0) + 1
            self._relevant[qid] = self._relevant.get(qid, 0) + (grade >= self.rel_threshold)

    def record(self, key: Key, grade: int) -> None:
        """A grade was committed for `key`."""
        self._set(key, grade)
        if key in self.history:
            self.history.remove(key)
        self.history.append(key)

    def advance(self) -> bool:
        """Move to the next ungraded item; False (cursor unchanged) when none is left."""
        found = self.next_unjudged(self.cursor)
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
        if key in self.history:
            self.history.remove(key)
        self.cursor = self.index_of(key)

    def skip(self) -> None:
        """Move the current item to the end of the queue; the cursor then shows what followed it
        (or the first ungraded item when the skipped one was last)."""
        if len(self.items) < 2:
            return
        index = self.cursor
        self.items.append(self.items.pop(index))
        self._keys.append(self._keys.pop(index))
        found = self.first_unjudged(index)
        if found is None or found == len(self._keys) - 1:
            earlier = self.first_unjudged(0)
            if earlier is not None and earlier < index:
                found = earlier
        self.cursor = found if found is not None else min(index, len(self._keys) - 1)

    def move(self, delta: int) -> bool:
        """Previous/next item regardless of grades; False at either end."""
        target = self.cursor + delta
        if not 0 <= target < len(self.items):
            return False
        self.cursor = target
        return True

    def jump_to_query(self, query_id: str) -> bool:
        """The query's first ungraded item, or its first item when all are graded."""
        first: int | None = None
        for index, (qid, _) in enumerate(self._keys):
            if qid != query_id:
                continue
            if first is None:
                first = index
            if self._keys[index] not in self.grades:
                self.cursor = index
                return True
        if first is None:
            return False
        self.cursor = first
        return True
