"""Token counting in chunks (a corpus's token ids are never held at once, only its lengths;
the counts and vectors equal one call's), and a damaged cached ONNX graph exported again."""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_fixtures import farm_docs

from workbench.retrieval import DenseRetriever, encoders, passage_text


@pytest.mark.slow
def test_counts_in_chunks_equal_one_call(tmp_path, monkeypatch) -> None:
    docs = farm_docs()
    retriever = DenseRetriever(docs[:1], cache_dir=tmp_path, encoder="torch", device="cpu")
    encoder = retriever.encoder()
    texts = [passage_text(d) for d in docs]
    whole = encoders._token_counts(encoder.model, texts)
    pairs = [("a query", t) for t in texts]
    whole_pairs = encoders._token_counts(encoder.model, pairs)
    monkeypatch.setattr(encoders, "COUNT_CHUNK", 3)
    calls: list[int] = []
    tokenizer = encoder.model.tokenizer
    original = type(tokenizer).__call__

    def counting(self, *args, **kwargs):
        calls.append(len(args[0]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(tokenizer), "__call__", counting)
    assert encoders._token_counts(encoder.model, texts) == whole
    assert encoders._token_counts(encoder.model, pairs) == whole_pairs
    assert max(calls) <= 3 and sum(calls) == 2 * len(texts)
    monkeypatch.undo()
    vectors = encoder.embed(texts)
    assert vectors.shape[0] == len(texts) and np.isfinite(vectors).all()
    # Each row is its own text's vector wherever its batch fell.
    alone = np.concatenate([encoder.embed([t]) for t in texts[:4]])
    assert np.allclose(vectors[:4], alone, atol=1e-5)


@pytest.mark.slow
@pytest.mark.skipif(
    any(__import__("importlib").util.find_spec(m) is None for m in ("onnxruntime", "onnx")),
    reason="the onnx extra is not installed",
)
def test_a_vouched_for_graph_onnx_runtime_cannot_load_is_exported_again(
    tmp_path, monkeypatch
) -> None:
    """A cached graph written over by hand, its manifest rewritten to match, is re-exported."""
    import json
    from pathlib import Path

    from workbench.retrieval.cache import store_entry

    monkeypatch.setenv("WORKBENCH_GRAPH_DIR", str(tmp_path / "graphs"))
    docs = farm_docs()
    first = DenseRetriever(docs, cache_dir=tmp_path / "a", encoder="onnx", device="cpu")
    [graph] = [p for p in (tmp_path / "graphs").glob("onnx-embed-*-fp32.onnx")]
    key = json.loads(Path(f"{graph}.json").read_text())["key"]
    store_entry(graph, b"not a graph", key)
    texts = [passage_text(d) for d in docs[:3]]
    fresh = DenseRetriever(docs[:1], cache_dir=tmp_path / "a", encoder="onnx", device="cpu")
    assert np.allclose(fresh.encoder().embed(texts), first.encoder().embed(texts), atol=1e-5)
    assert graph.read_bytes() != b"not a graph"  # exported again over the damaged entry
