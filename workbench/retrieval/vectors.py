"""The dense system from vectors the user brings (`pool --embeddings`): no passage is encoded.

Scores are cosine similarities, as the dense system's: rows are normalized once, queries in
batches, so a million passages need one float32 copy of the matrix and a batch of scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.core.errors import InputError
from workbench.core.model import Query, Run
from workbench.formats.vectors import ROW_BLOCK, GivenVectors
from workbench.retrieval.models import (
    ModelUnavailable,
    load_sentence_transformer,
    model_fingerprint,
    resolve_model,
    unavailable_reason,
)
from workbench.retrieval.select import ProgressCallback, top_scored

QUERY_BATCH = 32
"""Queries scored at once: a batch's scores are QUERY_BATCH x passages float32."""


def unit_rows(matrix: Any) -> Any:
    """float32 copy of `matrix` with every row scaled to length 1, block by block."""
    import numpy as np

    out = np.empty(matrix.shape, dtype=np.float32)
    for start in range(0, matrix.shape[0], ROW_BLOCK):
        block = np.asarray(matrix[start : start + ROW_BLOCK], dtype=np.float32)
        out[start : start + ROW_BLOCK] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


class VectorsRetriever:
    """Exact cosine top-k over the given passage vectors; query vectors given or encoded by
    `model` (which must be the model that made the passage vectors)."""

    name = "dense"
    cache_path = None
    """Runs are not cached: searching given vectors is cheap, and their file is the key."""

    def __init__(
        self, given: GivenVectors, model: str, progress: ProgressCallback | None = None
    ) -> None:
        self.given = given
        self.doc_ids = given.docs.ids
        self.model_name = model
        self._progress = progress
        self.embeddings = unit_rows(given.docs.matrix)

    def _query_vectors(self, queries: Sequence[Query]) -> Any:
        import numpy as np

        if self.given.queries is not None:
            row = {query_id: i for i, query_id in enumerate(self.given.queries.ids)}
            matrix = self.given.queries.matrix
            vectors = unit_rows(np.asarray(matrix[[row[q.query_id] for q in queries]]))
            source = str(self.given.queries.path)
        else:
            resolved = resolve_model(self.model_name)
            try:
                model = load_sentence_transformer(resolved, model_fingerprint(resolved))
            except Exception as error:
                raise ModelUnavailable(
                    unavailable_reason(self.model_name, resolved, error)
                ) from error
            encoded = model.encode(
                [q.text for q in queries],
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            vectors = np.asarray(encoded, dtype=np.float32)
            source = f"the model {self.model_name}"
        if vectors.shape[1] != self.embeddings.shape[1]:
            raise InputError(
                [
                    f"{self.given.docs.path}: {self.embeddings.shape[1]}-dimensional passage "
                    f"vectors, but {source} gives {vectors.shape[1]}-dimensional query vectors "
                    "(give --query-embeddings, or --dense-model naming the model that made them)"
                ]
            )
        return vectors

    def search(self, queries: Sequence[Query], depth: int) -> Run:
        """Top `depth` passages per query by cosine similarity; ties by the ordering rule."""
        run = Run(name=self.name)
        if not queries:
            return run
        vectors = self._query_vectors(queries)
        for start in range(0, len(queries), QUERY_BATCH):
            similarity = vectors[start : start + QUERY_BATCH] @ self.embeddings.T
            for query, row in zip(queries[start : start + QUERY_BATCH], similarity, strict=True):
                run.scores[query.query_id] = top_scored(self.doc_ids, row, depth)
            if self._progress:
                done = min(start + QUERY_BATCH, len(queries))
                self._progress("dense search", done, len(queries))
        return run
