"""Token counting in chunks: a corpus's token ids are never held at once, only its lengths,
and the counts and the vectors are the same as counting everything in one call."""

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
