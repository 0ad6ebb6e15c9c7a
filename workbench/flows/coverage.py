"""Coverage of a judgments store: the full report (`coverage_for_store`), the compact summary
that golden.yaml records (`summary_for_store`), the adaptive policy's state that both estimate
from (`adaptive_session`), and the study's plan and its judge's saving beside the report
(`coverage_parts`, `coverage_and_plan`). The store is read here; the core estimates from what
was read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.coverage.observations import grades_counted
from workbench.core.coverage.report import adaptive_coverage_report, coverage_report
from workbench.core.coverage.results import CompletenessRule, CoverageReport
from workbench.core.coverage.summary import summary_of
from workbench.core.model import Doc, Judgment, PoolEntry, Query

if TYPE_CHECKING:
    from workbench.core.adaptive.estimate import Draw
    from workbench.core.adaptive.policy import AdaptiveSession
    from workbench.core.adaptive.saving import JudgeSaving
    from workbench.core.study.target import Plan, Target


class CoverageStore(Protocol):
    """What coverage reads from a judgments store."""

    def pool(self) -> Sequence[PoolEntry]: ...
    def current_judgments(self, annotator: str | None = None) -> Sequence[Judgment]: ...
    def corpus_size(self) -> int: ...
    def queries(self) -> Sequence[Query]: ...
    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def docs(self, doc_ids: Iterable[str]) -> dict[str, Doc]: ...
    def draws(self) -> list[Draw]: ...
    def poolings(self) -> list[dict]: ...


def coverage_for_store(
    store: CoverageStore,
    k: int = 10,
    complete_at: float = 0.8,
    min_samples: int = 1,
    annotator: str | None = None,
    rel_threshold: int = 1,
    seed: int | None = None,
    session: AdaptiveSession | None = None,
    *,
    pool: Sequence[PoolEntry] | None = None,
    current: Sequence[Judgment] | None = None,
) -> CoverageReport:
    """The coverage report of a judgments store (every store query, in the store's order); a
    store pooled for the adaptive queue is estimated by the adaptive estimator (`session`: its
    policy state already rebuilt, by `adaptive_session`, with the same options). `seed` of the
    posterior draws: by default 0 for a static pool, the pooling's seed for an adaptive one (as
    the app's queue has it, so the app's status line and its overview give one figure). `pool`
    and `current` (the store's pool and `current_judgments(annotator)`) save reading them again
    when the caller has."""
    if current is None:
        current = store.current_judgments(annotator)
    grades = grades_counted(current, annotator)
    if pool is None:
        pool = store.pool()
    if store.get_meta("policy") == "adaptive":
        if session is None:
            session = adaptive_session(
                store, complete_at, annotator, rel_threshold, seed, pool=pool, current=current
            )
        return adaptive_coverage_report(
            pool,
            grades,
            store.corpus_size(),
            {q: session.state(q) for q in session.queries},
            query_ids=[q.query_id for q in store.queries()],
            k=k,
            thresholds=CompletenessRule(complete_at=complete_at, min_samples=min_samples),
            rel_threshold=rel_threshold,
            outside=session.rest_model().outside,
        )
    return coverage_report(
        pool,
        grades,
        store.corpus_size(),
        query_ids=[q.query_id for q in store.queries()],
        k=k,
        thresholds=CompletenessRule(complete_at=complete_at, min_samples=min_samples),
        rel_threshold=rel_threshold,
        seed=0 if seed is None else seed,
    )


def adaptive_session(
    store: CoverageStore,
    complete_at: float = 0.8,
    annotator: str | None = None,
    rel_threshold: int = 1,
    seed: int | None = None,
    *,
    pool: Sequence[PoolEntry] | None = None,
    current: Sequence[Judgment] | None = None,
) -> AdaptiveSession:
    """The adaptive policy's state of a store as coverage estimates from it (the study's
    draws come from the same state: `workbench.core.study.study_draws`); `seed` by default the
    pooling's."""
    from workbench.core.adaptive import PolicyConfig
    from workbench.flows.adaptive import session_from_store

    if seed is None:
        poolings = store.poolings()
        seed = int(poolings[-1]["seed"] or 0) if poolings else 0
    config = PolicyConfig(target=complete_at, seed=seed)
    return session_from_store(
        store, config, annotator, rel_threshold, pool=pool, current=current
    )


def summary_for_store(store: CoverageStore, **options: Any) -> dict[str, Any]:
    """The compact coverage slot of golden.yaml: per-query estimate and status, the summary,
    and the thresholds that decided the status. Figures are rounded for people
    (`SUMMARY_DIGITS`); the status is the one the unrounded figures decided. `workbench
    coverage --json` (`coverage_for_store`) keeps every figure as computed. With a judge
    stored with an adaptive study, `judge` names it and its version: the intervals are those
    with its labels as the relevance model's covariate."""
    summary = summary_of(coverage_for_store(store, **options))
    if store.get_meta("policy") == "adaptive":
        from workbench.flows.adaptive import stored_judge

        judge = stored_judge(store)  # type: ignore[arg-type]
        if judge is not None:
            summary["judge"] = {"name": judge[0], "version": judge[1]}
    return summary


def coverage_and_plan(
    store: CoverageStore, **options: Any
) -> tuple[CoverageReport, Plan | None]:
    """A store's coverage report (`coverage_for_store` with `options`) and, on an adaptive
    store, the study's plan toward the target it holds (`study_plan`), from one reading of
    the store's pool and judgments and one rebuilt policy state."""
    parts = coverage_parts(store, saving=False, **options)
    return parts.report, parts.plan


@dataclass(frozen=True, slots=True)
class CoverageParts:
    """What `workbench coverage` and `workbench report` show of a store: the report, the
    study's plan (adaptive store; None when not asked for), and the judge stored with the
    study with what it saved (None without one); `session`, the adaptive policy's state they
    were read from (for the study's draws beside them: `core.study.study_draws`)."""

    report: CoverageReport
    plan: Plan | None = None
    judge: JudgeSaving | None = None
    session: AdaptiveSession | None = None


def coverage_parts(
    store: CoverageStore, *, plan: bool = True, saving: bool = True, **options: Any
) -> CoverageParts:
    """The coverage report (`coverage_for_store` with `options`), and on an adaptive store the
    plan toward its target (`plan`) and the stored judge's saving (`saving`:
    `flows.adaptive.judge_saving_for_store`), from one reading of the store's pool and
    judgments and one rebuilt policy state."""
    from workbench.core.study.target import study_plan

    annotator = options.get("annotator")
    pool, current = store.pool(), store.current_judgments(annotator)
    if store.get_meta("policy") != "adaptive":
        return CoverageParts(coverage_for_store(store, **options, pool=pool, current=current))
    rel_threshold = options.get("rel_threshold", 1)
    session = adaptive_session(
        store, options.get("complete_at", 0.8), annotator, rel_threshold, options.get("seed"),
        pool=pool, current=current,
    )  # fmt: skip
    judge = None
    if saving:  # it only reads the session the report and the plan then read
        judge = _judge_saving(store, session, annotator, rel_threshold, pool, current)
    report = coverage_for_store(store, **options, session=session, pool=pool, current=current)
    found = None
    if plan:
        grades = grades_counted(current, annotator)
        found = study_plan(session, grades, pool, stored_target(store), rel_threshold)
    return CoverageParts(report, found, judge, session)


def _judge_saving(
    store: Any,
    session: AdaptiveSession,
    annotator: str | None,
    rel_threshold: int,
    pool: Sequence[PoolEntry],
    current: Sequence[Judgment],
) -> JudgeSaving | None:
    """The judge stored with the study and what it saved, against the study as without it
    (`session`: the study with it); None when none is stored."""
    from workbench.core.adaptive.saving import JudgeSaving
    from workbench.flows.adaptive import judge_saving_for_store, stored_judge

    chosen = stored_judge(store)
    if chosen is None:
        return None
    saved = judge_saving_for_store(
        store, session.config, annotator, rel_threshold, session=session, pool=pool,
        current=current,
    )  # fmt: skip
    return JudgeSaving(chosen[0], chosen[1], saved)


def stored_target(store: CoverageStore) -> Target:
    """The study's target as the store records it, else the default (`target_of`)."""
    from workbench.core.study.target import target_of

    return target_of(store.get_meta("target"))
