"""The pooling pipeline: corpus + queries -> retrievers and run files -> pool -> judgments store.

A shell around `workbench.core.pooling`: it reads files, runs the retrievers, writes each system's
run file and the store. Every input is checked before anything is written; re-running only adds
what is new (existing items keep their positions, judgments are never touched)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.core.assign import OverlapSummary
from workbench.core.errors import InputError
from workbench.core.model import Doc, PoolEntry, passage_key
from workbench.core.pooling import (
    build_pool,
    interleave_samples,
    pool_members,
    sampling_frame,
    twin_groups,
    with_all_twins,
)
from workbench.core.store_url import StoreLocation
from workbench.formats.passages import CorpusStats, PassageRule
from workbench.pipeline.inputs import (
    PoolInputs,
    VectorPaths,
    check_options,
    check_outputs_of,
    read_inputs,
)
from workbench.retrieval.base import BuildOptions
from workbench.retrieval.bm25 import CHOICES as BM25_BACKENDS
from workbench.retrieval.registry import ENCODING_SYSTEMS, models_missing, system_names
from workbench.retrieval.select import ProgressCallback
from workbench.retrieval.systems import SystemResult, run_systems

if TYPE_CHECKING:
    from workbench.store.base import JudgmentStore

T = TypeVar("T")

__all__ = ["BM25_BACKENDS", "PoolSummary", "SystemStatus", "VectorPaths", "pool_corpus"]

SYSTEMS = system_names()
"""The registered systems (`retrieval.registry`), pooled by default; `rerank` rescores the
union of the others' top candidates."""

RUN_DEPTH = 100
"""Registered systems retrieve (and write in their run files) at least this deep."""
POLICIES = ("adaptive", "static")
"""How the queue is served: `adaptive` (workbench.core.adaptive: the queue learns from every
grade, draws recorded samples, stops a certified query) or `static` (the depth-k pool in its
order plus a fixed stratified sample)."""
CANDIDATE_DEPTHS = (10, 1000)  # at most SAMPLE_RANK_DEPTH, which an adaptive pool searches
"""The adaptive frame's candidates go at least 10 deep (its fair start alone takes each
system's top 5) and at most 1,000 (the deepest rank band of the reserve; deeper, every system
would search and write its run that deep, and the rest would hold nothing ranked)."""


def candidate_depth_problems(policy: str, candidate_depth: int | None) -> list[str]:
    """What is wrong with `--candidate-depth` for this policy (said before any input is read)."""
    if candidate_depth is None:
        return []
    if policy == "static":
        return ["--candidate-depth: the adaptive queue's; a static pool has --depth"]
    low, high = CANDIDATE_DEPTHS
    if not low <= candidate_depth <= high:
        return [f"--candidate-depth: must be from {low} to {high}, not {candidate_depth}"]
    return []


@dataclass(frozen=True, slots=True)
class SystemStatus:
    """How one system took part in a pooling."""

    status: str
    """"ok" or "skipped"."""
    reason: str | None
    """Why it was skipped (None when ok)."""
    depth: int
    run_path: str | None
    """Its run file: written by the pipeline, or the user's --run (None when skipped)."""


@dataclass(frozen=True, slots=True)
class PoolSummary:
    """What `pool_corpus` did; `to_json` is what `workbench pool --json` prints."""

    queries: int
    systems: Mapping[str, SystemStatus]
    """Every system asked for and every --run, in pooling order."""
    pool_items: int
    """The store's queue size, earlier poolings included."""
    new_items: int
    aliases: int
    """Alias ids in the store (identical passages folded into one item)."""
    sample_per_query: int
    sample_drawn: int
    warnings: tuple[str, ...] = ()
    overlap: OverlapSummary | None = None
    """The overlap marked after pooling (`workbench pool --overlap`), as `assign` reports it."""
    corpus: CorpusStats | None = None
    """What the corpus was read into (a JSONL corpus is one file)."""
    passages: PassageRule | None = None
    """How a text folder was cut into passages (None: a JSONL corpus)."""

    @property
    def runs(self) -> dict[str, str]:
        """Run file of each system that produced a run."""
        return {n: s.run_path for n, s in self.systems.items() if s.run_path is not None}

    @property
    def skipped(self) -> list[str]:
        return [name for name, s in self.systems.items() if s.status != "ok"]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "queries": self.queries,
            "systems": {
                name: {"status": s.status, "reason": s.reason, "depth": s.depth}
                for name, s in self.systems.items()
            },
            "pool_items": self.pool_items,
            "new_items": self.new_items,
            "aliases": self.aliases,
            "runs": self.runs,
        }
        if self.corpus is not None:
            passages = None if self.passages is None else str(self.passages)
            data["corpus"] = {**self.corpus.to_json(), "passage_rule": passages}
        if self.sample_per_query:
            data["sample"] = {"per_query": self.sample_per_query, "drawn": self.sample_drawn}
        if self.overlap is not None:
            data["overlap"] = self.overlap.to_json()
        return data


def pool_corpus(
    corpus: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    db: str | os.PathLike[str],
    systems: Sequence[str] = SYSTEMS,
    run_files: Sequence[str | os.PathLike[str]] = (),
    depth: int = 20,
    strategy: str = "rrf",
    seed: int = 0,
    sample: int = 0,
    bm25_backend: str = "auto",
    dense_model: str | None = None,
    rerank_model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    runs_dir: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
    policy: str = "static",
    vector_paths: VectorPaths | None = None,
    encoder: str = "torch",
    device: str = "auto",
    candidate_depth: int | None = None,
    passages: PassageRule | None = None,
) -> PoolSummary:
    """Pool the corpus for the queries into the store at `db` (created when absent): run the
    systems, write each one's run file (under `runs_dir`, by default `<db>-runs/`, for a
    store URL `./<database>-runs/`), then add
    the new pool items to the store. `policy` 'adaptive' stores each query's frame for the
    adaptive queue instead (every system's top `candidate_depth` and a random reserve of the rest;
    workbench.core.adaptive), into a new store only. `vector_paths`: passage (and query)
    vectors the dense system searches instead of encoding. `encoder` and `device` are how
    dense and rerank run their models (`retrieval.encoders.choose_encoder`).
    `candidate_depth`: how deep the adaptive frame's candidates go (default
    `core.adaptive.CANDIDATE_DEPTH`). `passages`: how a text folder is cut (default: as the
    store's earlier poolings cut it, else `formats.passages.DEFAULT_RULE`; `corpus_passages`)."""
    from workbench.core.adaptive import CANDIDATE_DEPTH

    vector_paths = vector_paths or VectorPaths()
    problems = check_options(systems, depth, strategy, sample, bm25_backend)
    if policy not in POLICIES:
        problems.append(f"--policy: {policy!r} is not one of {', '.join(POLICIES)}")
    elif policy == "adaptive" and sample:
        problems.append("--sample: the adaptive policy draws its own samples (leave it out)")
    problems.extend(candidate_depth_problems(policy, candidate_depth))
    candidate_depth = candidate_depth or CANDIDATE_DEPTH
    if not systems and not run_files:
        problems.append("nothing to pool: give --systems or at least one --run")
    problems.extend(vector_paths.problems(systems))
    choice = None
    model_systems = set(ENCODING_SYSTEMS.intersection(systems))
    if vector_paths.embeddings is not None and vector_paths.query_embeddings is not None:
        model_systems.discard("dense")  # it searches given vectors: no model runs for it
    if (encoder, device) == ("torch", "auto"):  # the defaults, which no machine lacks: a
        # model with no local copy is skipped at once and needs no device (nor torch's import)
        model_systems -= set(models_missing(model_systems, dense_model, rerank_model))
    if model_systems:
        from workbench.retrieval.encoders import choose_encoder

        try:
            choice = choose_encoder(encoder, device)
        except InputError as exc:  # the machine lacks what --encoder or --device asks for
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    db_path = StoreLocation(os.fspath(db))
    if runs_dir:
        runs_path = Path(runs_dir)
    elif db_path.is_url:
        runs_path = Path.cwd() / f"{db_path.stem}-runs"
    else:
        runs_path = Path(db_path).parent / f"{db_path.stem}-runs"
    rule = corpus_passages(db_path, corpus, passages)
    inputs = read_inputs(corpus, queries, systems, run_files, vector_paths, rule)
    if choice is not None:
        inputs.warnings.extend(choice.warnings)
    check_outputs_of(db_path, runs_path, inputs.systems, corpus, queries, run_files, vector_paths)

    from workbench.core.sampling import SAMPLE_RANK_DEPTH

    # The samples' (and the reserve's) rank bands reach SAMPLE_RANK_DEPTH, as deep as any
    # candidate depth may go: searching only the pool's depth would leave one band, the whole
    # rest, drawn from uniformly
    sampled = sample or policy == "adaptive"
    search_depth = max(depth, RUN_DEPTH, SAMPLE_RANK_DEPTH if sampled else 0)
    options = BuildOptions(
        cache_dir, progress, bm25_backend, dense_model, rerank_model, vectors=inputs.vectors,
        encoder=choice.variant if choice else "torch", device=choice.device if choice else None,
    )  # fmt: skip
    with claimed(db_path) as store:  # before any system runs: a second pool is told at once
        results = run_systems(
            inputs.systems, inputs.docs, inputs.queries, options, depth, search_depth,
            inputs.external,
        )  # fmt: skip
        results.extend(inputs.external)
        if not any(r.run is not None for r in results):
            reasons = "; ".join(f"{r.name}: {r.reason}" for r in results)
            raise InputError([f"no system produced a run ({reasons})"])

        inputs.warnings.extend(unranked_warnings(results, [q.query_id for q in inputs.queries]))

        from workbench.formats import write_run

        twins = corpus_twins(inputs.docs, cache_dir)

        for result in results:
            if result.run is not None and result.path is None:
                result.path = runs_path / f"{result.name}.run"
                write_run(result.path, result.run, tag=result.name)

        ran = [r.name for r in results if r.run is not None]
        settings = how_systems_ran(options, ran, vector_paths)
        inputs.warnings.extend(replacing_note(store, db_path))
        if policy == "adaptive":
            return _write_adaptive(
                store, inputs, results, db_path, seed, corpus, progress, twins, settings,
                depth=candidate_depth,
            )  # fmt: skip
        return _write_store(
            store, inputs, results, db_path, depth, strategy, seed, sample, corpus, progress,
            twins, settings,
        )  # fmt: skip


@contextmanager
def claimed(db_path: StoreLocation) -> Iterator[JudgmentStore]:
    """The store (created when absent) with its pooling claim held (`store.claim`): one pool
    at a time per store. A pooling written gives the claim back in its own transaction; one
    that failed gives it back here; a killed one's lapses (its pid is gone, its connection
    closed)."""
    from workbench.store import open_store

    with open_store(db_path, create=True) as store:
        store.claim_pooling()
        try:
            yield store
        finally:
            store.release_pooling()


def replacing_note(store: JudgmentStore, db_path: StoreLocation) -> list[str]:
    """Said when the store holds a pooling an earlier version left interrupted, which the
    pooling about to be written replaces (`PoolTables.add_pooling`)."""
    interrupted = store.interrupted_pooling()
    if interrupted is None:
        return []
    from workbench.store.claim import local_time

    when = local_time(interrupted["created_at"])
    return [f"{db_path}: its pooling of {when} had been interrupted before it was complete: "
            "this pooling replaces it"]  # fmt: skip


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


def pooled_policy(db: str | os.PathLike[str]) -> str | None:
    """The policy of the pool the store at `db` already holds; None when there is no store
    there yet, or no pool in it. A store that cannot be opened (unreachable, not a store) is
    an error now, before any system runs."""
    return _read_existing(db, policy_of)


def corpus_passages(
    db: StoreLocation, corpus: str | os.PathLike[str], asked: PassageRule | None
) -> PassageRule | None:
    """How to cut the text folder `corpus` into passages (`formats.passages.chosen_rule`): as
    the store's earlier poolings did, else `asked`, else the default; None for a JSONL corpus."""
    from workbench.formats.passages import chosen_rule, recorded_rule

    def recorded(store: JudgmentStore) -> PassageRule | None:
        return recorded_rule(store.poolings(), str(store.location))

    folder = Path(corpus).is_dir()
    return chosen_rule(corpus, asked, _read_existing(db, recorded) if folder else None, db)


def _read_existing(db: str | os.PathLike[str], read: Callable[[JudgmentStore], T]) -> T | None:
    """`read` of the store at `db`; None when there is no store there yet. A store that cannot
    be opened (unreachable, not a store) is an error now, before any system runs."""
    location = StoreLocation(os.fspath(db))
    if not location.is_url and not Path(location).exists():
        return None
    from workbench.store import open_store

    try:
        store = open_store(location, pooling=True)
    except InputError as exc:
        from workbench.store.postgres import NoStore

        if isinstance(exc, NoStore):  # an empty database: pool creates the store in it
            return None
        raise
    with store:
        return read(store)


def policy_of(store: JudgmentStore) -> str | None:
    """The policy of the pool the store holds (stores from before policies were recorded are
    static); None when it holds none, or only an interrupted pooling, which the next pooling
    replaces."""
    if not store.poolings() or store.interrupted_pooling() is not None:
        return None
    return store.get_meta("policy") or "static"


def pooling_refusal(db: object, existing: str | None, policy: str) -> str | None:
    """Why a pooling by `policy` cannot go into a store whose pool is `existing` (None: it can).
    An adaptive store's frames are drawn once over every system; a static pool takes more
    systems, but by the static policy only."""
    if existing == "adaptive":
        return (
            f"{db}: already pooled for the adaptive queue, whose frames are drawn once over every "
            "system: pool into a new store, giving every system at once (--systems and repeated "
            "--run), or with --policy static to add systems to it later"
        )
    if existing == "static" and policy == "adaptive":
        return (
            f"{db}: already holds a static pool; the adaptive policy pools into a new store "
            "(leave out --policy to add systems to this one)"
        )
    return None


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


def _write_store(
    store: JudgmentStore,
    inputs: PoolInputs,
    results: list[SystemResult],
    db_path: StoreLocation,
    depth: int,
    strategy: str,
    seed: int,
    sample: int,
    corpus: str | os.PathLike[str],
    progress: ProgressCallback | None,
    twins: dict[str, tuple[str, ...]],
    settings: Mapping[str, Any] | None = None,
) -> PoolSummary:
    """Add the pool (and the sample) to the store; what it holds now, summed up."""
    produced = [r for r in results if r.run is not None]
    runs = {r.name: r.run for r in produced if r.run is not None}
    rankings = {name: run.rankings() for name, run in runs.items()}
    scores = {name: run.scores for name, run in runs.items()}

    refusal = pooling_refusal(db_path, policy_of(store), "static")
    if refusal:
        raise InputError([refusal])
    # an interrupted pooling is replaced, not added to (`PoolTables.add_pooling`)
    before = [] if store.interrupted_pooling() else store.pool()
    entries = build_pool(
        rankings, depth, strategy, seed, scores_by_system=scores, twins=twins,
        keep={e.doc_id for e in before},
    )  # fmt: skip
    canonical = {e.doc_id for e in (*before, *entries)}
    entries = [with_all_twins(e, twins) for e in entries]
    sampled: list[PoolEntry] = []
    if sample:
        sampled = _sample(inputs, rankings, entries, before, twins, canonical, sample, seed,
                          depth)  # fmt: skip
        entries = interleave_samples(entries, sampled)
    new_items, pool_size, alias_count = _add_pooling(
        store, inputs, results, entries, (depth, strategy, seed), corpus, progress,
        {"sample": sample, **(settings or {})},
    )  # fmt: skip
    systems = {
        r.name: SystemStatus(r.status, r.reason, depth, str(r.path) if r.run else None)
        for r in results
    }
    return PoolSummary(len(inputs.queries), systems, pool_size, new_items, alias_count, sample,
                       len(sampled), tuple(inputs.warnings), corpus=inputs.corpus,
                       passages=inputs.passages)  # fmt: skip


def _sample(
    inputs: PoolInputs,
    rankings: dict[str, dict[str, list[str]]],
    entries: list[PoolEntry],
    before: list[PoolEntry],
    twins: dict[str, tuple[str, ...]],
    canonical: set[str],
    sample: int,
    seed: int,
    depth: int,
) -> list[PoolEntry]:
    """`sample` docs per query from outside the pool (earlier pools' members included), each
    group of identical passages one unit."""
    from workbench.core.sampling import sample_outside_pool

    pooled = pool_members(entries)
    for e in before:  # earlier samples stay in the frame: the same seed redraws them
        if e.stratum == "pool":
            pooled.setdefault(e.query_id, set()).update((e.doc_id, *e.aliases))
    for members in pooled.values():
        members.update(t for d in list(members) for t in twins.get(d, ()))
    frame = sampling_frame([d.doc_id for d in inputs.docs], twins, canonical)
    sampled = sample_outside_pool(rankings, pooled, frame, sample, seed, depth=depth)
    return [with_all_twins(e, twins) for e in sampled]


def _write_adaptive(
    store: JudgmentStore,
    inputs: PoolInputs,
    results: list[SystemResult],
    db_path: StoreLocation,
    seed: int,
    corpus: str | os.PathLike[str],
    progress: ProgressCallback | None,
    twins: dict[str, tuple[str, ...]],
    settings: Mapping[str, Any] | None = None,
    *,
    depth: int,
) -> PoolSummary:
    """Store every query's frame for the adaptive queue (`core.adaptive.frame_entries`), its
    candidates each system's top `depth`: a new store only, since frames are drawn over the
    whole corpus once."""
    from workbench.core.adaptive import RESERVE_SIZE, build_frame, frame_entries
    from workbench.core.pooling import canonical_ids

    produced = [r for r in results if r.run is not None]
    runs = {r.name: r.run for r in produced if r.run is not None}
    rankings = {name: run.rankings() for name, run in runs.items()}
    canonical = canonical_ids(twins)
    exclude = {d for d, c in canonical.items() if d != c}
    from workbench.core.sampling import CorpusOrder

    corpus_ids = CorpusOrder([d.doc_id for d in inputs.docs])  # once, for every query's frame
    refusal = pooling_refusal(db_path, policy_of(store), "adaptive")
    if refusal:
        raise InputError([refusal])
    entries: list[PoolEntry] = []
    for query in inputs.queries:
        frame = build_frame(
            query.query_id,
            {name: r.get(query.query_id, []) for name, r in rankings.items()},
            corpus_ids,
            seed,
            depth=depth,
            exclude=exclude,
        )
        scores = {name: run.scores.get(query.query_id, {}) for name, run in runs.items()}
        entries.extend(with_all_twins(e, twins) for e in frame_entries(frame, scores))
    extra = {"policy": "adaptive", "candidate_depth": depth, "reserve": RESERVE_SIZE}
    new_items, pool_size, alias_count = _add_pooling(
        store, inputs, results, entries, (depth, "adaptive", seed), corpus,
        progress, {**extra, **(settings or {})}, {"policy": "adaptive"},
    )  # fmt: skip
    systems = {
        r.name: SystemStatus(r.status, r.reason, depth, str(r.path) if r.run else None)
        for r in results
    }
    return PoolSummary(len(inputs.queries), systems, pool_size, new_items, alias_count, 0, 0,
                       tuple(inputs.warnings), corpus=inputs.corpus,
                       passages=inputs.passages)  # fmt: skip


TWINS_VERSION = "1"
"""Part of the identical-passages cache key: bump it whenever `passage_key` changes."""


def corpus_twins(
    docs: Sequence[Doc], cache_dir: str | os.PathLike[str] | None = None
) -> dict[str, tuple[str, ...]]:
    """`twin_groups` over the corpus; from TWINS_CACHE_FROM passages cached on disk by corpus
    hash (folding a million passages takes seconds; a re-pool of the same corpus reads the
    groups back, each group checked to hold one passage text, so a forged entry folds nothing
    that differs). The cache is optional: one that cannot be written is skipped. Each
    passage's key is held as a 128-bit digest: a million folded passages as strings would hold
    the corpus a second time."""
    import json

    from workbench.core.errors import InputError
    from workbench.retrieval.cache import (
        corpus_hash,
        default_cache_dir,
        key_digest,
        load_entry,
        store_entry,
    )

    cached = len(docs) >= TWINS_CACHE_FROM
    if cached:
        key = {"kind": "twins", "version": TWINS_VERSION, "corpus": corpus_hash(docs)}
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        path = root / f"twins-{key_digest(key)}.json"
        groups = _checked_groups(load_entry(path, key), docs)
        if groups is not None:
            return {d: tuple(group) for group in groups for d in group}
    keys: dict[str, str] = {}
    for doc in docs:
        passage = passage_key(doc)
        digest = hashlib.blake2b(passage.encode("utf-8"), digest_size=16).hexdigest()
        keys[doc.doc_id] = digest if passage else ""
    twins = twin_groups(keys)
    if cached:
        try:
            store_entry(path, json.dumps(list(dict.fromkeys(twins.values()))).encode(), key)
        except (InputError, OSError):  # a cache folder that cannot be written: fold next time
            pass
    return twins


TWINS_CACHE_FROM = 50_000
"""Corpus size from which the identical-passage groups are cached (below, folding takes well
under a second, and a pool of run files alone writes no cache folder)."""


def _checked_groups(payload: bytes | None, docs: Sequence[Doc]) -> list[list[str]] | None:
    """The cached groups when each names corpus passages of one and the same text; else None
    (recomputed)."""
    import json

    if payload is None:
        return None
    try:
        groups = json.loads(payload)
    except ValueError:
        return None
    by_id = {d.doc_id: d for d in docs}
    if not isinstance(groups, list):
        return None
    for group in groups:
        if not (isinstance(group, list) and len(group) > 1 and all(
            isinstance(d, str) and d in by_id for d in group
        )):
            return None
        texts = {passage_key(by_id[d]) for d in group}
        if len(texts) != 1 or texts == {""}:
            return None
    return groups


def _add_pooling(
    store: JudgmentStore,
    inputs: PoolInputs,
    results: list[SystemResult],
    entries: list[PoolEntry],
    how: tuple[int, str, int],
    corpus: str | os.PathLike[str],
    progress: ProgressCallback | None,
    extra: dict[str, Any],
    meta: Mapping[str, str] | None = None,
) -> tuple[int, int, int]:
    """Write one pooling into the store in one transaction (`add_pooling`): the queries, the
    passages shown (aliases too), the pooling's record (`how`: depth, strategy, seed; `extra`
    params), its entries and the meta that makes it whole (corpus_size, and `meta`).
    Returns (new items, pool size, alias count)."""
    from workbench.store.pool import PoolingRecord

    produced = [r for r in results if r.run is not None]
    docs_by_id = {d.doc_id: d for d in inputs.docs}
    if progress:
        progress("store", 0, len(entries))
    shown = {d for e in entries for d in (e.doc_id, *e.aliases)}
    params = {
        "corpus": str(corpus),
        "passages": None if inputs.passages is None else str(inputs.passages),
        **extra,
        "skipped": {r.name: r.reason for r in results if r.status == "skipped"},
        "runs": {r.name: str(r.path) for r in produced},
    }
    depth, strategy, seed = how
    record = PoolingRecord([r.name for r in produced], depth, strategy, seed, params)
    _, new_items = store.add_pooling(
        inputs.queries, (docs_by_id[d] for d in sorted(shown)), record, entries,
        {"corpus_size": str(len(inputs.docs)), **(meta or {})},
    )  # fmt: skip
    pool_size, alias_count = len(store.pool()), len(store.aliases())
    if progress:
        progress("store", len(entries), len(entries))
    return new_items, pool_size, alias_count
