"""The pooling pipeline: corpus + queries -> retrievers and run files -> pool -> judgments store.

A shell around `workbench.core.pooling`: it reads files, runs the retrievers, writes each system's
run file and the store. Every input is checked before anything is written; re-running only adds
what is new (existing items keep their positions, judgments are never touched)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.errors import InputError
from workbench.core.model import Doc, PoolEntry, Query, Run, order_pairs, passage_key
from workbench.core.pooling import (
    STRATEGIES,
    build_pool,
    pool_items,
    pool_members,
    sampling_frame,
    twin_groups,
    with_all_twins,
)
from workbench.retrieval.select import ProgressCallback

SYSTEMS = ("bm25", "dense", "rerank")
"""Built-in systems by name; `rerank` rescores the union of the others' top candidates."""

BM25_BACKENDS = ("rank_bm25", "bm25s")

RERANK_CANDIDATES = 50
"""Each first-stage system's top this-many (at least the pool depth) go to the reranker, so the
reranker can lift into the pool a document no single system ranked in its top `depth`."""

RUN_DEPTH = 100
"""Built-in systems retrieve (and write in their run files) at least this deep."""


@dataclass(slots=True)
class SystemResult:
    name: str
    status: str = "ok"
    reason: str | None = None
    run: Run | None = None
    path: Path | None = None
    """Where the run file lies: written by us for built-ins, the user's file for --run."""


@dataclass(slots=True)
class PoolInputs:
    """Everything `pool_corpus` needs, read and checked before anything runs or is written."""

    docs: list[Doc]
    queries: list[Query]
    systems: list[str]
    external: list[SystemResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_options(
    systems: Sequence[str], depth: int, strategy: str, sample: int, bm25_backend: str
) -> list[str]:
    problems: list[str] = []
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        problems.append(
            f"--systems: unknown system {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(SYSTEMS)})"
        )
    if depth < 1:
        problems.append(f"--depth: must be at least 1, not {depth}")
    if strategy not in STRATEGIES:
        problems.append(f"--strategy: unknown {strategy!r} (known: {', '.join(STRATEGIES)})")
    if sample < 0:
        problems.append(f"--sample: must be 0 or more, not {sample}")
    if bm25_backend not in BM25_BACKENDS:
        problems.append(
            f"--bm25-backend: unknown {bm25_backend!r} (known: {', '.join(BM25_BACKENDS)})"
        )
    return problems


def read_inputs(
    corpus: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    systems: Sequence[str],
    run_files: Iterable[str | os.PathLike[str]],
) -> PoolInputs:
    """Read the corpus, queries and run files; every problem of every file in one InputError."""
    from workbench.formats import read_corpus_any, read_queries_any, read_run

    run_files = list(run_files)
    problems: list[str] = []
    docs: list[Doc] = []
    query_list: list[Query] = []
    try:
        docs = read_corpus_any(corpus)
    except InputError as exc:
        problems.extend(exc.problems)
    else:
        if not docs:
            problems.append(f"{corpus}: the corpus holds no documents")
    try:
        query_list = read_queries_any(queries)
    except InputError as exc:
        problems.extend(exc.problems)
    else:
        if not query_list:
            problems.append(f"{queries}: names no queries")
    inputs = PoolInputs(docs, query_list, list(dict.fromkeys(systems)))
    if "rerank" in inputs.systems and len(inputs.systems) == 1 and not run_files:
        problems.append("--systems: rerank needs another system (or a --run) to rescore")

    doc_ids = {d.doc_id for d in docs}
    query_ids = {q.query_id for q in query_list}
    tag_files: dict[str, str] = {}
    for path in run_files:
        try:
            run = read_run(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if run.name in inputs.systems:
            problems.append(f"{path}: run tag {run.name!r} is also a --systems name; retag the run")
            continue
        if run.name in tag_files:
            problems.append(
                f"{path}: run tag {run.name!r} is also the tag of {tag_files[run.name]}; "
                "each system needs its own tag"
            )
            continue
        tag_files[run.name] = str(path)
        if not docs or not query_list:
            continue
        kept, unknown_docs, unknown_queries = _restrict(run, doc_ids, query_ids)
        if not any(kept.scores.values()):
            problems.append(
                f"{path}: none of its doc ids (for the given queries) are in the corpus {corpus}"
            )
            continue
        if unknown_docs:
            inputs.warnings.append(
                f"{path}: {unknown_docs} result lines name doc ids not in the corpus; left out"
            )
        if unknown_queries:
            inputs.warnings.append(
                f"{path}: {unknown_queries} query ids are not in {queries}; left out"
            )
        inputs.warnings.extend(w if str(path) in w else f"{path}: {w}" for w in run.warnings)
        inputs.external.append(SystemResult(run.name, run=kept, path=Path(path)))
    if problems:
        raise InputError(problems)
    return inputs


def _restrict(run: Run, doc_ids: set[str], query_ids: set[str]) -> tuple[Run, int, int]:
    """The run without unknown queries and docs, with how many lines/queries were dropped."""
    kept = Run(run.name)
    unknown_docs = unknown_queries = 0
    for qid, scores in run.scores.items():
        if qid not in query_ids:
            unknown_queries += 1
            continue
        known = {d: s for d, s in scores.items() if d in doc_ids}
        unknown_docs += len(scores) - len(known)
        kept.scores[qid] = known
    return kept, unknown_docs, unknown_queries


def _check_outputs(
    db: Path,
    runs_dir: Path,
    systems: Sequence[str],
    corpus: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    run_files: Sequence[str | os.PathLike[str]],
) -> None:
    """Before any retriever runs: a store that exists must be a workbench store, output
    folders must not be files, and nothing pool writes (the store, each built-in system's run)
    may land on one of its inputs."""
    from workbench.formats.atomic import check_outputs
    from workbench.store import open_store

    problems = []
    if db.is_dir():
        problems.append(f"{db}: is a folder, expected a judgments store file")
    elif db.exists():
        open_store(db).close()  # raises InputError when it is not a store
    if runs_dir.exists() and not runs_dir.is_dir():
        problems.append(f"{runs_dir}: is a file, expected a folder for run files")
    outputs: dict[str, str | os.PathLike[str] | None] = {"--db": db}
    outputs.update({f"the {name} run": runs_dir / f"{name}.run" for name in systems})
    inputs: dict[str, str | os.PathLike[str] | None] = {"--corpus": corpus, "--queries": queries}
    inputs.update({f"--run {path}": path for path in run_files})
    problems.extend(check_outputs(outputs, inputs))
    if problems:
        raise InputError(problems)


def run_systems(
    inputs: PoolInputs,
    depth: int,
    search_depth: int,
    bm25_backend: str,
    dense_model: str | None,
    rerank_model: str | None,
    cache_dir: str | os.PathLike[str] | None,
    progress: ProgressCallback | None,
) -> list[SystemResult]:
    """Run each built-in system; a model that cannot load is reported as skipped, with why."""
    from workbench import retrieval

    results: list[SystemResult] = []
    for name in inputs.systems:
        if name == "rerank":
            continue
        try:
            retriever: retrieval.BM25Retriever | retrieval.DenseRetriever
            if name == "bm25":
                retriever = retrieval.BM25Retriever(
                    inputs.docs, backend=bm25_backend, cache_dir=cache_dir, progress=progress
                )
            else:
                retriever = retrieval.DenseRetriever(
                    inputs.docs,
                    model=dense_model or retrieval.DEFAULT_DENSE_MODEL,
                    cache_dir=cache_dir,
                    progress=progress,
                )
            run = _search_cached(name, retriever, inputs.queries, search_depth, cache_dir)
        except retrieval.ModelUnavailable as exc:
            results.append(SystemResult(name, "skipped", _reason(exc)))
            continue
        results.append(SystemResult(name, run=Run(name, run.scores, list(run.warnings))))
    if "rerank" in inputs.systems:
        first_stage = [r for r in results if r.run] + inputs.external
        if not first_stage:
            results.append(
                SystemResult("rerank", "skipped", "no first-stage system produced a run")
            )
        else:
            results.append(
                _rerank(inputs, first_stage, depth, search_depth, rerank_model, progress)
            )
    return results


def _search_cached(
    name: str,
    retriever: object,
    queries: list[Query],
    search_depth: int,
    cache_dir: str | os.PathLike[str] | None,
) -> Run:
    """`retriever.search`, remembered on disk per (index, queries, depth): a warm re-pool then
    never loads the dense model just to re-encode the same queries. The key holds the name of
    the retriever's own index cache file, a digest of everything its index depends on."""
    import hashlib
    import json

    from workbench.retrieval.cache import default_cache_dir, key_digest, load_entry, store_entry

    index_file = getattr(retriever, "cache_path", None)
    if index_file is None:
        return retriever.search(queries, search_depth)  # type: ignore[attr-defined]
    digest = hashlib.sha256(b"workbench-queries-v1\0")
    for q in queries:
        for part in (q.query_id, q.text):
            raw = part.encode("utf-8")
            digest.update(len(raw).to_bytes(8, "little") + raw)
    key = {
        "kind": "run",
        "system": name,
        "index": Path(index_file).name,
        "queries": digest.hexdigest(),
        "depth": search_depth,
    }
    path = (
        Path(cache_dir) if cache_dir else default_cache_dir()
    ) / f"run-{name}-{key_digest(key)}.json"
    payload = load_entry(path, key)
    if payload is not None:
        scores = json.loads(payload)
        return Run(name, {q: {d: float(s) for d, s in docs.items()} for q, docs in scores.items()})
    run = retriever.search(queries, search_depth)  # type: ignore[attr-defined]
    store_entry(path, json.dumps(run.scores, sort_keys=True).encode("utf-8"), key)
    return run


def _reason(exc: Exception) -> str:
    return str(getattr(exc, "reason", None) or exc)


def _rerank(
    inputs: PoolInputs,
    first_stage: list[SystemResult],
    depth: int,
    search_depth: int,
    model: str | None,
    progress: ProgressCallback | None,
) -> SystemResult:
    from workbench import retrieval

    try:
        reranker = retrieval.CrossEncoderReranker(
            model=model or retrieval.DEFAULT_RERANK_MODEL, progress=progress
        )
    except retrieval.ModelUnavailable as exc:
        return SystemResult("rerank", "skipped", _reason(exc))
    fan_in = max(depth, RERANK_CANDIDATES)
    union = pool_items({r.name: r.run.rankings() for r in first_stage if r.run}, fan_in)
    candidates = {
        qid: order_pairs((d, item.fused_score) for d, item in items.items())
        for qid, items in union.items()
    }
    docs_by_id = {d.doc_id: d for d in inputs.docs}
    run = reranker.rerank(inputs.queries, docs_by_id, candidates, search_depth)
    return SystemResult("rerank", run=Run("rerank", run.scores, list(run.warnings)))


def _interleave(pool: list[PoolEntry], sampled: list[PoolEntry]) -> list[PoolEntry]:
    """Pool and sampled items per query in queue order: samples at their positions, pool items
    filling the rest in their own order (the store appends new items in the order given)."""
    by_query: dict[str, tuple[list[PoolEntry], dict[int, PoolEntry]]] = {}
    for e in pool:
        by_query.setdefault(e.query_id, ([], {}))[0].append(e)
    for e in sampled:
        by_query.setdefault(e.query_id, ([], {}))[1][e.position] = e
    merged: list[PoolEntry] = []
    for query_id in sorted(by_query):
        pooled, samples = by_query[query_id]
        waiting = [samples[p] for p in sorted(samples)]
        queue: list[PoolEntry] = []
        next_pooled = 0
        while next_pooled < len(pooled) or waiting:
            due = waiting and (waiting[0].position <= len(queue) or next_pooled == len(pooled))
            if due:
                queue.append(waiting.pop(0))
            else:
                queue.append(pooled[next_pooled])
                next_pooled += 1
        merged.extend(queue)
    return merged


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
    bm25_backend: str = "rank_bm25",
    dense_model: str | None = None,
    rerank_model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    runs_dir: str | os.PathLike[str] | None = None,
    progress: ProgressCallback | None = None,
) -> dict:
    """Pool the corpus for the queries into the store at `db` (created when absent).

    Returns {"queries", "systems": {name: {"status", "reason", "depth"}}, "pool_items" (the
    store's queue size), "new_items", "aliases" (alias ids in the store), "runs": {name: path},
    "warnings": [...]}."""
    problems = check_options(systems, depth, strategy, sample, bm25_backend)
    if not systems and not run_files:
        problems.append("nothing to pool: give --systems or at least one --run")
    if problems:
        raise InputError(problems)
    db_path = Path(db)
    runs_path = Path(runs_dir) if runs_dir else db_path.parent / f"{db_path.stem}-runs"
    inputs = read_inputs(corpus, queries, systems, run_files)
    _check_outputs(db_path, runs_path, inputs.systems, corpus, queries, run_files)

    from workbench.core.sampling import SAMPLE_RANK_DEPTH

    search_depth = max(depth, RUN_DEPTH, SAMPLE_RANK_DEPTH if sample else 0)
    results = run_systems(
        inputs, depth, search_depth, bm25_backend, dense_model, rerank_model, cache_dir, progress
    )
    results.extend(inputs.external)
    produced = [r for r in results if r.run is not None]
    if not produced:
        reasons = "; ".join(f"{r.name}: {r.reason}" for r in results)
        raise InputError([f"no system produced a run ({reasons})"])

    from workbench.formats import write_run

    for result in results:
        if result.run is not None and result.path is None:
            result.path = runs_path / f"{result.name}.run"
            write_run(result.path, result.run, tag=result.name)

    return _write_store(inputs, results, db_path, depth, strategy, seed, sample, corpus, progress)


def _write_store(
    inputs: PoolInputs,
    results: list[SystemResult],
    db_path: Path,
    depth: int,
    strategy: str,
    seed: int,
    sample: int,
    corpus: str | os.PathLike[str],
    progress: ProgressCallback | None,
) -> dict:
    from workbench.store import open_store

    produced = [r for r in results if r.run is not None]
    runs = {r.name: r.run for r in produced if r.run is not None}
    rankings = {name: run.rankings() for name, run in runs.items()}
    scores = {name: run.scores for name, run in runs.items()}
    docs_by_id = {d.doc_id: d for d in inputs.docs}
    twins = twin_groups({d.doc_id: passage_key(d) for d in inputs.docs})

    with open_store(db_path, create=True) as store:
        before = store.pool()
        entries = build_pool(
            rankings, depth, strategy, seed, scores_by_system=scores, twins=twins,
            keep={e.doc_id for e in before},
        )  # fmt: skip
        canonical = {e.doc_id for e in (*before, *entries)}
        entries = [with_all_twins(e, twins) for e in entries]
        sampled: list[PoolEntry] = []
        if sample:
            from workbench.core.sampling import sample_outside_pool

            pooled = pool_members(entries)
            for e in before:  # earlier samples stay in the frame: the same seed redraws them
                if e.stratum == "pool":
                    pooled.setdefault(e.query_id, set()).update((e.doc_id, *e.aliases))
            for members in pooled.values():
                members.update(t for d in list(members) for t in twins.get(d, ()))
            frame = sampling_frame([d.doc_id for d in inputs.docs], twins, canonical)
            sampled = sample_outside_pool(rankings, pooled, frame, sample, seed, depth=depth)
            sampled = [with_all_twins(e, twins) for e in sampled]
            entries = _interleave(entries, sampled)
        if progress:
            progress("store", 0, len(entries))
        store.add_queries(inputs.queries)
        shown = {d for e in entries for d in (e.doc_id, *e.aliases)}
        store.add_docs(docs_by_id[d] for d in sorted(shown))
        pooling_id = store.record_pooling(
            [r.name for r in produced],
            depth,
            strategy,
            seed,
            {
                "corpus": str(corpus),
                "sample": sample,
                "skipped": {r.name: r.reason for r in results if r.status == "skipped"},
                "runs": {r.name: str(r.path) for r in produced},
            },
        )
        new_items = store.add_pool_entries(entries, pooling_id)
        store.set_meta("corpus_size", str(len(inputs.docs)))
        pool_size = len(store.pool())
        alias_count = len(store.aliases())
        if progress:
            progress("store", len(entries), len(entries))

    return {
        "queries": len(inputs.queries),
        "systems": {
            r.name: {"status": r.status, "reason": r.reason, "depth": depth} for r in results
        },
        "pool_items": pool_size,
        "new_items": new_items,
        "aliases": alias_count,
        "runs": {r.name: str(r.path) for r in produced},
        "sample": {"per_query": sample, "drawn": len(sampled)},
        "warnings": list(inputs.warnings),
    }
