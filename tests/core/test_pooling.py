"""The pure pooling core: depth cut, union with provenance, twins, queue strategies."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.model import Doc, PoolEntry, Provenance, order_pairs, passage_key
from workbench.core.pool.pooling import (
    STRATEGIES,
    build_pool,
    canonical_ids,
    pool_members,
    twin_groups,
)

RANKINGS = {
    "bm25": {"q1": ["a", "b", "c", "d"], "q2": ["x", "y"]},
    "dense": {"q1": ["c", "a", "e", "f"], "q2": ["y", "z"]},
}


def order(entries: list[PoolEntry], query_id: str) -> list[str]:
    return [e.doc_id for e in entries if e.query_id == query_id]


def test_depth_cut_and_union_with_provenance() -> None:
    entries = build_pool(RANKINGS, depth=2)
    assert set(order(entries, "q1")) == {"a", "b", "c"}
    a = next(e for e in entries if e.doc_id == "a")
    assert a.provenance == (Provenance("bm25", 1, 0.0), Provenance("dense", 2, 0.0))
    assert a.fused_score == pytest.approx(1 / 61 + 1 / 62)
    assert [e.position for e in entries if e.query_id == "q1"] == [0, 1, 2]
    assert [e.position for e in entries if e.query_id == "q2"] == [0, 1, 2]


def test_scores_land_in_provenance() -> None:
    scores = {"bm25": {"q1": {"a": 7.5, "b": 3.0}}}
    entries = build_pool({"bm25": {"q1": ["a", "b"]}}, depth=2, scores_by_system=scores)
    assert entries[0].provenance == (Provenance("bm25", 1, 7.5),)


def test_rrf_order_fused_score_then_doc_id_descending() -> None:
    entries = build_pool(RANKINGS, depth=4, strategy="rrf")
    # a: 1/61+1/62, c: 1/63+1/61, b: 1/62, e: 1/63, d: 1/64, f: 1/64 (tie: f > d descending)
    assert order(entries, "q1") == ["a", "c", "b", "e", "f", "d"]


def test_round_robin_order() -> None:
    entries = build_pool(RANKINGS, depth=4, strategy="round-robin")
    # rank 1: bm25 a, dense c; rank 2: bm25 b (dense a seen); rank 3: dense e; rank 4: d, f
    assert order(entries, "q1") == ["a", "c", "b", "e", "d", "f"]


def test_docid_order() -> None:
    entries = build_pool(RANKINGS, depth=4, strategy="docid")
    assert order(entries, "q1") == ["a", "b", "c", "d", "e", "f"]


def test_random_order_is_seeded_per_query_and_stable_across_processes() -> None:
    first = build_pool(RANKINGS, depth=4, strategy="random", seed=7)
    again = build_pool(RANKINGS, depth=4, strategy="random", seed=7)
    assert first == again
    assert sorted(order(first, "q1")) == ["a", "b", "c", "d", "e", "f"]
    seeds = {tuple(order(build_pool(RANKINGS, 4, "random", s), "q1")) for s in range(8)}
    assert len(seeds) > 1
    code = (
        "from workbench.core.pool.pooling import build_pool\n"
        f"print([e.doc_id for e in build_pool({RANKINGS!r}, 4, 'random', 7)])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(hash_seed)},
        ).stdout
        for hash_seed in (1, 2)
    }
    assert outputs == {str([e.doc_id for e in first]) + "\n"}


def test_unknown_strategy_and_bad_depth() -> None:
    with pytest.raises(ValueError, match="unknown pooling strategy 'best'"):
        build_pool(RANKINGS, strategy="best")
    with pytest.raises(ValueError, match="depth"):
        build_pool(RANKINGS, depth=0)
    assert set(STRATEGIES) == {"rrf", "round-robin", "random", "docid"}


def twins_of(texts: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Twin groups of untitled passages, as the pipeline finds them (`passage_key`)."""
    return twin_groups({d: passage_key(Doc(d, text)) for d, text in texts.items()})


def test_twins_become_one_item_with_alias_and_merged_provenance() -> None:
    rankings = {"bm25": {"q": ["d1", "n", "d2"]}, "dense": {"q": ["d2", "m"]}}
    texts = {"d1": "Fall armyworm: scout early!", "d2": "fall ARMYWORM scout   early"}
    texts |= {"n": "x", "m": "y"}
    entries = build_pool(rankings, depth=3, twins=twins_of(texts))
    assert len(entries) == 3
    twin = next(e for e in entries if "d2" in (e.doc_id, *e.aliases))
    # d2: 1/63 + 1/61 beats d1: 1/61, so d2 is canonical and d1 its alias
    assert (twin.doc_id, twin.aliases) == ("d2", ("d1",))
    assert twin.provenance == (Provenance("bm25", 1, 0.0), Provenance("dense", 1, 0.0))
    assert twin.fused_score == pytest.approx(2 / 61)
    assert twin.position == 0
    assert pool_members(entries) == {"q": {"d1", "d2", "n", "m"}}


def test_twin_tie_goes_to_the_ordering_rule() -> None:
    rankings = {"a": {"q": ["d1"]}, "b": {"q": ["d2"]}}
    entries = build_pool(rankings, twins=twins_of({"d1": "same", "d2": "Same."}))
    assert [(e.doc_id, e.aliases) for e in entries] == [("d2", ("d1",))]


def test_twins_fold_the_same_way_in_every_query() -> None:
    rankings = {"s": {"q1": ["d1", "d2"], "q2": ["d2", "x", "d1"]}}
    entries = build_pool(rankings, twins=twins_of({"d1": "t", "d2": "t", "x": "other"}))
    assert {(e.query_id, e.doc_id, e.aliases) for e in entries if e.aliases} == {
        ("q1", "d2", ("d1",)),
        ("q2", "d2", ("d1",)),
    }


def test_existing_item_stays_canonical() -> None:
    rankings = {"s": {"q": ["d2", "d1"]}}
    entries = build_pool(rankings, twins=twins_of({"d1": "t", "d2": "t"}), keep={"d1"})
    assert [(e.doc_id, e.aliases) for e in entries] == [("d1", ("d2",))]


def test_existing_item_absorbs_a_twin_retrieved_alone() -> None:
    rankings = {"s": {"q": ["d2", "n"]}}
    texts = {"d1": "same text", "d2": "Same text.", "n": "new"}
    entries = build_pool(rankings, twins=twins_of(texts), keep=["d1"])
    assert [(e.doc_id, e.aliases, e.provenance) for e in entries] == [
        ("d1", ("d2",), (Provenance("s", 1, 0.0),)),
        ("n", (), (Provenance("s", 2, 0.0),)),
    ]


def test_empty_texts_are_not_twins() -> None:
    entries = build_pool({"s": {"q": ["e1", "e2"]}}, twins=twins_of({"e1": "", "e2": " . "}))
    assert [(e.doc_id, e.aliases) for e in entries] == [("e1", ()), ("e2", ())]


def test_duplicate_in_one_ranking_counts_once_at_its_first_rank() -> None:
    entries = build_pool({"s": {"q": ["a", "a", "b"]}}, depth=2)
    assert [(e.doc_id, e.provenance[0].rank) for e in entries] == [("a", 1), ("b", 2)]


ranking_strategy = st.dictionaries(
    st.sampled_from(["bm25", "dense", "run"]),
    st.dictionaries(
        st.sampled_from(["q1", "q2"]),
        st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
        max_size=2,
    ),
    min_size=1,
)


@settings(max_examples=60, deadline=None)
@given(
    rankings=ranking_strategy,
    depth=st.integers(1, 6),
    strategy=st.sampled_from(sorted(STRATEGIES)),
    seed=st.integers(0, 3),
)
def test_pool_is_exactly_the_union_of_depth_cuts(rankings, depth, strategy, seed) -> None:
    entries = build_pool(rankings, depth, strategy, seed)
    assert entries == build_pool(rankings, depth, strategy, seed)
    expected: dict[str, set[str]] = {}
    for by_query in rankings.values():
        for qid, ranking in by_query.items():
            expected.setdefault(qid, set()).update(ranking[:depth])
    got: dict[str, list[str]] = {}
    for e in entries:
        got.setdefault(e.query_id, []).append(e.doc_id)
        assert e.position == len(got[e.query_id]) - 1
        assert e.fused_score == pytest.approx(sum(1 / (60 + p.rank) for p in e.provenance))
    assert {q: set(d) for q, d in got.items()} == {q: d for q, d in expected.items() if d}
    assert all(len(d) == len(set(d)) for d in got.values())


def test_rankings_from_runs_follow_the_ordering_rule() -> None:
    # the pipeline builds rankings with order_pairs: score ties go to the larger doc id
    ranking = order_pairs([("d1", 1.0), ("d3", 1.0), ("d2", 2.0)])
    assert [e.doc_id for e in build_pool({"s": {"q": ranking}}, depth=2)] == ["d2", "d3"]


def test_pooling_modules_import_no_heavy_library() -> None:
    code = (
        "import sys, workbench.core.pool.pooling, workbench.flows.pool, workbench.commands.pool\n"
        "heavy = {'torch', 'sentence_transformers', 'bm25s', 'textual', 'numpy'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_twin_groups_seen_partly_per_query_keep_one_canonical() -> None:
    """q1 retrieves b and c, q2 a and b (all three identical): each query sees part of the
    group, yet every query judges it under one id, so the aliases hold no cycle or chain."""
    rankings = {"s": {"q1": ["b", "c"], "q2": ["a", "b", "x"]}, "t": {"q2": ["a"]}}
    texts = {"a": "same", "b": "Same.", "c": "SAME", "x": "other"}
    entries = build_pool(rankings, twins=twins_of(texts))
    folded = {(e.query_id, e.doc_id): e.aliases for e in entries if e.aliases}
    canonical = {doc_id for _, doc_id in folded}
    assert len(canonical) == 1
    aliases = {a: c for (_, c), names in folded.items() for a in names}
    assert not set(aliases) & set(aliases.values())


def test_canonical_ids_prefer_queued_then_preferred_then_corpus_order() -> None:
    twins = {"a": ("a", "b", "c"), "b": ("a", "b", "c"), "c": ("a", "b", "c")}
    assert set(canonical_ids(twins).values()) == {"a"}
    assert set(canonical_ids(twins, keep={"c"}).values()) == {"c"}
    assert set(canonical_ids(twins, preference={"b": (0.5, "b")}).values()) == {"b"}
