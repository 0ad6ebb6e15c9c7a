"""The coverage report as typed results, and its one JSON edge (`CoverageReport.to_json`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.core.coverage.observations import StratumObs
from workbench.core.coverage.rank_model import RankModel
from workbench.core.interval_level import LEVEL
from workbench.core.model import Status

KS = (5, 10, 20)
"""The cutoffs of each system's judged@k."""


@dataclass(frozen=True, slots=True)
class CompletenessRule:
    """When a query's judged relevant set counts as complete.

    complete: completeness_low >= complete_at (the lower end of the `level` interval, so the
    figure users act on is a one-sided bound); unmeasured: fewer than min_samples judged items
    outside the pool (nothing to estimate from); incomplete: otherwise. `level` is the static
    report's to choose; the adaptive estimate's intervals are at `LEVEL` only (its report
    refuses another)."""

    complete_at: float = 0.8
    min_samples: int = 1
    level: float = LEVEL

    def as_dict(self) -> dict[str, float]:
        return {
            "complete_at": self.complete_at,
            "min_samples": self.min_samples,
            "level": self.level,
        }


@dataclass(frozen=True, slots=True)
class SystemFigures:
    """One system's part in the pool: the share of its top k judged (None: it has no top k),
    the relevant documents it found within the pool depth, and those no other system found
    (Zobel's unique relevant). Across queries: judged@k is the mean, the counts are sums."""

    judged_at: Mapping[int, float | None]
    relevant: int
    unique_relevant: int


@dataclass(frozen=True, slots=True)
class QueryFigures:
    """One query's pool, judging and coverage figures. The estimates (est_rel ... ceiling_est)
    are None while the query is unmeasured; est_rel_ht also when every document is judged."""

    pool: int
    sampled: int
    judged: int
    unjudged: int
    relevant: int
    relevant_by_grade: Mapping[int, int]
    """Relevant documents per grade, in the order of the grades as text."""
    label_coverage: float | None
    ceiling: float | None
    est_rel: float | None
    est_rel_low: float | None
    est_rel_high: float | None
    est_rel_ht: float | None
    completeness: float | None
    completeness_low: float | None
    completeness_high: float | None
    ceiling_est: float | None
    status: Status
    systems: Mapping[str, SystemFigures]
    discovery: tuple[int, ...]
    """Relevant found after each judgment, in queue order."""
    last_quarter_share: float | None
    strata: tuple[StratumObs, ...]
    more_to_certify: int | None = None
    """Adaptive queue: judgments the model expects this query still needs to be certified
    (None: certified, capped, unmeasured, or not within its frame as far as the model sees)."""
    to_estimate: int | None = None
    """Judgments of this query until it has an estimate: 0 once it has one; in its queue's
    order (a static pool's queue reaching its sampled passages, the adaptive queue's picks run
    ahead); None when no judging can give it one (a static pool without a sample outside it, an
    adaptive frame that runs out first)."""
    frame_left: int | None = None
    """Adaptive queue: the passages of its frame not judged yet (None for a static pool)."""


@dataclass(frozen=True, slots=True)
class CoverageSummary:
    """Across queries: counts by status, totals, completeness means, each system's figures."""

    queries: int
    complete: int
    incomplete: int
    unmeasured: int
    pool: int
    judged: int
    relevant: int
    corpus_size: int
    est_rel: float | None
    mean_completeness: float | None
    median_completeness: float | None
    mean_completeness_low: float | None
    mean_label_coverage: float | None
    mean_last_quarter_share: float | None
    systems: Mapping[str, SystemFigures]
    measured: int = 0
    """Queries with an estimate of |Rel|: those `est_rel` sums and the completeness means cover."""
    relevant_measured: int = 0
    """Judged relevant in the measured queries (`relevant` counts every query's)."""


@dataclass(frozen=True, slots=True)
class CoverageReport:
    """The coverage of every query, the summary, the rule that decided each status and the fit
    of the rank model (None when no query has a judged sample)."""

    k: int
    rule: CompletenessRule
    queries: Mapping[str, QueryFigures]
    summary: CoverageSummary
    model: RankModel | None
    policy: str = "static"
    """'adaptive' when the store was judged by the adaptive queue (its own estimator)."""
    outside_candidates: float | None = None
    """Adaptive: the share of the relevant documents outside every system's candidates
    (core.adaptive.rest.outside_share); None before any reserve passage is judged."""
    study: Any = None
    """Adaptive: the study's plan toward its target (core.study.target.Plan), when the caller
    asked for it (the app's overview); not part of `to_json` (`coverage --json` puts it first
    under "study")."""

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON data (the `workbench coverage --json` contract); an adaptive
        report adds "policy", "outside_candidates" and each query's "more_to_certify" and
        "frame_left"; every query has "to_estimate"."""
        adaptive = self.policy == "adaptive"
        data = {
            "k": self.k,
            "thresholds": self.rule.as_dict(),
            "queries": {qid: _query_json(row, adaptive) for qid, row in self.queries.items()},
            "summary": _summary_json(self.summary),
            "model": self.model.as_dict() if self.model is not None else None,
        }
        if adaptive:
            data["policy"] = self.policy
            data["outside_candidates"] = self.outside_candidates
        return data


def _systems_json(systems: Mapping[str, SystemFigures]) -> dict[str, dict[str, Any]]:
    return {
        name: {
            **{f"judged@{k}": share for k, share in figures.judged_at.items()},
            "relevant": figures.relevant,
            "unique_relevant": figures.unique_relevant,
        }
        for name, figures in systems.items()
    }


def _query_json(row: QueryFigures, adaptive: bool = False) -> dict[str, Any]:
    data = {
        "pool": row.pool,
        "sampled": row.sampled,
        "judged": row.judged,
        "unjudged": row.unjudged,
        "relevant": row.relevant,
        "relevant_by_grade": {str(g): n for g, n in row.relevant_by_grade.items()},
        "label_coverage": row.label_coverage,
        "ceiling": row.ceiling,
        "est_rel": row.est_rel,
        "est_rel_low": row.est_rel_low,
        "est_rel_high": row.est_rel_high,
        "est_rel_ht": row.est_rel_ht,
        "completeness": row.completeness,
        "completeness_low": row.completeness_low,
        "completeness_high": row.completeness_high,
        "ceiling_est": row.ceiling_est,
        "status": str(row.status),
        "to_estimate": row.to_estimate,
        "systems": _systems_json(row.systems),
        "discovery": list(row.discovery),
        "last_quarter_share": row.last_quarter_share,
        "strata": {
            s.name: {
                "population": s.population,
                "sampled": s.sampled,
                "judged": s.judged,
                "relevant": s.relevant,
            }
            for s in row.strata
        },
    }
    if adaptive:
        data["more_to_certify"] = row.more_to_certify
        data["frame_left"] = row.frame_left
    return data


def _summary_json(summary: CoverageSummary) -> dict[str, Any]:
    return {
        "queries": summary.queries,
        "complete": summary.complete,
        "incomplete": summary.incomplete,
        "unmeasured": summary.unmeasured,
        "pool": summary.pool,
        "judged": summary.judged,
        "relevant": summary.relevant,
        "corpus_size": summary.corpus_size,
        "est_rel": summary.est_rel,
        "measured": summary.measured,
        "relevant_measured": summary.relevant_measured,
        "mean_completeness": summary.mean_completeness,
        "median_completeness": summary.median_completeness,
        "mean_completeness_low": summary.mean_completeness_low,
        "mean_label_coverage": summary.mean_label_coverage,
        "mean_last_quarter_share": summary.mean_last_quarter_share,
        "systems": _systems_json(summary.systems),
    }
