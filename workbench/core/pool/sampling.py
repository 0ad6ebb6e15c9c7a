"""Stratified random samples from outside the pool, so coverage can estimate what the pool missed.

Documents outside the depth-k pool are grouped into strata by their best rank over the systems'
deep rankings (`SAMPLE_RANK_DEPTH`), e.g. "rank:21-50", "rank:51-100", ..., and "rest" for
documents no system ranked that deep. Each query's sample of n is allocated across strata
(Neyman-like: proportional to N_h * sqrt(expected relevance rate), with a floor per stratum), drawn
uniformly without replacement inside each stratum, and each item records its stratum and its
inclusion probability n_h / N_h. Deterministic given the seed.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence

from workbench.core.model import PoolEntry
from workbench.core.random_streams import frame_random

SAMPLE_RANK_DEPTH = 1000
"""How deep the systems' rankings must go when sampling: ranks beyond it all fall into 'rest'."""

BAND_EDGES = (50, 100, 300, 1000)
"""Upper edges of the rank bands below the pool depth; each band starts after the previous edge."""

ALLOC_POWER = 0.5
"""Allocation weight N_h * p_h ** ALLOC_POWER (0.5: Neyman for a binomial total, p_h ~ 1/rank)."""

MIN_PER_STRATUM = 3
"""Floor on each non-empty stratum's sample, so that every band (the tail included) is measured."""

REST = "rest"


def stratum_bands(depth: int, rank_depth: int = SAMPLE_RANK_DEPTH) -> list[tuple[str, int, int]]:
    """(name, first rank, last rank) of each rank band below the pool depth, shallowest first."""
    edges = [e for e in BAND_EDGES if depth < e <= rank_depth]
    if not edges or edges[-1] < rank_depth:
        edges.append(rank_depth)
    bands = []
    low = depth + 1
    for edge in edges:
        if edge >= low:
            bands.append((f"rank:{low}-{edge}", low, edge))
            low = edge + 1
    return bands


def best_ranks(
    rankings_by_system: Mapping[str, Mapping[str, Sequence[str]]], query_id: str
) -> dict[str, int]:
    """doc id -> its best (smallest, 1-based) rank over the systems for this query."""
    best: dict[str, int] = {}
    for rankings in rankings_by_system.values():
        for rank, doc_id in enumerate(rankings.get(query_id, ()), start=1):
            if rank < best.get(doc_id, rank + 1):
                best[doc_id] = rank
    return best


def allocate(
    sizes: Sequence[int], weights: Sequence[float], n: int, floor: int = MIN_PER_STRATUM
) -> list[int]:
    """Split n draws over strata: a floor each (capped by the stratum size), the rest in
    proportion to the weights by largest remainder, never more than a stratum holds."""
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    counts = [min(size, floor) for size in sizes]
    if sum(counts) > n:
        # Not even the floors fit: give one each, shallowest first, until n is spent.
        counts = [0] * len(sizes)
        left = n
        while left:
            for i, size in enumerate(sizes):
                if left and counts[i] < size:
                    counts[i] += 1
                    left -= 1
        return counts
    left = n - sum(counts)
    while left > 0:
        open_strata = [i for i, size in enumerate(sizes) if counts[i] < size]
        weight_sum = sum(weights[i] for i in open_strata)
        if weight_sum <= 0:
            shares = {i: left / len(open_strata) for i in open_strata}
        else:
            shares = {i: left * weights[i] / weight_sum for i in open_strata}
        given = 0
        for i in open_strata:
            extra = min(int(shares[i]), sizes[i] - counts[i])
            counts[i] += extra
            given += extra
        left -= given
        if left and given == 0:
            # Hand out the remainders one by one, largest fractional share first.
            for i in sorted(open_strata, key=lambda i: (-(shares[i] % 1), i)):
                if left and counts[i] < sizes[i]:
                    counts[i] += 1
                    left -= 1
    return counts


def interleaved_positions(pool_size: int, sample_size: int) -> list[int]:
    """Positions of the samples in a per-query queue of pool_size + sample_size items, spread
    evenly so that any prefix of the queue holds its share of samples."""
    if sample_size == 0:
        return []
    step = (pool_size + sample_size) / sample_size
    return [int(math.floor((i + 0.5) * step)) for i in range(sample_size)]


# long: the stratified draw, step by step as the module docstring states it
def sample_outside_pool(
    rankings_by_system: Mapping[str, Mapping[str, Sequence[str]]],
    pool: Mapping[str, set[str]],
    corpus_ids: Sequence[str],
    n: int,
    seed: int,
    *,
    depth: int = 20,
    rank_depth: int = SAMPLE_RANK_DEPTH,
) -> list[PoolEntry]:
    """Per query of `pool`, n documents from outside it, stratified by best rank (see module doc).

    PoolEntry.position is the item's index in the merged per-query queue of pool + samples (the
    pool items fill the other positions in their own order); samples are shuffled across strata,
    so any prefix of them is a simple random sample within each stratum.

    Work per query is in the docs the systems ranked, not in the corpus: the 'rest' stratum is
    the corpus order without a few positions (`Without`), drawn from by index, so a million
    passages x 500 queries take seconds, and draw exactly what a list of the rest would."""
    bands = stratum_bands(depth, rank_depth)
    order = CorpusOrder.of(corpus_ids)
    corpus_order, position = order.ids, order.position
    # The unranked tail as if at twice the rank depth.
    rest_sum = RepeatedSum(1.0 / max(2 * rank_depth, 1))
    strata: dict[str, tuple[dict[str, list[str]], dict[str, float], Without]] = {}
    for query_id in pool:
        pooled = pool[query_id]
        best = best_ranks(rankings_by_system, query_id)
        members: dict[str, list[str]] = {name: [] for name, _, _ in bands}
        rank_sum: dict[str, float] = {name: 0.0 for name in members}
        skip: list[int] = [position[d] for d in pooled if d in position]
        ranked = sorted(
            (position[d], d, rank)
            for d, rank in best.items()
            if rank <= rank_depth and d in position and d not in pooled
        )
        for at, doc_id, rank in ranked:
            name = next((b for b, _, last in bands if rank <= last), REST)
            if name == REST:
                continue
            members[name].append(doc_id)
            skip.append(at)
            # Prior relevance rate ~ 1/rank.
            rank_sum[name] += 1.0 / max(rank, 1)
        strata[query_id] = (members, rank_sum, Without(corpus_order, skip))

    entries: list[PoolEntry] = []
    for query_id, (members, rank_sum, rest) in strata.items():
        population: dict[str, Sequence[str]] = {**members, REST: rest}
        rank_sum[REST] = rest_sum(len(rest))
        names = [name for name in population if len(population[name])]
        sizes = [len(population[name]) for name in names]
        # Neyman allocation for a total: N_h * sigma_h with sigma_h ~ sqrt(p_h).
        weights = [
            size * (rank_sum[nm] / size) ** ALLOC_POWER
            for nm, size in zip(names, sizes, strict=True)
        ]
        counts = allocate(sizes, weights, n)
        rng = frame_random(seed, query_id)
        drawn: list[tuple[str, str, float]] = []
        for name, size, count in zip(names, sizes, counts, strict=True):
            if count == 0:
                continue
            for doc_id in rng.sample(population[name], count):
                drawn.append((doc_id, name, count / size))
        rng.shuffle(drawn)
        positions = interleaved_positions(len(pool[query_id]), len(drawn))
        for (doc_id, name, prob), position_in_queue in zip(drawn, positions, strict=True):
            entries.append(
                PoolEntry(
                    query_id=query_id,
                    doc_id=doc_id,
                    position=position_in_queue,
                    stratum=name,
                    inclusion_prob=prob,
                )
            )
    return entries


class CorpusOrder(Sequence[str]):
    """Corpus ids once each, in corpus order, with each one's position: built once for every
    query's sample or frame (a dict of a million ids per query would cost minutes)."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids: list[str] = list(dict.fromkeys(ids))
        self.position: dict[str, int] = {doc_id: i for i, doc_id in enumerate(self.ids)}

    @classmethod
    def of(cls, ids: Sequence[str]) -> CorpusOrder:
        return ids if isinstance(ids, CorpusOrder) else cls(ids)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self.ids[index]


class Without(Sequence[str]):
    """A list without some of its positions, indexed without being copied: the j-th kept item
    is at j + (the number of skipped positions p_i with p_i - i <= j)."""

    def __init__(self, items: Sequence[str], skip: Iterable[int]) -> None:
        self._items = items
        ordered = sorted(set(skip))
        self.skipped = ordered
        self._shift = [at - i for i, at in enumerate(ordered)]
        self._length = len(items) - len(ordered)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._items[index + bisect.bisect_right(self._shift, index)]


class RepeatedSum:
    """`term` added `count` times from 0.0, one addition after another (the bits a loop over a
    stratum's members gives), for many counts: checkpoints every `STEP` additions, so a count
    costs at most STEP additions after the first walk up to it."""

    STEP = 4096

    def __init__(self, term: float) -> None:
        self.term = term
        self._checkpoints = [0.0]

    def __call__(self, count: int) -> float:
        blocks, left = divmod(count, self.STEP)
        while len(self._checkpoints) <= blocks:
            total = self._checkpoints[-1]
            for _ in range(self.STEP):
                total += self.term
            self._checkpoints.append(total)
        total = self._checkpoints[blocks]
        for _ in range(left):
            total += self.term
        return total


def stratum_population(sampled: int, inclusion_prob: float) -> int:
    """N_h recovered from a stratum's sample count and the recorded inclusion probability."""
    if inclusion_prob <= 0:
        raise ValueError("inclusion probability must be positive")
    return int(round(sampled / inclusion_prob))
