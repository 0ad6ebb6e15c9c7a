"""Coverage of a judgments store: the full report (`coverage_for_store`) and the compact,
rounded summary that golden.yaml records (`summary_for_store`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.coverage.observations import grades_counted
from workbench.core.coverage.report import adaptive_coverage_report, coverage_report
from workbench.core.coverage.results import CompletenessRule, CoverageReport
from workbench.core.model import Doc, Judgment, PoolEntry, Query

if TYPE_CHECKING:
    from workbench.core.adaptive.estimate import Draw
    from workbench.core.adaptive.policy import AdaptiveSession


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
            outside=session.outside_share(),
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
    from workbench.core.adaptive.stored import session_from_store

    if seed is None:
        poolings = store.poolings()
        seed = int(poolings[-1]["seed"] or 0) if poolings else 0
    config = PolicyConfig(target=complete_at, seed=seed)
    return session_from_store(
        store, config, annotator, rel_threshold, pool=pool, current=current  # type: ignore[arg-type]
    )


SUMMARY_KEYS = (
    "est_rel",
    "est_rel_low",
    "est_rel_high",
    "completeness",
    "completeness_low",
    "status",
)
"""A query's figures in the summary, after its pool, judged and relevant counts (then its
sampled passages and its judgments to an estimate, for the gate's word on an unmeasured one)."""
SUMMARY_DIGITS = {
    "est_rel": (1, "nearest"),
    "est_rel_low": (1, "down"),
    "est_rel_high": (1, "up"),
    "completeness": (3, "nearest"),
    "completeness_low": (3, "down"),
}
"""How the summary's figures, meant for people (golden.yaml), are rounded: |Rel| estimates to
1 decimal, completeness to 3; each bound outwards (low down, high up), so the rounded interval
holds the computed one, and a status read again from completeness_low (`eval --complete-at`)
can never turn complete on rounding alone."""
SUMMARY_MEAN_DIGITS = 3
"""Shares and means in the summary's `summary` block (mean completeness, judged@k, ...)."""
METHOD = "stratified sample outside the pool; empirical-Bayes relevance-vs-rank model"


def round_figure(value: float | None, digits: int, direction: str = "nearest") -> float | None:
    """`value` to `digits` decimals: to the nearest, or down/up (a hair of float noise, 1e-9,
    is forgiven so 0.29 stays 0.29). None and whole numbers (int) stay as they are."""
    if value is None or isinstance(value, int) or not math.isfinite(value):
        return value
    if direction == "nearest":
        return round(value, digits)
    scale = 10**digits
    if direction == "down":
        return round(math.floor(value * scale + 1e-9) / scale, digits)
    return round(math.ceil(value * scale - 1e-9) / scale, digits)


def _rounded_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key == "systems":
            out[key] = {
                name: {
                    k: round_figure(v, SUMMARY_MEAN_DIGITS) if isinstance(v, float) else v
                    for k, v in figures.items()
                }
                for name, figures in value.items()
            }
        elif key == "est_rel":
            out[key] = round_figure(value, 1)
        elif isinstance(value, float):
            out[key] = round_figure(value, SUMMARY_MEAN_DIGITS)
        else:
            out[key] = value
    return out


def summary_for_store(store: CoverageStore, **options: Any) -> dict[str, Any]:
    """The compact coverage slot of golden.yaml: per-query estimate and status, the summary,
    and the thresholds that decided the status. Figures are rounded for people
    (`SUMMARY_DIGITS`); the status is the one the unrounded figures decided. `workbench
    coverage --json` (`coverage_for_store`) keeps every figure as computed."""
    return summary_of(coverage_for_store(store, **options))


def summary_of(coverage: CoverageReport) -> dict[str, Any]:
    """`summary_for_store` of a report already computed (the fit is the costly part)."""
    report = coverage.to_json()
    queries: dict[str, dict[str, Any]] = {}
    for qid, row in report["queries"].items():
        slot = {key: row[key] for key in ("pool", "judged", "relevant", *SUMMARY_KEYS)}
        slot["sampled"], slot["to_estimate"] = row["sampled"], row["to_estimate"]
        for key, (digits, direction) in SUMMARY_DIGITS.items():
            slot[key] = round_figure(slot[key], digits, direction)
        queries[qid] = slot
    return {
        "queries": queries,
        "summary": _rounded_summary(report["summary"]),
        "thresholds": report["thresholds"],
        "method": METHOD,
        "policy": coverage.policy,
    }
