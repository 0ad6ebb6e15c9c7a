"""The systems of a pool: the registered ones run here (first-stage retrievers over the corpus,
then each reranker over the union of the first-stage runs' top candidates), and the user's run
files read and fitted to the corpus and queries."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.core.errors import InputError
from workbench.core.model import Doc, Query, Run, order_pairs
from workbench.core.pool.pooling import pool_items
from workbench.retrieval.base import BuildOptions
from workbench.retrieval.cache import cached_search
from workbench.retrieval.models import ModelUnavailable
from workbench.retrieval.registry import RERANKERS, RETRIEVERS

RERANK_CANDIDATES = 50
"""Each first-stage system's top this-many (at least the pool depth) go to a reranker, so it
can lift into the pool a document no single system ranked in its top `depth`."""


@dataclass(slots=True)
class SystemResult:
    """One system's outcome: its run, or why it was skipped."""

    name: str
    status: str = "ok"
    """"ok" or "skipped"."""
    reason: str | None = None
    run: Run | None = None
    path: Path | None = None
    """Where the run file lies: written by the pipeline for built-ins, the user's for --run."""


def run_systems(
    names: Sequence[str],
    docs: Sequence[Doc],
    queries: Sequence[Query],
    options: BuildOptions,
    depth: int,
    search_depth: int,
    external: Sequence[SystemResult] = (),
) -> list[SystemResult]:
    """Each named system's result, first stage in the order named, then second stage; a model
    that cannot load is reported as skipped, with why. `external` runs (the user's files) are
    first-stage candidates for the rerankers but are not returned."""
    results: list[SystemResult] = []
    for name in names:
        if name not in RETRIEVERS:
            continue
        try:
            retriever = RETRIEVERS[name](docs, options)
            run = cached_search(name, retriever, queries, search_depth, options.cache_dir)
        except ModelUnavailable as exc:
            results.append(SystemResult(name, "skipped", exc.reason))
            continue
        results.append(SystemResult(name, run=Run(name, run.scores, list(run.warnings))))
    first_stage = [r for r in results if r.run] + list(external)
    for name in names:
        if name in RERANKERS:
            results.append(_rerank(name, docs, queries, options, first_stage, depth, search_depth))
    return results


def _rerank(
    name: str,
    docs: Sequence[Doc],
    queries: Sequence[Query],
    options: BuildOptions,
    first_stage: list[SystemResult],
    depth: int,
    search_depth: int,
) -> SystemResult:
    if not first_stage:
        return SystemResult(name, "skipped", "no first-stage system produced a run")
    try:
        reranker = RERANKERS[name](options)
    except ModelUnavailable as exc:
        return SystemResult(name, "skipped", exc.reason)
    fan_in = max(depth, RERANK_CANDIDATES)
    union = pool_items({r.name: r.run.rankings() for r in first_stage if r.run}, fan_in)
    candidates = {
        qid: order_pairs((d, item.fused_score) for d, item in items.items())
        for qid, items in union.items()
    }
    docs_by_id = {d.doc_id: d for d in docs}
    run = reranker.rerank(queries, docs_by_id, candidates, search_depth)
    return SystemResult(name, run=Run(name, run.scores, list(run.warnings)))


def read_run_files(
    run_files: Sequence[str | os.PathLike[str]],
    system_names: Sequence[str],
    docs: Sequence[Doc],
    queries: Sequence[Query],
    corpus: str | os.PathLike[str],
    queries_path: str | os.PathLike[str],
) -> tuple[list[SystemResult], list[str], list[str]]:
    """(runs, problems, warnings) of the user's run files, each run restricted to the corpus
    and the queries. A tag must differ from every system's name and every other file's tag.
    Without docs or queries (unreadable), the files are still read for their own problems."""
    from workbench.formats import read_run

    runs: list[SystemResult] = []
    problems: list[str] = []
    warnings: list[str] = []
    doc_ids = {d.doc_id for d in docs}
    query_ids = {q.query_id for q in queries}
    tag_files: dict[str, str] = {}
    for path in run_files:
        try:
            run = read_run(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if run.name in system_names:
            problems.append(f"{path}: run tag {run.name!r} is also a --systems name; retag the run")
            continue
        if run.name in tag_files:
            problems.append(
                f"{path}: run tag {run.name!r} is also the tag of {tag_files[run.name]}; "
                "each system needs its own tag"
            )
            continue
        tag_files[run.name] = str(path)
        if not docs or not queries:
            continue
        kept, unknown_docs, unknown_queries = _restrict(run, doc_ids, query_ids)
        if not any(kept.scores.values()):
            problems.append(
                f"{path}: none of its doc ids (for the given queries) are in the corpus {corpus}"
            )
            continue
        if unknown_docs:
            warnings.append(
                f"{path}: {unknown_docs} result lines name doc ids not in the corpus; left out"
            )
        if unknown_queries:
            warnings.append(
                f"{path}: {unknown_queries} query ids are not in {queries_path}; left out"
            )
        warnings.extend(w if str(path) in w else f"{path}: {w}" for w in run.warnings)
        runs.append(SystemResult(run.name, run=kept, path=Path(path)))
    return runs, problems, warnings


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
