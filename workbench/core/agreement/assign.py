"""Which pool items are judged by more than one annotator (overlap), for agreement figures. Pure.

The pool is one shared queue: an item needs `required` distinct human judgments, 1 by default.
`choose_overlap` marks a seeded random share of each query's items as needing `judges` (2), one
per band of the query's queue, so overlap is spread through the queue, not bunched at its end.
It only ever adds: marks already made count toward the share, so re-running with the same share
changes nothing and a larger share adds the difference (again one per band still without one)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.core.model import PoolEntry
from workbench.core.random_streams import overlap_random

Key = tuple[str, str]
"""(query_id, doc_id)"""

DEFAULT_JUDGES = 2


def overlap_target(items: int, share: float) -> int:
    """Items of a query to mark: the share rounded half up (0.2 of 25 -> 5, of 12 -> 2)."""
    return min(items, math.floor(items * share + 0.5 + 1e-9))


def bands(count: int, parts: int) -> list[range]:
    """`count` positions cut into `parts` contiguous bands of (nearly) equal size."""
    return [range(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def choose_overlap(
    pool: Sequence[PoolEntry],
    share: float,
    seed: int = 0,
    existing: Mapping[Key, int] | None = None,
    judges: int = DEFAULT_JUDGES,
) -> dict[Key, int]:
    """The items to mark now -> `judges`, given the items already marked (`existing`: key ->
    required, those with required >= 2 count as marked). Each query's items are taken in queue
    order (position) and cut into as many bands as the query's target; every band without a
    mark gets one, drawn with a generator seeded by (seed, query id), so a query's choice does
    not depend on the other queries. Raises ValueError on a share outside [0, 1] or judges < 2."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"overlap share {share} is outside [0, 1]")
    if judges < 2:
        raise ValueError(f"judges {judges}: overlap needs at least 2")
    marked = {key for key, required in (existing or {}).items() if required >= 2}
    by_query: dict[str, list[PoolEntry]] = {}
    for entry in pool:
        by_query.setdefault(entry.query_id, []).append(entry)
    chosen: dict[Key, int] = {}
    for query_id, entries in by_query.items():
        keys = [(e.query_id, e.doc_id) for e in sorted(entries, key=lambda e: e.position)]
        target = overlap_target(len(keys), share)
        have = sum(key in marked for key in keys)
        if target <= have:
            continue
        rng = overlap_random(seed, query_id)
        cut = bands(len(keys), target)
        empty = [band for band in cut if not any(keys[i] in marked for i in band)]
        need = target - have
        # Each mark sits in one band, so at least `need` bands are empty; when more are (a band
        # holds two earlier marks), which of them get one is drawn too.
        if len(empty) > need:
            empty = [empty[i] for i in sorted(rng.sample(range(len(empty)), need))]
        picks = [rng.choice(list(band)) for band in empty]
        for index in picks:
            chosen[keys[index]] = judges
    return chosen


def overlap_per_query(pool: Sequence[PoolEntry], required: Mapping[Key, int]) -> dict[str, int]:
    """query_id -> items needing two or more judges, in pool order of queries."""
    out: dict[str, int] = {}
    for entry in pool:
        out.setdefault(entry.query_id, 0)
        out[entry.query_id] += required.get((entry.query_id, entry.doc_id), 1) >= 2
    return out


@dataclass(frozen=True, slots=True)
class OverlapSummary:
    """What a pool holds for overlap after `workbench assign` (or `pool --overlap`)."""

    share: float
    seed: int
    pool_items: int
    added: int
    """Items marked by this run."""
    per_query: Mapping[str, int]
    """query_id -> items needing two or more judges, in pool order of queries."""
    adaptive: bool = False
    """An adaptive study: no item is marked; the app serves one passage in `overlap_every` that
    another annotator judged (`core.adaptive.overlap`)."""

    @property
    def overlap_items(self) -> int:
        return sum(self.per_query.values())

    def to_json(self) -> dict:
        data = {
            "share": self.share,
            "seed": self.seed,
            "pool_items": self.pool_items,
            "overlap_items": self.overlap_items,
            "added": self.added,
            "per_query": dict(self.per_query),
        }
        if self.adaptive:
            from workbench.core.adaptive.overlap import overlap_every

            data.update(adaptive=True, every=overlap_every(self.share) if self.share else None)
        return data
