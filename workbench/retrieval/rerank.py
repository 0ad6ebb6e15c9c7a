"""Second-stage reranking with a sentence-transformers CrossEncoder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.model import Doc, Query, Run
from workbench.retrieval.bm25 import passage_text
from workbench.retrieval.models import (
    DEFAULT_RERANK_MODEL,
    ModelUnavailable,
    load_cross_encoder,
    resolve_model,
    unavailable_reason,
)
from workbench.retrieval.select import ProgressCallback, top_scored


class CrossEncoderReranker:
    """Rescores each query's first-stage candidates (their union, deduplicated) with a
    cross-encoder's raw logits; a model without local files is `ModelUnavailable`."""

    name = "rerank"

    def __init__(
        self,
        model: str = DEFAULT_RERANK_MODEL,
        progress: ProgressCallback | None = None,
        batch_size: int = 32,
    ) -> None:
        self.model_name = str(model)
        self.resolved_model = resolve_model(model)
        self.batch_size = batch_size
        self._progress = progress
        try:
            self._model: Any = load_cross_encoder(self.resolved_model)
        except Exception as error:
            raise ModelUnavailable(
                unavailable_reason(self.model_name, self.resolved_model, error)
            ) from error

    def rerank(
        self,
        queries: Sequence[Query],
        docs_by_id: Mapping[str, Doc],
        candidates: Mapping[str, Sequence[str]],
        depth: int,
    ) -> Run:
        """Each query's candidates scored, cut at `depth` by the ordering rule."""
        import numpy as np
        import torch

        missing = sorted(
            {
                doc_id
                for q in queries
                for doc_id in candidates.get(q.query_id, ())
                if doc_id not in docs_by_id
            }
        )
        if missing:
            raise ValueError(f"candidate doc ids not in the corpus: {', '.join(missing[:10])}")
        per_query = [(q, list(dict.fromkeys(candidates.get(q.query_id, ())))) for q in queries]
        pairs = [(q.text, passage_text(docs_by_id[d])) for q, ids in per_query for d in ids]
        logits: list[Any] = []
        chunk = max(1, self.batch_size * 4)
        for start in range(0, len(pairs), chunk):
            logits.append(
                np.asarray(
                    self._model.predict(
                        pairs[start : start + chunk],
                        batch_size=self.batch_size,
                        show_progress_bar=False,
                        activation_fn=torch.nn.Identity(),
                        convert_to_numpy=True,
                    ),
                    dtype=np.float64,
                ).reshape(-1)
            )
            if self._progress:
                self._progress("rerank", min(start + chunk, len(pairs)), len(pairs))
        scores = np.concatenate(logits) if logits else np.zeros(0)
        run = Run(name=self.name)
        offset = 0
        for query, ids in per_query:
            run.scores[query.query_id] = top_scored(ids, scores[offset : offset + len(ids)], depth)
            offset += len(ids)
        return run
