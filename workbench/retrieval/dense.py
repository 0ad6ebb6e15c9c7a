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
from workbench.retrieval.models import (
    DEFAULT_DENSE_MODEL,
    ModelUnavailable,
    load_sentence_transformer,
    model_fingerprint,
    resolve_model,
    unavailable_reason,
)
from workbench.retrieval.select import ProgressCallback, check_unique_ids, top_scored


class DenseRetriever:
    """Encodes the corpus once per (model, corpus) and keeps the normalized embeddings on disk
    (.npy + manifest), so a second run encodes nothing; search is an exact dot product."""

    name = "dense"

    def __init__(
        self,
        docs: Sequence[Doc],
        model: str = DEFAULT_DENSE_MODEL,
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 64,
        progress: ProgressCallback | None = None,
    ) -> None:
        if not docs:
            raise ValueError("cannot build a dense index over an empty corpus")
        self.doc_ids = [doc.doc_id for doc in docs]
        check_unique_ids(self.doc_ids)
        self.model_name = str(model)
        self.resolved_model = resolve_model(model)
        self.batch_size = batch_size
        self._progress = progress
        self._model: Any = None
        self.encoded_count = 0
        """Passages encoded by this object (0 when the embeddings came from the cache)."""
        self.corpus_hash = corpus_hash(docs)
        self._fingerprint = model_fingerprint(self.resolved_model)
        key = {
            "kind": "dense",
            "model": self.resolved_model,
            "model_fingerprint": self._fingerprint,
            "corpus": self.corpus_hash,
            "passage": "title\\ntext",
            "normalized": True,
        }
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = root / f"dense-{key_digest(key)}.npy"
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

    def model(self) -> Any:
        """The SentenceTransformer, loaded on first use (a warm cache needs it only for queries)."""
        if self._model is None:
            try:
                self._model = load_sentence_transformer(self.resolved_model, self._fingerprint)
            except Exception as error:
                raise ModelUnavailable(
                    unavailable_reason(self.model_name, self.resolved_model, error)
                ) from error
        return self._model

    def _encode(self, texts: list[str]) -> Any:
        import numpy as np

        vectors = self.model().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _encode_passages(self, passages: list[str]) -> Any:
        """Longest first in chunks (little padding, steady progress), then back in corpus order."""
        import numpy as np

        order = sorted(range(len(passages)), key=lambda i: len(passages[i]), reverse=True)
        chunk = max(1, self.batch_size * 4)
        parts: list[Any] = []
        for start in range(0, len(order), chunk):
            parts.append(self._encode([passages[i] for i in order[start : start + chunk]]))
            self.encoded_count += len(parts[-1])
            if self._progress:
                self._progress("dense encode", min(start + chunk, len(order)), len(order))
        matrix = np.empty((len(passages), parts[0].shape[1]), dtype=np.float32)
        matrix[np.array(order)] = np.concatenate(parts)
        return matrix

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
