"""Overlap on an adaptive study: a share of what the app serves is a passage someone else judged
and this annotator has not, blind (the app never shows another's grade), so that `agree` has
pairs to measure; the study counts each passage once (its grades resolved as `export` resolves
them, its draw one draw), so the second grade adds agreement, not evidence."""

from __future__ import annotations

from typing import Protocol

from workbench.core.model import PoolEntry

Key = tuple[str, str]


class Queue(Protocol):
    """What the source reads of a judging queue (`workbench.core.pool.queue.JudgingQueue`)."""

    items: list[PoolEntry]
    grades: dict[Key, int]
    required: dict[Key, int]

    def is_done(self, key: Key) -> bool: ...
    def needs(self, key: Key) -> int: ...


def overlap_every(share: float) -> int:
    """One served item in this many is an overlap item (share 0.2: one in 5)."""
    return max(1, round(1.0 / share))


class OverlapSource:
    """The overlap items of one annotator's queue: after `every` - 1 of the policy's picks, a
    passage one other person judged and this one has not (the current query's first, else the
    first query in order that has one), marked as needing two judges so the queue serves it;
    asked again before it is graded, the same item."""

    def __init__(self, queue: Queue, share: float):
        self.queue = queue
        self.every = overlap_every(share)
        self.given = 0
        self.pending: Key | None = None
        self.served_at = 0
        """The policy's picks served when the last overlap item was (one in `every`, no burst)."""
        self.looked = -self.every
        """The policy's picks served when the last look found no item."""
        self.by_query: dict[str, list[Key]] = {}
        """The queue's items per query, in queue order (indexed once: a frame per query)."""
        for entry in queue.items:
            self.by_query.setdefault(entry.query_id, []).append((entry.query_id, entry.doc_id))

    def serve(self, current: str | None, skip: frozenset[str], picks: int) -> Key | None:
        """The overlap item due now, or None (the policy's pick then)."""
        if self.pending is not None:
            if self.pending not in self.queue.grades and self.pending[0] not in skip:
                return self.pending
            self.pending = None
        due = picks - self.served_at >= max(self.every - 1, 1)
        if not due or picks - self.looked < self.every:
            return None
        key = self._find(current, skip)
        if key is None:  # nobody else has judged one: look again `every` picks on, not at each
            self.looked = picks
        else:
            self.given, self.served_at = self.given + 1, picks
            self.queue.required[key] = 2
            self.pending = key
        return key

    def _find(self, current: str | None, skip: frozenset[str]) -> Key | None:
        queries = list(self.by_query)
        order = ([current] if current in self.by_query else []) + [
            q for q in queries if q != current
        ]
        for query_id in order:
            if query_id in skip:
                continue
            for key in self.by_query[query_id]:
                judged_by_another = key not in self.queue.grades and self.queue.is_done(key)
                if judged_by_another and self.queue.needs(key) == 1:
                    return key
        return None
