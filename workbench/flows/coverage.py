"""Coverage of a judgments store, for callers that hold a store and want one figure: the full
report (`coverage_for_store`), the compact summary that golden.yaml records
(`summary_for_store`), the adaptive policy's state both estimate from (`adaptive_session`), the
report with the study's plan (`coverage_and_plan`) and with the judge's saving
(`coverage_parts`). Each reads the store once through one `StudyContext`
(`flows.study_context`), which a command that shows several of them builds itself."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from workbench.core.coverage.results import CoverageReport
from workbench.core.model import Doc, Judgment, PoolEntry, Query
from workbench.flows.study_context import (
    CoverageOptions,
    CoverageParts,
    StudyContext,
    adaptive_session,
)

if TYPE_CHECKING:
    from workbench.core.adaptive.estimate import Draw
    from workbench.core.study.target import Plan

__all__ = [
    "CoverageParts",
    "CoverageStore",
    "adaptive_session",
    "coverage_and_plan",
    "coverage_for_store",
    "coverage_parts",
    "summary_for_store",
]


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
) -> CoverageReport:
    """The coverage report of a judgments store (every store query, in the store's order); a
    store pooled for the adaptive queue is estimated by the adaptive estimator. `seed` of the
    posterior draws: by default 0 for a static pool, the pooling's seed for an adaptive one (as
    the app's queue has it, so the app's status line and its overview give one figure)."""
    options = CoverageOptions(k, complete_at, min_samples, annotator, rel_threshold, seed)
    return StudyContext(store, options).report


def summary_for_store(
    store: CoverageStore,
    k: int = 10,
    complete_at: float = 0.8,
    min_samples: int = 1,
    annotator: str | None = None,
    rel_threshold: int = 1,
    seed: int | None = None,
) -> dict:
    """The compact coverage slot of golden.yaml: per-query estimate and status, the summary,
    and the thresholds that decided the status. Figures are rounded for people
    (`SUMMARY_DIGITS`); the status is the one the unrounded figures decided. `workbench
    coverage --json` (`coverage_for_store`) keeps every figure as computed. With a judge
    stored with an adaptive study, `judge` names it and its version: the intervals are those
    with its labels as the relevance model's covariate."""
    options = CoverageOptions(k, complete_at, min_samples, annotator, rel_threshold, seed)
    return StudyContext(store, options).summary()


def coverage_and_plan(
    store: CoverageStore, rel_threshold: int = 1
) -> tuple[CoverageReport, Plan | None]:
    """A store's coverage report and, on an adaptive store, the study's plan toward the target
    it holds (`study_plan`), from one reading of the store and one rebuilt policy state."""
    context = StudyContext(store, CoverageOptions(rel_threshold=rel_threshold))
    return context.report, context.plan


def coverage_parts(
    store: CoverageStore, *, plan: bool = True, saving: bool = True, rel_threshold: int = 1
) -> CoverageParts:
    """The coverage report, and on an adaptive store the plan toward its target (`plan`) and
    the stored judge's saving (`saving`), from one reading of the store."""
    context = StudyContext(store, CoverageOptions(rel_threshold=rel_threshold))
    return context.parts(plan=plan, saving=saving)
