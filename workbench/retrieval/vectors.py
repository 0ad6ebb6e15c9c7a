"""The dense system from vectors the user brings (`pool --embeddings`): no passage is encoded.

Scores are cosine similarities, as the dense system's: `formats.vectors` reads the rows already
scaled to length 1 (float32, one copy), and queries are scored in batches, so a million passages
need the matrix and a batch of scores. Without query vectors the dense model encodes the queries
with the pool's --encoder and --device, as the dense system does."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from workbench.core.errors import InputError
from workbench.core.model import Query, Run
from workbench.formats.vectors import GivenVectors
from workbench.retrieval.models import (
    ModelUnavailable,
    loading,
    no_local_copy,
    resolve_model,
    unavailable_reason,
)
from workbench.retrieval.select import ProgressCallback, top_scored

QUERY_BATCH = 32
"""Queries scored at once: a batch's scores are QUERY_BATCH x passages float32."""


class VectorsRetriever:
    """Exact cosine top-k over the given passage vectors; query vectors given or encoded by
    `model` (which must be the model that made the passage vectors)."""

    name = "dense"
    cache_path = None
    """Runs are not cached: searching given vectors is cheap, and their file is the key."""

    def __init__(
        self,
        given: GivenVectors,
        model: str,
        progress: ProgressCallback | None = None,
        encoder: str = "torch",
        device: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.given = given
        self.doc_ids = given.docs.ids
        self.model_name = model
        self._progress = progress
        self.encoder_variant = encoder
        self.device = device
        self.cache_dir = cache_dir
        self.embeddings = given.docs.matrix  # rows of length 1 (`formats.vectors`)

    def _query_vectors(self, queries: Sequence[Query]) -> Any:
        import numpy as np

        if self.given.queries is not None:
            row = {query_id: i for i, query_id in enumerate(self.given.queries.ids)}
            matrix = self.given.queries.matrix
            vectors = np.asarray(matrix[[row[q.query_id] for q in queries]])
            source = str(self.given.queries.path)
        else:
            from workbench.retrieval.encoders import SentenceEncoder

            resolved = resolve_model(self.model_name)
            missing = no_local_copy(self.model_name, resolved)
            if missing:  # said at once: no torch imported, no load tried
                raise ModelUnavailable(missing)
            try:
                with loading(self._progress, self.model_name):
                    encoder = SentenceEncoder(
                        resolved, self.encoder_variant, self.device, self.cache_dir
                    )
            except ModelUnavailable:
                raise
            except Exception as error:
                raise ModelUnavailable(
                    unavailable_reason(self.model_name, resolved, error)
                ) from error
            vectors = np.asarray(encoder.embed([q.text for q in queries]), dtype=np.float32)
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
