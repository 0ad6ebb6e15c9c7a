"""The systems `workbench pool --systems` knows, by name: adding one is a module with its
class and one line here, or a package of its own that names its factory in the entry-point
group `workbench.retrievers` (a first-stage system: `factory(docs, options) -> Retriever`) or
`workbench.rerankers` (`factory(options) -> Reranker`), as harlequin finds its adapters. The
pipeline and the command read these two dicts, nothing else."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from workbench.core.errors import InputError
from workbench.core.model import Doc
from workbench.retrieval.base import BuildOptions, RerankerFactory, RetrieverFactory
from workbench.retrieval.bm25 import BM25Retriever
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.models import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL, no_local_copy
from workbench.retrieval.rerank import CrossEncoderReranker
from workbench.retrieval.vectors import VectorsRetriever


def _bm25(docs: Sequence[Doc], options: BuildOptions) -> BM25Retriever:
    return BM25Retriever(
        docs, backend=options.bm25_backend, cache_dir=options.cache_dir, progress=options.progress
    )


def _dense(docs: Sequence[Doc], options: BuildOptions) -> DenseRetriever | VectorsRetriever:
    if options.vectors is not None:
        model = options.dense_model or DEFAULT_DENSE_MODEL
        return VectorsRetriever(
            options.vectors, model, options.progress, options.encoder, options.device,
            options.cache_dir,
        )  # fmt: skip
    return DenseRetriever(
        docs,
        model=options.dense_model or DEFAULT_DENSE_MODEL,
        cache_dir=options.cache_dir,
        progress=options.progress,
        encoder=options.encoder,
        device=options.device,
    )


def _cross_encoder(options: BuildOptions) -> CrossEncoderReranker:
    return CrossEncoderReranker(
        model=options.rerank_model or DEFAULT_RERANK_MODEL,
        progress=options.progress,
        encoder=options.encoder,
        device=options.device,
        cache_dir=options.cache_dir,
    )


RETRIEVER_GROUP = "workbench.retrievers"
RERANKER_GROUP = "workbench.rerankers"


class PluginFactory:
    """A system from an installed package's entry point, imported only when it is built (a
    pool that does not ask for it never imports it)."""

    def __init__(self, name: str, target: str, load: Callable[[], Any]) -> None:
        self.name, self.target, self._load = name, target, load

    def __call__(self, *args: Any) -> Any:
        try:
            factory = self._load()
        except Exception as exc:  # a plugin's own fault, said as such: any import error
            raise InputError(
                [f"--systems: {self.name}: its package's entry point {self.target} does not load"
                 f" ({type(exc).__name__}: {exc})"]
            ) from None  # fmt: skip
        return factory(*args)


def plugins(group: str, taken: Sequence[str]) -> dict[str, PluginFactory]:
    """The systems installed packages add to `group`, by name; a name already `taken` (a
    built-in, or an earlier package's) keeps its first meaning."""
    from importlib.metadata import entry_points

    found: dict[str, PluginFactory] = {}
    for point in sorted(entry_points(group=group), key=lambda p: (p.name, p.value)):
        if point.name not in taken and point.name not in found:
            found[point.name] = PluginFactory(point.name, point.value, point.load)
    return found


_BUILT_IN_RETRIEVERS: dict[str, RetrieverFactory] = {"bm25": _bm25, "dense": _dense}
_BUILT_IN_RERANKERS: dict[str, RerankerFactory] = {"rerank": _cross_encoder}

RETRIEVERS: dict[str, RetrieverFactory] = {
    **_BUILT_IN_RETRIEVERS,
    **plugins(RETRIEVER_GROUP, [*_BUILT_IN_RETRIEVERS, *_BUILT_IN_RERANKERS]),
}
"""First-stage systems: each ranks the whole corpus."""

RERANKERS: dict[str, RerankerFactory] = {
    **_BUILT_IN_RERANKERS,
    **plugins(RERANKER_GROUP, [*RETRIEVERS, *_BUILT_IN_RERANKERS]),
}
"""Second-stage systems: each rescores the union of the first-stage systems' top candidates."""

ENCODING_SYSTEMS = frozenset({"dense", "rerank"})
"""The systems that run a neural model: `BuildOptions.encoder` and `device` apply to them."""


def system_names() -> tuple[str, ...]:
    """Every registered system, first stage then second, in registration order."""
    return (*RETRIEVERS, *RERANKERS)


def models_missing(
    systems: Sequence[str],
    dense_model: str | None = None,
    rerank_model: str | None = None,
    dense_loads: bool = True,
) -> dict[str, str]:
    """The systems of `systems` whose model certainly has no local copy (`no_local_copy`),
    with why: decided in milliseconds, before torch is imported, so a pool can leave them out
    of what it announces. `dense_loads`: False when given vectors stand in for dense's model."""
    models = {
        "dense": dense_model or DEFAULT_DENSE_MODEL,
        "rerank": rerank_model or DEFAULT_RERANK_MODEL,
    }
    if not dense_loads:
        models.pop("dense")
    missing = {}
    for name in systems:
        reason = no_local_copy(models[name]) if name in models else None
        if reason:
            missing[name] = reason
    return missing
