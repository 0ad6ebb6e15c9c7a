"""Dense retrieval: sentence-transformers embeddings, cached on disk, exact cosine top-k."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.core.model import Doc, Query, Run
from workbench.retrieval.bm25 import passage_text
from workbench.retrieval.cache import (
    corpus_hash,
    default_cache_dir,
    key_digest,
    load_entry,
    store_entry,
)
from workbench.retrieval.encoder_choice import VARIANTS, encoder_key
from workbench.retrieval.encoders import SentenceEncoder
from workbench.retrieval.models import (
    DEFAULT_DENSE_MODEL,
    ModelUnavailable,
    loading,
    model_fingerprint,
    no_local_copy,
    resolve_model,
    unavailable_reason,
)
from workbench.retrieval.select import ProgressCallback, check_unique_ids, top_scored


class DenseRetriever:
    """Encodes the corpus once per (model, encoder, corpus) and keeps the normalized embeddings
    on disk (.npy + manifest), so a second run encodes nothing; search is an exact dot
    product."""

    name = "dense"

    def __init__(
        self,
        docs: Sequence[Doc],
        model: str = DEFAULT_DENSE_MODEL,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int | None = None,
        progress: ProgressCallback | None = None,
        encoder: str = "torch",
        device: str | None = None,
    ) -> None:
        if not docs:
            raise ValueError("cannot build a dense index over an empty corpus")
        if encoder not in VARIANTS:
            raise ValueError(f"unknown encoder {encoder!r} (known: {', '.join(VARIANTS)})")
        self.doc_ids = [doc.doc_id for doc in docs]
        check_unique_ids(self.doc_ids)
        self.model_name = str(model)
        self.resolved_model = resolve_model(model)
        self.batch_size = batch_size
        """The most texts in one batch (None: 64 on a CPU, 256 on CUDA); fewer when long."""
        self.encoder_variant = encoder
        self.device = device
        self._progress = progress
        self._encoder: SentenceEncoder | None = None
        self.encoded_count = 0
        """Passages encoded by this object (0 when the embeddings came from the cache)."""
        self.corpus_hash = corpus_hash(docs)
        self._fingerprint = model_fingerprint(self.resolved_model)
        key = {
            "kind": "dense",
            "model": self.resolved_model,
            "model_fingerprint": self._fingerprint,
            "encoder": encoder_key(encoder),
            "corpus": self.corpus_hash,
            "passage": "title\\ntext",
            "normalized": True,
        }
        self._cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = self._cache_root / f"dense-{key_digest(key)}.npy"
        self.embeddings = self._restore(load_entry(self.cache_path, key))
        if self.embeddings is None:
            self.embeddings = self._encode_passages([passage_text(doc) for doc in docs])
            store_entry(self.cache_path, self._serialize(self.embeddings), key)

    def _restore(self, payload: bytes | None) -> Any:
        """Cached embeddings, or None when absent or not a (docs x dim) float32 matrix."""
        if payload is None:
            return None
        import numpy as np

        try:
            matrix = np.load(io.BytesIO(payload), allow_pickle=False)
        except Exception:  # a damaged entry is re-encoded, never trusted
            return None
        if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != len(self.doc_ids):
            return None
        return matrix

    @staticmethod
    def _serialize(matrix: Any) -> bytes:
        import numpy as np

        buffer = io.BytesIO()
        np.save(buffer, matrix, allow_pickle=False)
        return buffer.getvalue()

    def encoder(self) -> SentenceEncoder:
        """The model behind its backend, loaded (and for ONNX exported) on first use: a warm
        cache needs it only for queries."""
        if self._encoder is None:
            missing = no_local_copy(self.model_name, self.resolved_model)
            if missing:  # said at once: no torch imported, no load tried
                raise ModelUnavailable(missing)
            try:
                with loading(self._progress, self.model_name):
                    self._encoder = SentenceEncoder(
                        self.resolved_model,
                        self.encoder_variant,
                        self.device,
                        self._cache_root,
                        self.batch_size,
                    )
            except ModelUnavailable:
                raise
            except Exception as error:
                raise ModelUnavailable(
                    unavailable_reason(self.model_name, self.resolved_model, error)
                ) from error
        return self._encoder

    def model(self) -> Any:
        """The sentence-transformers model (loaded on first use)."""
        return self.encoder().model

    def _encode(self, texts: list[str]) -> Any:
        """Queries' vectors (passages go through `_encode_passages`)."""
        return self.encoder().embed_queries(texts)

    def _encode_passages(self, passages: list[str]) -> Any:
        """All passages in corpus order, batched by length (see `SentenceEncoder.embed`);
        progress at the start (0 done, once the model is loaded: the bar shows while the
        tokens are counted) and after every batch (the display throttles its redraws)."""
        encoder = self.encoder()
        if self._progress:
            self._progress("dense encode", 0, len(passages))

        def report(done: int) -> None:
            self.encoded_count = done
            if self._progress:
                self._progress("dense encode", done, len(passages))

        return encoder.embed(passages, report)

    def search(self, queries: Sequence[Query], depth: int) -> Run:
        """Top `depth` docs per query by cosine similarity; ties by the ordering rule."""
        run = Run(name=self.name)
        if not queries:
            return run
        query_vectors = self._encode([query.text for query in queries])
        if self._progress:
            self._progress("dense queries", len(queries), len(queries))
        similarity = query_vectors @ self.embeddings.T
        for query, row in zip(queries, similarity, strict=True):
            run.scores[query.query_id] = top_scored(self.doc_ids, row, depth)
        return run

    def score_pairs(
        self, queries: Sequence[Query], pairs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], float]:
        """Cosine similarity of each (query_id, doc_id) pair: the score `search` ranks by, for
        callers that need it on given pairs (a bi-encoder used as a judge). Each query named is
        encoded once; passages come from the corpus embeddings (cached on disk).

        Raises ValueError naming pairs whose query or doc is unknown."""
        import numpy as np

        query_row = {query.query_id: row for row, query in enumerate(queries)}
        doc_row = {doc_id: row for row, doc_id in enumerate(self.doc_ids)}
        unknown = [(q, d) for q, d in pairs if q not in query_row or d not in doc_row]
        if unknown:
            shown = ", ".join(f"{q}/{d}" for q, d in unknown[:10])
            raise ValueError(f"{len(unknown)} pairs name a query or doc not given: {shown}")
        if not pairs:
            return {}
        needed = sorted({query_row[q] for q, _ in pairs})
        query_vectors = self._encode([queries[row].text for row in needed])
        if self._progress:
            self._progress("dense queries", len(needed), len(needed))
        vector_row = {row: index for index, row in enumerate(needed)}
        left = query_vectors[np.array([vector_row[query_row[q]] for q, _ in pairs])]
        right = self.embeddings[np.array([doc_row[d] for _, d in pairs])]
        similarity = np.einsum("ij,ij->i", left, right)
        return {pair: float(score) for pair, score in zip(pairs, similarity, strict=True)}
