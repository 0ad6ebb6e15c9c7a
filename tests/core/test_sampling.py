"""Stratified sampling outside the pool: bands, allocation, inclusion probabilities, positions."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from workbench.core.pool.sampling import (
    REST,
    allocate,
    best_ranks,
    interleaved_positions,
    sample_outside_pool,
    stratum_bands,
    stratum_population,
)


def test_bands_below_the_pool_depth():
    assert stratum_bands(20) == [
        ("rank:21-50", 21, 50),
        ("rank:51-100", 51, 100),
        ("rank:101-300", 101, 300),
        ("rank:301-1000", 301, 1000),
    ]
    assert stratum_bands(10, rank_depth=200) == [
        ("rank:11-50", 11, 50),
        ("rank:51-100", 51, 100),
        ("rank:101-200", 101, 200),
    ]
    assert stratum_bands(60, rank_depth=80) == [("rank:61-80", 61, 80)]


def test_allocate_floor_then_weights():
    # floors 3 + 3, the 4 left split 1:3
    assert allocate([10, 10], [1.0, 3.0], 10) == [4, 6]
    # a stratum cannot give more than it holds; the surplus moves on
    assert allocate([2, 50], [100.0, 1.0], 10) == [2, 8]
    # n covers everything: a census
    assert allocate([2, 3], [1.0, 1.0], 9) == [2, 3]
    # not even the floors fit: one each, shallowest first
    assert allocate([5, 5, 5], [1.0, 1.0, 1.0], 2) == [1, 1, 0]
    for n in range(0, 40):
        counts = allocate([7, 30, 200, 5], [3.0, 2.0, 1.0, 0.1], n)
        assert sum(counts) == n
        assert all(0 <= c <= s for c, s in zip(counts, [7, 30, 200, 5], strict=True))


def test_best_rank_over_systems():
    rankings = {"a": {"q": ["d1", "d2", "d3"]}, "b": {"q": ["d3", "d4"]}}
    assert best_ranks(rankings, "q") == {"d1": 1, "d2": 2, "d3": 1, "d4": 2}


def test_positions_spread_evenly_and_distinct():
    positions = interleaved_positions(32, 40)
    assert len(set(positions)) == 40
    assert 0 <= min(positions) and max(positions) < 72
    assert interleaved_positions(0, 3) == [0, 1, 2]
    assert interleaved_positions(9, 1) == [5]
    assert interleaved_positions(5, 0) == []


def _fixture(n_docs: int = 600, seed: int = 3):
    rng = random.Random(seed)
    ids = [f"d{i:04d}" for i in range(n_docs)]
    a, b = ids[:], ids[:]
    rng.shuffle(a)
    rng.shuffle(b)
    rankings = {"bm25": {"q1": a[:400], "q2": b[:400]}, "dense": {"q1": b[:400], "q2": a[:400]}}
    pool = {q: set(rankings["bm25"][q][:20]) | set(rankings["dense"][q][:20]) for q in ("q1", "q2")}
    return ids, rankings, pool


def test_sample_is_outside_the_pool_stratified_and_deterministic():
    ids, rankings, pool = _fixture()
    entries = sample_outside_pool(rankings, pool, ids, 40, seed=7, rank_depth=400)
    again = sample_outside_pool(rankings, pool, ids, 40, seed=7, rank_depth=400)
    other = sample_outside_pool(rankings, pool, ids, 40, seed=8, rank_depth=400)
    assert entries == again
    assert [e.doc_id for e in entries] != [e.doc_id for e in other]
    for qid in ("q1", "q2"):
        mine = [e for e in entries if e.query_id == qid]
        assert len(mine) == 40
        assert len({e.doc_id for e in mine}) == 40
        assert not {e.doc_id for e in mine} & pool[qid]
        best = best_ranks(rankings, qid)
        outside = [d for d in ids if d not in pool[qid]]
        sizes = Counter()
        for d in outside:
            r = best.get(d)
            band = next(
                (name for name, lo, hi in stratum_bands(20, 400) if r and lo <= r <= hi), REST
            )
            sizes[band] += 1
        drawn = Counter(e.stratum for e in mine)
        for e in mine:
            # the recorded probability is n_h / N_h, and N_h comes back from it exactly
            assert e.inclusion_prob == pytest.approx(drawn[e.stratum] / sizes[e.stratum])
            assert stratum_population(drawn[e.stratum], e.inclusion_prob) == sizes[e.stratum]
            r = best.get(e.doc_id)
            if e.stratum == REST:
                assert r is None or r > 400
            else:
                lo, hi = (int(x) for x in e.stratum[5:].split("-"))
                assert lo <= r <= hi
        assert set(drawn) == set(sizes)  # every non-empty stratum is sampled (floor)
        assert sorted(e.position for e in mine) == sorted(interleaved_positions(len(pool[qid]), 40))


def test_sample_larger_than_outside_is_a_census():
    ids, rankings, pool = _fixture(n_docs=60)
    entries = sample_outside_pool(rankings, pool, ids, 500, seed=0, rank_depth=400)
    for qid in ("q1", "q2"):
        mine = [e for e in entries if e.query_id == qid]
        assert {e.doc_id for e in mine} == set(ids) - pool[qid]
        assert all(e.inclusion_prob == 1.0 for e in mine)


def test_within_stratum_inclusion_is_uniform():
    """Every doc of a stratum is drawn with probability n_h / N_h (checked over many seeds)."""
    ids, rankings, pool = _fixture(n_docs=200)
    counts: Counter = Counter()
    draws = 400
    probs: dict[str, float] = {}
    for seed in range(draws):
        for e in sample_outside_pool(rankings, {"q1": pool["q1"]}, ids, 12, seed, rank_depth=100):
            counts[e.doc_id] += 1
            probs[e.doc_id] = e.inclusion_prob
    for doc_id, prob in probs.items():
        expected = prob * draws
        assert abs(counts[doc_id] - expected) < 5 * (expected * (1 - prob)) ** 0.5 + 2
