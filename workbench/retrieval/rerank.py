"""Second-stage reranking with a sentence-transformers CrossEncoder (torch or ONNX Runtime)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from workbench.core.model import Doc, Query, Run
from workbench.retrieval.bm25 import passage_text
from workbench.retrieval.encoders import PairScorer, ProgressHook
from workbench.retrieval.models import (
    DEFAULT_RERANK_MODEL,
    ModelUnavailable,
    loading,
    no_local_copy,
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
        batch_size: int | None = None,
        encoder: str = "torch",
        device: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.model_name = str(model)
        self.resolved_model = resolve_model(model)
        self.batch_size = batch_size
        """The most pairs in one batch (None: 64 on a CPU, 256 on CUDA); fewer when long."""
        self._progress = progress
        missing = no_local_copy(self.model_name, self.resolved_model)
        if missing:  # said at once: no torch imported, no load tried
            raise ModelUnavailable(missing)
        try:
            with loading(progress, self.model_name):
                self._scorer = PairScorer(
                    self.resolved_model, encoder, device, cache_dir, batch_size
                )
        except ModelUnavailable:
            raise
        except Exception as error:
            raise ModelUnavailable(
                unavailable_reason(self.model_name, self.resolved_model, error)
            ) from error

    def _report(self, total: int) -> ProgressHook | None:
        """Progress at the start (0 done: the bar shows while the pairs' tokens are counted)
        and after every batch (the display throttles its redraws)."""
        if self._progress is None:
            return None
        progress = self._progress
        progress("rerank", 0, total)

        def report(done: int) -> None:
            progress("rerank", done, total)

        return report

    def rerank(
        self,
        queries: Sequence[Query],
        docs_by_id: Mapping[str, Doc],
        candidates: Mapping[str, Sequence[str]],
        depth: int,
    ) -> Run:
        """Each query's candidates scored, cut at `depth` by the ordering rule."""
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
        scores = self._scorer.score(pairs, self._report(len(pairs)))
        run = Run(name=self.name)
        offset = 0
        for query, ids in per_query:
            run.scores[query.query_id] = top_scored(ids, scores[offset : offset + len(ids)], depth)
            offset += len(ids)
        return run
