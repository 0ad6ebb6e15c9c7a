"""The pooling use case: corpus + queries -> retrievers and run files -> pool -> judgments store.

`pool_corpus(PoolOptions(...))` reads the files, runs the retrievers, writes each system's run
file and the store: every input is checked before anything is written; re-running only adds
what is new (existing items keep their positions, judgments are never touched). Its parts:
`pool_inputs` (read and check), `pool_policy` (what the store already holds allows),
`twins` (identical passages), `pool_write` (the pooling written, summed up)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.errors import InputError
from workbench.core.progress import ProgressCallback
from workbench.core.store_url import StoreLocation
from workbench.flows.pool_inputs import (
    PoolInputs,
    VectorPaths,
    check_options,
    check_outputs_of,
    read_inputs,
)
from workbench.flows.pool_policy import (
    POLICIES,
    candidate_depth_problems,
    corpus_passages,
    replacing_note,
)
from workbench.flows.pool_write import (
    Pooled,
    PoolSummary,
    SystemStatus,
    write_adaptive,
    write_static,
)
from workbench.flows.twins import corpus_twins
from workbench.formats.passages import PassageRule
from workbench.retrieval.base import BuildOptions
from workbench.retrieval.bm25 import CHOICES as BM25_BACKENDS
from workbench.retrieval.encoder_choice import DEFAULT_ENCODER
from workbench.retrieval.registry import ENCODING_SYSTEMS, models_missing, system_names
from workbench.retrieval.systems import SystemResult, run_systems

if TYPE_CHECKING:
    from workbench.retrieval.encoder_choice import EncoderChoice
    from workbench.store.base import JudgmentStore

__all__ = [
    "BM25_BACKENDS", "POLICIES", "SYSTEMS", "PoolOptions", "PoolSummary", "SystemStatus",
    "VectorPaths", "pool_corpus",
]  # fmt: skip

SYSTEMS = system_names()
"""The registered systems (`retrieval.registry`), pooled by default; `rerank` rescores the
union of the others' top candidates."""

RUN_DEPTH = 100
"""Registered systems retrieve (and write in their run files) at least this deep."""


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """Everything a pooling is asked to do (`workbench pool`'s options, defaults resolved)."""

    corpus: str | os.PathLike[str]
    queries: str | os.PathLike[str]
    db: str | os.PathLike[str]
    """The store (created when absent): a file or a PostgreSQL URL."""
    systems: Sequence[str] = SYSTEMS
    run_files: Sequence[str | os.PathLike[str]] = ()
    """TREC run files pooled as more systems, each under its tag."""
    depth: int = 20
    """Static policy: the top-k of each system."""
    strategy: str = "rrf"
    seed: int = 0
    sample: int = 0
    """Static policy: random docs per query from outside the pool."""
    bm25_backend: str = "auto"
    dense_model: str | None = None
    rerank_model: str | None = None
    cache_dir: str | os.PathLike[str] | None = None
    runs_dir: str | os.PathLike[str] | None = None
    """Where the systems' runs are written (default `<db>-runs/`, `./<database>-runs/` for a
    URL)."""
    policy: str = "static"
    """`adaptive`: each query's frame for the adaptive queue (every system's top
    `candidate_depth` and a random reserve of the rest; `core.adaptive`), into a new store only."""
    vector_paths: VectorPaths = VectorPaths()
    """Passage (and query) vectors the dense system searches instead of encoding."""
    encoder: str = DEFAULT_ENCODER
    """With `device`: how dense and rerank run their models (`encoder_choice.choose_encoder`)."""
    device: str = "auto"
    candidate_depth: int | None = None
    """How deep the adaptive frame's candidates go (None: `core.adaptive.CANDIDATE_DEPTH`)."""
    passages: PassageRule | None = None
    """How a text folder is cut (default: as the store's earlier poolings cut it, else
    `formats.passages.DEFAULT_RULE`; `pool_policy.corpus_passages`)."""


def pool_corpus(options: PoolOptions, progress: ProgressCallback | None = None) -> PoolSummary:
    """Pool the corpus for the queries into the store (`PoolOptions`): run the systems, write
    each one's run file, then add the new pool items (or the adaptive frames) to the store."""
    choice = checked_encoder(options)
    db = StoreLocation(options.db)
    runs_path = runs_folder(db, options.runs_dir)
    rule = corpus_passages(db, options.corpus, options.passages)
    inputs = read_inputs(options.corpus, options.queries, options.systems, options.run_files,
                         options.vector_paths, rule)  # fmt: skip
    if choice is not None:
        inputs.warnings.extend(choice.warnings)
    check_outputs_of(db, runs_path, inputs.systems, options.corpus, options.queries,
                     options.run_files, options.vector_paths)  # fmt: skip
    build = BuildOptions(
        options.cache_dir, progress, options.bm25_backend, options.dense_model,
        options.rerank_model, vectors=inputs.vectors,
        encoder=choice.variant if choice else "torch", device=choice.device if choice else None,
    )  # fmt: skip
    with claimed(db) as store:  # before any system runs: a second pool is told at once
        pooled = _run(options, inputs, build, runs_path)
        inputs.warnings.extend(replacing_note(store, db))
        return _write(store, pooled, db, options, progress)


def checked_encoder(options: PoolOptions) -> EncoderChoice | None:
    """Every problem of the options at once (InputError), before any input is read; the
    encoder the models run on (None when no model runs)."""
    o = options
    problems = check_options(o.systems, o.depth, o.strategy, o.sample, o.bm25_backend)
    if o.policy not in POLICIES:
        problems.append(f"--policy: {o.policy!r} is not one of {', '.join(POLICIES)}")
    elif o.policy == "adaptive" and o.sample:
        problems.append("--sample: the adaptive policy draws its own samples (leave it out)")
    problems.extend(candidate_depth_problems(o.policy, o.candidate_depth))
    if not o.systems and not o.run_files:
        problems.append("nothing to pool: give --systems or at least one --run")
    problems.extend(o.vector_paths.problems(o.systems))
    choice = None
    model_systems = set(ENCODING_SYSTEMS.intersection(o.systems))
    if o.vector_paths.embeddings is not None and o.vector_paths.query_embeddings is not None:
        model_systems.discard("dense")  # it searches given vectors: no model runs for it
    if o.encoder in ("torch", "auto") and o.device == "auto":  # what no machine lacks: a
        # model with no local copy is skipped at once and needs no device (nor torch's import)
        model_systems -= set(models_missing(model_systems, o.dense_model, o.rerank_model))
    if model_systems:
        from workbench.retrieval.encoder_choice import choose_encoder

        try:
            choice = choose_encoder(o.encoder, o.device)
        except InputError as exc:  # the machine lacks what --encoder or --device asks for
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return choice


def runs_folder(db: StoreLocation, runs_dir: str | os.PathLike[str] | None) -> Path:
    """Where the systems' run files go: `runs_dir`, else `<db>-runs/` beside a store file,
    `./<database>-runs/` for a store URL."""
    if runs_dir:
        return Path(runs_dir)
    if db.is_url:
        return Path.cwd() / f"{db.stem}-runs"
    return Path(db).parent / f"{db.stem}-runs"


def _run(
    options: PoolOptions, inputs: PoolInputs, build: BuildOptions, runs_path: Path
) -> Pooled:
    """The systems run (and the user's runs added), their run files written, the identical
    passages found: the pooling ready to be written."""
    from workbench.core.pool.sampling import SAMPLE_RANK_DEPTH
    from workbench.formats import write_run

    # The samples' (and the reserve's) rank bands reach SAMPLE_RANK_DEPTH, as deep as any
    # candidate depth may go: searching only the pool's depth would leave one band, the whole
    # rest, drawn from uniformly
    sampled = options.sample or options.policy == "adaptive"
    search_depth = max(options.depth, RUN_DEPTH, SAMPLE_RANK_DEPTH if sampled else 0)
    results = run_systems(
        inputs.systems, inputs.docs, inputs.queries, build, options.depth, search_depth,
        inputs.external,
    )  # fmt: skip
    results.extend(inputs.external)
    if not any(r.run is not None for r in results):
        reasons = "; ".join(f"{r.name}: {r.reason}" for r in results)
        raise InputError([f"no system produced a run ({reasons})"])
    inputs.warnings.extend(unranked_warnings(results, [q.query_id for q in inputs.queries]))
    twins = corpus_twins(inputs.docs, options.cache_dir)
    for result in results:
        if result.run is not None and result.path is None:
            result.path = runs_path / f"{result.name}.run"
            write_run(result.path, result.run, tag=result.name)
    ran = [r.name for r in results if r.run is not None]
    settings = how_systems_ran(build, ran, options.vector_paths)
    return Pooled(inputs, results, twins, settings, options.corpus)


def _write(
    store: JudgmentStore, pooled: Pooled, db: StoreLocation, options: PoolOptions,
    progress: ProgressCallback | None,
) -> PoolSummary:  # fmt: skip
    """The pooling written by its policy."""
    if options.policy == "adaptive":
        from workbench.core.adaptive import CANDIDATE_DEPTH

        depth = options.candidate_depth or CANDIDATE_DEPTH
        return write_adaptive(store, pooled, db, (depth, options.seed), progress)
    how = (options.depth, options.strategy, options.seed, options.sample)
    return write_static(store, pooled, db, how, progress)


@contextmanager
def claimed(db_path: StoreLocation) -> Iterator[JudgmentStore]:
    """The store (created when absent) with its pooling claim held (`store.claim`): one pool
    at a time per store. A pooling written gives the claim back in its own transaction; one
    that failed gives it back here (and removes the store it made, holding no pooling); a
    killed one's lapses (its pid is gone, its connection closed)."""
    from workbench.store import open_store
    from workbench.store.schema import remove_store_files

    made = not db_path.is_url and not os.path.lexists(db_path)
    empty = False
    try:
        with open_store(db_path, create=True) as store:
            store.claim_pooling()
            try:
                yield store
            except BaseException:
                empty = made and not store.poolings()  # nobody else's work: safe to remove
                raise
            finally:
                store.release_pooling()
    except BaseException:
        if empty:  # a failed pool leaves no empty store where there was none
            remove_store_files(Path(db_path))
        raise


def unranked_warnings(results: Sequence[SystemResult], query_ids: Sequence[str]) -> list[str]:
    """A system that ranked nothing for some queries (none of their words is in the corpus, or a
    run file left them out) is said, naming a few: those queries' relevant passages can come
    only from the other systems (or the random samples)."""
    warnings = []
    for result in results:
        if result.run is None:
            continue
        empty = [q for q in query_ids if not result.run.scores.get(q)]
        if empty:
            named = ", ".join(repr(q) for q in empty[:5]) + (", ..." if len(empty) > 5 else "")
            warnings.append(
                f"{result.name} ranked nothing for {len(empty)} of {len(query_ids)} queries "
                f"({named}): only the other systems, or the random samples, can find their "
                "relevant passages"
            )
    return warnings


def how_systems_ran(
    options: BuildOptions, systems: Sequence[str], vector_paths: VectorPaths
) -> dict[str, Any]:
    """The choices that shaped the built systems' runs, kept with the pooling so a study says
    later how its dense run was made (an int8 encoder ranks a little differently)."""
    settings: dict[str, Any] = {}
    if "bm25" in systems:
        settings["bm25_backend"] = options.bm25_backend
    given = bool(vector_paths.embeddings and vector_paths.query_embeddings)
    if "rerank" in systems or ("dense" in systems and not given):  # a model ran
        settings["encoder"] = {"variant": options.encoder, "device": options.device}
    if "dense" in systems and vector_paths.embeddings:
        settings["embeddings"] = str(vector_paths.embeddings)
    return settings
