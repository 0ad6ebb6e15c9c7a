"""BM25: the ordering rule at ties, no zero-score docs, verified caches, bm25s == rank_bm25."""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from retrieval_fixtures import CRANFIELD, cranfield, farm_docs

from workbench.core.model import Doc, Query, order_pairs
from workbench.retrieval import BM25Retriever, passage_text, tokenize
from workbench.retrieval.select import top_scored

BACKENDS = ["rank_bm25", "bm25s"]


@given(
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, -1.0]), min_size=1, max_size=30),
    st.integers(min_value=0, max_value=35),
    st.booleans(),
)
def test_top_scored_is_the_ordering_rule_cut_at_depth(scores, depth, positive_only):
    doc_ids = [f"d{i}" for i in range(len(scores))]
    pairs = [(d, s) for d, s in zip(doc_ids, scores, strict=True) if s > 0 or not positive_only]
    got = top_scored(doc_ids, np.array(scores), depth, positive_only)
    assert list(got) == order_pairs(pairs)[:depth]
    assert all(got[d] == scores[int(d[1:])] for d in got)


def tie_corpus() -> list[Doc]:
    """Five identical passages (identical scores) with ids whose string order is not their
    insertion order, one stronger passage, and 24 fillers so idf stays positive."""
    tied = [Doc(doc_id, "hermetic storage bag") for doc_id in ["t10", "t2", "t9", "t1", "t3"]]
    return farm_docs() + tied + [Doc("best", "hermetic hermetic storage bag")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ties_at_the_cut_follow_doc_id_descending(tmp_path, backend):
    retriever = BM25Retriever(tie_corpus(), backend=backend, cache_dir=tmp_path)
    assert retriever.name == "bm25"
    run = retriever.search([Query("q", "hermetic")], depth=3)
    assert run.name == "bm25"
    # "t9" > "t3" > "t2" > "t10" > "t1" as strings: the cut keeps t9 and t3, never by position.
    assert run.rankings()["q"] == ["best", "t9", "t3"]
    scores = run.scores["q"]
    assert scores["best"] > scores["t9"] == scores["t3"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_docs_with_a_positive_score_are_returned(tmp_path, backend):
    retriever = BM25Retriever(tie_corpus(), backend=backend, cache_dir=tmp_path)
    run = retriever.search(
        [Query("q", "Hermetic!"), Query("none", "zebra unicorn"), Query("e", "")], 100
    )
    assert set(run.scores["q"]) == {"best", "t10", "t2", "t9", "t1", "t3", "s1"}
    assert all(score > 0 for score in run.scores["q"].values())
    assert run.scores["none"] == {} and run.scores["e"] == {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_scores_are_bm25_okapi_computed_by_hand(tmp_path, backend):
    docs = farm_docs()
    retriever = BM25Retriever(docs, backend=backend, cache_dir=tmp_path)
    tokens = [tokenize(passage_text(d)) for d in docs]
    avgdl = sum(map(len, tokens)) / len(tokens)
    df = Counter(t for doc in tokens for t in set(doc))
    n = len(docs)

    def expected(query_terms, doc):
        tf = Counter(doc)
        total = 0.0
        for term in query_terms:
            idf = math.log(n - df[term] + 0.5) - math.log(df[term] + 0.5) if term in df else 0.0
            total += idf * tf[term] * 2.5 / (tf[term] + 1.5 * (0.25 + 0.75 * len(doc) / avgdl))
        return total

    query = ["maize", "armyworm", "whorl"]
    got = retriever.search([Query("q", " ".join(query))], depth=n).scores["q"]
    want = {d.doc_id: expected(query, t) for d, t in zip(docs, tokens, strict=True)}
    want = {doc_id: score for doc_id, score in want.items() if score > 0}
    assert got.keys() == want.keys()
    for doc_id, score in want.items():
        assert got[doc_id] == pytest.approx(score, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_index_is_cached_and_reused(tmp_path, backend):
    first = BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path)
    assert not first.from_cache and first.cache_path.exists()
    assert first.cache_path.parent == tmp_path
    second = BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path)
    assert second.from_cache and second.cache_path == first.cache_path
    queries = [Query("q1", "maize armyworm"), Query("q2", "milk cows")]
    assert second.search(queries, 10).scores == first.search(queries, 10).scores
    changed = farm_docs()[:-1] + [Doc("x4", "borehole water nitrates")]
    other = BM25Retriever(changed, backend=backend, cache_dir=tmp_path)
    assert not other.from_cache and other.cache_path != first.cache_path


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "manifest", "no-manifest"])
def test_a_corrupt_cache_is_rebuilt_never_trusted(tmp_path, backend, damage):
    queries = [Query("q1", "maize armyworm whorl"), Query("q2", "milk cows udder")]
    good = BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path)
    expected = good.search(queries, 10).scores
    path = good.cache_path
    manifest = path.with_name(path.name + ".json")
    payload = bytearray(path.read_bytes())
    if damage == "flip":
        payload[len(payload) // 2] ^= 0xFF
        path.write_bytes(bytes(payload))
    elif damage == "truncate":
        path.write_bytes(bytes(payload[: len(payload) // 3]))
    elif damage == "garbage":
        path.write_bytes(b"not an index")
    elif damage == "manifest":
        data = json.loads(manifest.read_text())
        data["key"]["corpus"] = "0" * 64  # a stale entry: written for another corpus
        manifest.write_text(json.dumps(data))
    else:
        manifest.unlink()
    rebuilt = BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path)
    assert not rebuilt.from_cache
    assert rebuilt.search(queries, 10).scores == expected
    assert BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path).from_cache


def test_unknown_backend_empty_corpus_and_duplicate_ids_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown BM25 backend"):
        BM25Retriever(farm_docs(), backend="lucene", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="empty corpus"):
        BM25Retriever([], cache_dir=tmp_path)
    with pytest.raises(ValueError, match="duplicate doc ids in the corpus: m1"):
        BM25Retriever(farm_docs() + [Doc("m1", "again")], cache_dir=tmp_path)


def test_progress_reports_reach_their_totals(tmp_path):
    seen: list[tuple[str, int, int]] = []
    retriever = BM25Retriever(farm_docs(), cache_dir=tmp_path, progress=lambda *a: seen.append(a))
    retriever.search([Query("a", "maize"), Query("b", "milk")], 5)
    assert ("bm25 tokenize", 24, 24) in seen and seen[-1] == ("bm25 search", 2, 2)


@pytest.fixture(scope="module")
def cranfield_runs(tmp_path_factory):
    if not CRANFIELD.is_dir():
        pytest.skip("the cranfield collection is not at hand")
    docs, queries = cranfield()
    cache = tmp_path_factory.mktemp("bm25-cache")
    retrievers = {b: BM25Retriever(docs, backend=b, cache_dir=cache) for b in BACKENDS}
    return docs, queries[:20], retrievers


def test_bm25s_scores_equal_rank_bm25_on_cranfield(cranfield_runs):
    """Not merely within 1e-5: the same bits, so near-ties deep in a ranking break the same way."""
    docs, queries, retrievers = cranfield_runs
    for query in queries:
        reference = retrievers["rank_bm25"].scores(query.text)
        np.testing.assert_array_equal(retrievers["bm25s"].scores(query.text), reference)
    for depth in (20, len(docs)):
        runs = {b: r.search(queries, depth) for b, r in retrievers.items()}
        assert runs["bm25s"].scores == runs["rank_bm25"].scores
        assert runs["bm25s"].rankings() == runs["rank_bm25"].rankings()
        if depth == 20:
            assert all(len(ranking) == 20 for ranking in runs["bm25s"].rankings().values())


def test_parity_needs_the_epsilon_floor_on_cranfield(cranfield_runs):
    """Cranfield has terms in more than half the docs ("of", "the"): plain bm25s scores them 0,
    BM25Okapi scores them epsilon * mean idf; without the rewrite the backends would differ."""
    import bm25s

    docs, queries, retrievers = cranfield_runs
    tokens = [tokenize(passage_text(d)) for d in docs]
    df = Counter(t for doc in tokens for t in set(doc))
    common = sorted(t for t, f in df.items() if f > len(docs) / 2)
    assert "the" in common and "of" in common
    plain = bm25s.BM25(method="atire", idf_method="robertson", dtype="float64")
    plain.index(tokens, show_progress=False, create_empty_token=False)
    query = "the theory of the flow"
    unpatched = plain.get_scores(tokenize(query))
    reference = retrievers["rank_bm25"].scores(query)
    assert not np.allclose(unpatched, reference, rtol=1e-5)
    np.testing.assert_allclose(retrievers["bm25s"].scores(query), reference, rtol=1e-5, atol=0)


class _Planted:
    """A pickle that runs code when loaded."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, ("touch PLANTED",))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_planted_cache_entry_never_runs_code(tmp_path, backend, monkeypatch):
    """Anyone who can write the cache folder can write a payload and a manifest that vouches
    for it: the payload must be plain data (JSON, or numpy without pickles), never a pickle."""
    import hashlib
    import pickle

    monkeypatch.chdir(tmp_path)
    good = BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path)
    path = good.cache_path
    manifest_path = path.with_name(path.name + ".json")
    payload = pickle.dumps({"doc_ids": good.doc_ids, "okapi": _Planted()})
    manifest = json.loads(manifest_path.read_text())
    manifest.update(bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())
    path.write_bytes(payload)
    manifest_path.write_text(json.dumps(manifest))
    again = BM25Retriever(farm_docs(), backend=backend, cache_dir=tmp_path)
    assert not (tmp_path / "PLANTED").exists()
    assert not again.from_cache


def test_a_vouched_for_index_with_nan_scores_is_rebuilt(tmp_path):
    """A bm25s entry whose manifest was rewritten to match still has its values checked."""
    import io

    from workbench.retrieval.bm25 import SparseIndex
    from workbench.retrieval.cache import store_entry

    queries = [Query("q1", "maize armyworm whorl"), Query("q2", "milk cows udder")]
    good = BM25Retriever(farm_docs(), backend="bm25s", cache_dir=tmp_path)
    expected = good.search(queries, 10).scores
    path = good.cache_path
    index = SparseIndex.read(io.BytesIO(path.read_bytes()), len(farm_docs()))
    assert index is not None
    index.data[:] = float("nan")
    forged = io.BytesIO()
    index.write(forged)
    key = json.loads(path.with_name(path.name + ".json").read_text())["key"]
    store_entry(path, forged.getvalue(), key)
    rebuilt = BM25Retriever(farm_docs(), backend="bm25s", cache_dir=tmp_path)
    assert not rebuilt.from_cache
    assert rebuilt.search(queries, 10).scores == expected
