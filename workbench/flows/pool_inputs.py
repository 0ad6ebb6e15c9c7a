"""What `pool_corpus` reads and checks before anything runs or is written: the options, the
corpus, queries and run files, and the outputs (never onto an input, never someone else's
store)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.errors import InputError
from workbench.core.model import Doc, Query
from workbench.core.pool.pooling import STRATEGIES
from workbench.core.store_url import StoreLocation
from workbench.formats.passages import CorpusStats, PassageRule
from workbench.formats.vectors import GivenVectors
from workbench.retrieval.bm25 import CHOICES as BM25_BACKENDS
from workbench.retrieval.registry import RERANKERS, RETRIEVERS, system_names
from workbench.retrieval.systems import SystemResult, read_run_files


@dataclass(frozen=True, slots=True)
class VectorPaths:
    """`pool --embeddings FILE.npy [--embeddings-ids FILE] [--query-embeddings FILE.npy
    [--query-embeddings-ids FILE]]`: vectors the dense system searches instead of encoding."""

    embeddings: str | os.PathLike[str] | None = None
    embeddings_ids: str | os.PathLike[str] | None = None
    query_embeddings: str | os.PathLike[str] | None = None
    query_embeddings_ids: str | os.PathLike[str] | None = None

    def problems(self, systems: Sequence[str]) -> list[str]:
        """Options given without the ones they need."""
        problems = []
        if self.embeddings is None:
            for option, value in (("--embeddings-ids", self.embeddings_ids),
                                  ("--query-embeddings", self.query_embeddings)):  # fmt: skip
                if value is not None:
                    problems.append(f"{option}: needs --embeddings (the passages' vectors)")
        elif "dense" not in systems:
            problems.append("--embeddings: the vectors stand in for the dense system's encoding;"
                            " add dense to --systems")  # fmt: skip
        if self.query_embeddings is None and self.query_embeddings_ids is not None:
            problems.append("--query-embeddings-ids: needs --query-embeddings")
        return problems

    def files(self) -> dict[str, str | os.PathLike[str] | None]:
        """Every file read, by option (the default ids files included), for `check_outputs`."""
        from workbench.formats.vectors import ids_path_for

        files: dict[str, str | os.PathLike[str] | None] = {}
        for option, matrix, ids in (
            ("--embeddings", self.embeddings, self.embeddings_ids),
            ("--query-embeddings", self.query_embeddings, self.query_embeddings_ids),
        ):
            if matrix is not None:
                files[option] = matrix
                files[f"{option}-ids"] = ids if ids is not None else ids_path_for(matrix)
        return files


@dataclass(slots=True)
class PoolInputs:
    """Everything `pool_corpus` needs, read and checked before anything runs or is written."""

    docs: list[Doc]
    queries: list[Query]
    systems: list[str]
    external: list[SystemResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    vectors: GivenVectors | None = None
    passages: PassageRule | None = None
    """How a text folder was cut into passages (None: a JSONL corpus)."""
    corpus: CorpusStats | None = None


def check_options(
    systems: Sequence[str], depth: int, strategy: str, sample: int, bm25_backend: str
) -> list[str]:
    problems: list[str] = []
    known = system_names()
    unknown = [s for s in systems if s not in known]
    if unknown:
        problems.append(
            f"--systems: unknown system {', '.join(map(repr, unknown))} (known: {', '.join(known)})"
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
    vector_paths: VectorPaths = VectorPaths(),
    passages: PassageRule | None = None,
) -> PoolInputs:
    """Read the corpus (a text folder cut by `passages`), queries and run files; every problem
    of every file in one InputError."""
    from workbench.formats import read_corpus_any, read_queries_any
    from workbench.formats.passages import DEFAULT_RULE, corpus_stats, short_passages_warning

    run_files = list(run_files)
    problems: list[str] = []
    docs: list[Doc] = []
    query_list: list[Query] = []
    folder = Path(corpus).is_dir()
    try:
        docs = read_corpus_any(corpus, passages)
    except InputError as exc:
        problems.extend(exc.problems)
    else:
        if not docs:
            problems.append(f"{corpus}: the corpus holds no documents")
    files = len({d.doc_id.rsplit("#", 1)[0] for d in docs}) if folder else 1
    # a record's title is read and matched with its text (cacm's records are half titles alone,
    # counted as 0 words); a folder's passages are cut by their text's words, titled by the file
    texts = [d.text if folder or not d.title else f"{d.title} {d.text}" for d in docs]
    stats = corpus_stats(texts, files)
    try:
        query_list = read_queries_any(queries)
    except InputError as exc:
        problems.extend(exc.problems)
    else:
        if not query_list:
            problems.append(f"{queries}: names no queries")
    inputs = PoolInputs(docs, query_list, list(dict.fromkeys(systems)))
    inputs.passages, inputs.corpus = (passages or DEFAULT_RULE) if folder else None, stats
    short = short_passages_warning(stats, inputs.passages)
    if short:
        inputs.warnings.append(short)
    if inputs.systems and not run_files and all(s in RERANKERS for s in inputs.systems):
        problems.append(
            f"--systems: {', '.join(inputs.systems)} needs a first-stage system "
            f"({', '.join(RETRIEVERS)}) or a --run to rescore"
        )
    external, run_problems, warnings = read_run_files(
        run_files, inputs.systems, docs, query_list, corpus, queries
    )
    inputs.external.extend(external)
    inputs.warnings.extend(warnings)
    problems.extend(run_problems)
    if vector_paths.embeddings is not None and docs and query_list:
        inputs.vectors = _read_vectors(vector_paths, docs, query_list, problems)
    if problems:
        raise InputError(problems)
    return inputs


def _read_vectors(
    paths: VectorPaths, docs: list[Doc], queries: list[Query], problems: list[str]
) -> GivenVectors | None:
    """The given vectors, checked against the corpus and the queries; problems appended."""
    from workbench.formats.vectors import GivenVectors, VectorFile, read_vectors

    assert paths.embeddings is not None
    doc_vectors: VectorFile | None = None
    query_vectors: VectorFile | None = None
    try:
        doc_vectors = read_vectors(
            paths.embeddings, paths.embeddings_ids, [d.doc_id for d in docs], "passage"
        )
    except InputError as exc:
        problems.extend(exc.problems)
    if paths.query_embeddings is not None:
        try:
            query_vectors = read_vectors(
                paths.query_embeddings,
                paths.query_embeddings_ids,
                [q.query_id for q in queries],
                "query",
            )
        except InputError as exc:
            problems.extend(exc.problems)
    if doc_vectors and query_vectors and doc_vectors.dim != query_vectors.dim:
        problems.append(
            f"{query_vectors.path}: {query_vectors.dim}-dimensional vectors, but the passages'"
            f" ({doc_vectors.path}) are {doc_vectors.dim}-dimensional"
        )
    return GivenVectors(doc_vectors, query_vectors) if doc_vectors else None


def check_outputs_of(
    db: StoreLocation,
    runs_dir: Path,
    systems: Sequence[str],
    corpus: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    run_files: Sequence[str | os.PathLike[str]],
    vector_paths: VectorPaths = VectorPaths(),
) -> None:
    """Before any retriever runs: a store that exists must be a workbench store, output
    folders must not be files, and nothing pool writes (the store, each built-in system's run)
    may land on one of its inputs."""
    from workbench.formats.atomic import check_outputs
    from workbench.store import open_store

    problems = []
    outputs: dict[str, str | os.PathLike[str] | None] = {}
    if db.is_url:
        from workbench.store.postgres import NoStore

        try:
            open_store(db, pooling=True).close()  # unreachable, or not a store: said before any run
        except NoStore:
            pass  # made when the pool is written
    elif Path(db).is_dir():
        problems.append(f"{db}: is a folder, expected a judgments store file")
    else:
        if Path(db).exists() or db.is_keyword_dsn:
            open_store(db, pooling=True).close()  # raises InputError when it is not a store
        outputs["--db"] = db
    if runs_dir.exists() and not runs_dir.is_dir():
        problems.append(f"{runs_dir}: is a file, expected a folder for run files")
    outputs.update({f"the {name} run": runs_dir / f"{name}.run" for name in systems})
    inputs: dict[str, str | os.PathLike[str] | None] = {"--corpus": corpus, "--queries": queries}
    inputs.update({f"--run {path}": path for path in run_files})
    inputs.update(vector_paths.files())
    problems.extend(check_outputs(outputs, inputs))
    if problems:
        raise InputError(problems)
