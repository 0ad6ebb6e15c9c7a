"""What pooling asks of a system, in two stages.

A first-stage `Retriever` ranks the whole corpus for each query (BM25, dense). A second-stage
`Reranker` ranks only the candidates that first-stage systems found (a cross-encoder): it
cannot run alone, and its depth is bounded by what it is given. Both are built by a factory
from the corpus and the user's `BuildOptions`; `registry` names them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from workbench.core.model import Doc, Query, Run
from workbench.formats.vectors import GivenVectors
from workbench.retrieval.select import ProgressCallback


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """What a user can choose for the systems `workbench pool` builds."""

    cache_dir: str | os.PathLike[str] | None = None
    """Index, embedding and run cache (None: `cache.default_cache_dir()`)."""
    progress: ProgressCallback | None = None
    bm25_backend: str = "auto"
    """rank_bm25, bm25s, or auto (`bm25.resolve_backend`: bm25s from 1,000 passages)."""
    dense_model: str | None = None
    """None: `models.DEFAULT_DENSE_MODEL`."""
    rerank_model: str | None = None
    """None: `models.DEFAULT_RERANK_MODEL`."""
    vectors: GivenVectors | None = None
    """Passage (and query) vectors the user brought: `dense` searches them, encoding no passage."""
    encoder: str = "torch"
    """How dense and rerank run their model: "torch", "onnx" or "onnx-int8" (`encoders`)."""
    device: str | None = None
    """"cpu" or "cuda" (None: the library's choice)."""


@runtime_checkable
class Retriever(Protocol):
    """A first-stage system: the top `depth` docs of the corpus per query."""

    @property
    def name(self) -> str: ...

    @property
    def cache_path(self) -> Path | None:
        """The index file on disk, whose name is a digest of everything the index depends on
        (it keys the run cache, see `cache.cached_search`); None: runs are not cached."""
        ...

    def search(self, queries: Sequence[Query], depth: int) -> Run:
        """Each query's top `depth` docs with their scores (a query may map to {})."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """A second-stage system: rescores each query's first-stage candidates."""

    @property
    def name(self) -> str: ...

    def rerank(
        self,
        queries: Sequence[Query],
        docs_by_id: Mapping[str, Doc],
        candidates: Mapping[str, Sequence[str]],
        depth: int,
    ) -> Run:
        """Each query's candidates scored, cut at `depth` by the ordering rule."""
        ...


RetrieverFactory = Callable[[Sequence[Doc], BuildOptions], Retriever]
"""Builds a retriever over the corpus; raises `ModelUnavailable` when its model cannot load."""
RerankerFactory = Callable[[BuildOptions], Reranker]
"""Builds a reranker; raises `ModelUnavailable` when its model cannot load."""
