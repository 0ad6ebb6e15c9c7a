"""Stratified random samples from outside the pool, so coverage can estimate what the pool missed.

Documents outside the depth-k pool are grouped into strata by their best rank over the systems'
deep rankings (`SAMPLE_RANK_DEPTH`), e.g. "rank:21-50", "rank:51-100", ..., and "rest" for
documents no system ranked that deep. Each query's sample of n is allocated across strata
(Neyman-like: proportional to N_h * sqrt(expected relevance rate), with a floor per stratum), drawn
uniformly without replacement inside each stratum, and each item records its stratum and its
inclusion probability n_h / N_h. Deterministic given the seed.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Mapping, Sequence

from workbench.core.model import PoolEntry

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


def _query_rng(seed: int, query_id: str) -> random.Random:
    return random.Random(seed * 1_000_003 + zlib.crc32(query_id.encode("utf-8")))


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
    so any prefix of them is a simple random sample within each stratum."""
    bands = stratum_bands(depth, rank_depth)
    corpus_order = list(dict.fromkeys(corpus_ids))
    entries: list[PoolEntry] = []
    for query_id in pool:
        pooled = pool[query_id]
        best = best_ranks(rankings_by_system, query_id)
        members: dict[str, list[str]] = {name: [] for name, _, _ in bands}
        members[REST] = []
        rank_sum: dict[str, float] = {name: 0.0 for name in members}
        for doc_id in corpus_order:
            if doc_id in pooled:
                continue
            rank = best.get(doc_id)
            name = REST
            if rank is not None and rank <= rank_depth:
                name = next((b for b, _, last in bands if rank <= last), REST)
            members[name].append(doc_id)
            # Prior relevance rate ~ 1/rank (the unranked tail as if at twice the rank depth).
            prior_rank = rank if rank is not None and name != REST else 2 * rank_depth
            rank_sum[name] += 1.0 / max(prior_rank, 1)
        names = [name for name in members if members[name]]
        sizes = [len(members[name]) for name in names]
        # Neyman allocation for a total: N_h * sigma_h with sigma_h ~ sqrt(p_h).
        weights = [
            len(members[nm]) * (rank_sum[nm] / len(members[nm])) ** ALLOC_POWER for nm in names
        ]
        counts = allocate(sizes, weights, n)
        rng = _query_rng(seed, query_id)
        drawn: list[tuple[str, str, float]] = []
        for name, size, count in zip(names, sizes, counts, strict=True):
            if count == 0:
                continue
            for doc_id in rng.sample(members[name], count):
                drawn.append((doc_id, name, count / size))
        rng.shuffle(drawn)
        positions = interleaved_positions(len(pooled), len(drawn))
        for (doc_id, name, prob), position in zip(drawn, positions, strict=True):
            entries.append(
                PoolEntry(
                    query_id=query_id,
                    doc_id=doc_id,
                    position=position,
                    stratum=name,
                    inclusion_prob=prob,
                )
            )
    return entries


def stratum_population(sampled: int, inclusion_prob: float) -> int:
    """N_h recovered from a stratum's sample count and the recorded inclusion probability."""
    if inclusion_prob <= 0:
        raise ValueError("inclusion probability must be positive")
    return int(round(sampled / inclusion_prob))
