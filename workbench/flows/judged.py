"""Where a study's judgments come from, decided once: a judgments store (with its coverage and
study draws), a golden.yaml (with the coverage it recorded at export) or TREC qrels (neither).
`read_judgments` returns one `Judgments` for `eval`, `compare`, `report` and the Python API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.judgments.resolve import JudgedSet, judged_set_of
from workbench.core.model import Judgment

if TYPE_CHECKING:
    from workbench.core.audit.judged_coverage import Coverage
    from workbench.core.judgments.judge_versions import JudgeLabels
    from workbench.formats import Golden
    from workbench.formats.passages import PassageRule
    from workbench.store import JudgmentStore


class JudgedStore(Protocol):
    """What `judged_set` reads from a judgments store."""

    def current_judgments(self) -> list[Judgment]: ...
    def aliases(self) -> dict[str, str]: ...
    def pool_doc_ids(self) -> set[str]: ...
    def judge_versions(self) -> dict[str, dict[str, JudgeIdentity]]: ...


def judged_set(store: JudgedStore) -> JudgedSet:
    """A store's judgments as one golden set: what `export` writes and `eval --qrels STORE`
    scores, so the two never differ."""
    return judged_set_of(
        store.current_judgments(), store.aliases(), store.pool_doc_ids(), store.judge_versions()
    )


@dataclass(frozen=True)
class Judgments:
    """The graded pairs to score against, with what came with them: `aliases` (a copy of a
    judged passage -> the judged one), `coverage` (a store's or golden.yaml's estimate of each
    query's |Rel|, None for TREC qrels), `judges` (whose labels, in which versions), the
    `problems` found reading them (`qrels` is None when they could not be read), and the
    relevance threshold they were read at (`rel_threshold`: a store's own when not given)."""

    qrels: dict[str, dict[str, int]] | None
    aliases: dict[str, str]
    coverage: Coverage | None = None
    judges: JudgeLabels | None = None
    problems: tuple[str, ...] = ()
    rel_threshold: int = 1


def read_judgments(
    source: str,
    *,
    rel_threshold: int | None = 1,
    gain: str = "linear",
    complete_at: float | None = None,
    golden: Golden | None = None,
) -> Judgments:
    """The judgments at `source` (a store, a golden.yaml or TREC qrels), or `golden`, the
    golden.yaml at that path already read; every problem with them in `problems`.
    `rel_threshold` None: a store's own (read with it, once), else 1."""
    from workbench.core.errors import InputError
    from workbench.formats import load_judgments
    from workbench.formats.store_file import is_store

    found = Judgments(None, {})
    problems: list[str] = []
    try:
        if golden is None and is_store(source):
            found = store_judgments(source, rel_threshold, complete_at)
        else:
            rel_threshold = 1 if rel_threshold is None else rel_threshold
            qrels = None
            if golden is None:
                qrels, golden = load_judgments(source)
            if golden is not None:
                # Identical passages are one document: score against the judged ids and fold
                # each alias in a ranking into its canonical doc (a copy never counts twice).
                coverage = None
                if golden.coverage is not None:
                    coverage = golden_coverage(source, golden, rel_threshold, complete_at)
                found = Judgments(
                    golden.qrels, golden.aliases, coverage, golden.judge_label_counts(),
                    rel_threshold=rel_threshold,
                )  # fmt: skip
            else:
                found = Judgments(qrels, {}, rel_threshold=rel_threshold)
        if found.qrels is not None:
            problems.extend(grade_problems(source, found.qrels, gain))
        if found.coverage is None and complete_at is not None:
            problems.append(
                f"--complete-at: {source} carries no coverage information "
                "(give a judgments store, or a golden.yaml exported with its "
                "coverage summary)"
            )
    except InputError as exc:
        problems.extend(exc.problems)
    return replace(found, problems=tuple(problems))


def grade_problems(path: str, qrels: Mapping[str, Mapping[str, int]], gain: str) -> list[str]:
    """`path: query Q doc D: ...` for each grade the gain cannot score (too large for a float)."""
    from workbench.core.display import visible
    from workbench.core.measures.metrics import MAX_GRADE, MAX_LINEAR_GRADE, grade_problem

    found: list[str] = []
    top = MAX_GRADE.get(gain, MAX_LINEAR_GRADE)
    for qid, judged in qrels.items():
        if not judged or max(judged.values()) <= top:
            continue  # the common case, checked in C
        for doc_id, grade in judged.items():
            message = grade_problem(grade, gain)
            if message:
                where = f"query {visible(qid, one_line=True)} doc {visible(doc_id, one_line=True)}"
                found.append(f"{path}: {where}: {message}")
    if len(found) > 10:
        found[10:] = [f"{path}: ... and {len(found) - 10} more grades too large"]
    return found


def store_judgments(
    path: str, rel_threshold: int | None = 1, complete_at: float | None = None
) -> Judgments:
    """A judgments store's judgments, as `workbench export --golden` records them: every store
    query with the resolved grade of each judged pair, the aliases, coverage from
    `coverage.summary_for_store` (with the study's joint draws on an adaptive store), the
    judges' versions. Raises InputError when the coverage cannot be read."""
    from workbench.flows.study_context import CoverageOptions, StudyContext
    from workbench.store import open_store

    options = CoverageOptions(rel_threshold=rel_threshold)
    if complete_at is not None:
        options = CoverageOptions(complete_at=complete_at, rel_threshold=rel_threshold)
    with open_store(path, read_only=True) as store:
        context = StudyContext(store, options)
        used = context.rel_threshold  # the store's own when not given
        found = judged_with_coverage(context.store, context.summary(), path, used, complete_at)
        found = replace(found, rel_threshold=used)
    if context.session is not None and found.coverage is not None:
        from workbench.core.study import study_draws

        draws = study_draws(context.session)
        found = replace(found, coverage=replace(found.coverage, study=draws))
    return found


def judged_with_coverage(
    store: JudgmentStore,
    summary: Mapping[str, Any],
    path: str,
    rel_threshold: int = 1,
    complete_at: float | None = None,
) -> Judgments:
    """`store_judgments` with the coverage summary already computed (it is the costly part)."""
    from workbench.core.audit.judged_coverage import coverage_from_summary
    from workbench.core.errors import InputError

    judged_store = judged_set(store)
    resolved, aliases = judged_store.qrels, judged_store.aliases
    query_ids = [q.query_id for q in store.queries()]
    known = set(query_ids)
    query_ids += sorted(qid for qid in resolved if qid not in known)
    judged = {qid: resolved.get(qid, {}) for qid in query_ids}
    coverage, problems = coverage_from_summary(
        summary,
        judged,
        source=f"store {path}",
        rel_threshold=rel_threshold,
        aliases=aliases,
        complete_at=complete_at,
    )
    if problems:
        raise InputError([f"{path}: {p}" for p in problems])
    return Judgments(judged, aliases, coverage, judged_store.judges())


def golden_coverage(
    path: str, golden: Golden, rel_threshold: int = 1, complete_at: float | None = None
) -> Coverage:
    """The coverage summary a golden.yaml recorded at export, checked against its judgments."""
    from workbench.core.audit.judged_coverage import coverage_from_summary
    from workbench.core.errors import InputError

    coverage, problems = coverage_from_summary(
        golden.coverage or {},
        golden.qrels,
        source=f"golden.yaml {path}",
        rel_threshold=rel_threshold,
        aliases=golden.aliases,
        complete_at=complete_at,
    )
    if problems:
        raise InputError([f"{path}: {p}" for p in problems])
    return coverage


def recorded_rule(qrels: str) -> PassageRule | None:
    """How the judgments at `qrels` (a store, a golden.yaml) were pooled: their passage rule;
    None for TREC qrels or what cannot be read (said when the judgments are read)."""
    from workbench.core.errors import InputError
    from workbench.formats.passages import golden_rule
    from workbench.formats.passages import recorded_rule as pooled_rule
    from workbench.formats.store_file import is_store

    try:
        if is_store(qrels):
            from workbench.store import open_store

            with open_store(qrels, read_only=True) as store:
                return pooled_rule(store.poolings(), str(store.location))
        if str(qrels).lower().endswith((".yaml", ".yml")):
            from workbench.formats.golden import read_golden

            return golden_rule(read_golden(qrels).pool, str(qrels))
    except InputError:
        pass
    return None
