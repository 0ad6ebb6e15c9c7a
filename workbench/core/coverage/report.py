"""The coverage report: per query its pool and judging figures, each system's part, the
discovery curve and the estimate of |Rel| with the status it decides; then the summary."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from workbench.core.coverage.estimator import estimate_missing, horvitz_thompson
from workbench.core.coverage.fit import fit_rank_model
from workbench.core.coverage.observations import POOL_STRATUM, QueryObs, observe
from workbench.core.coverage.rank_model import RankModel
from workbench.core.coverage.results import (
    KS,
    CompletenessRule,
    CoverageReport,
    CoverageSummary,
    QueryFigures,
    SystemFigures,
)
from workbench.core.coverage.status import coverage_status
from workbench.core.measures.metrics import ceiling
from workbench.core.model import PoolEntry, Status

DEFAULT_RULE = CompletenessRule()


def coverage_report(
    entries: Sequence[PoolEntry],
    grades: Mapping[str, Mapping[str, int]],
    corpus_size: int,
    *,
    query_ids: Sequence[str] | None = None,
    k: int = 10,
    thresholds: CompletenessRule = DEFAULT_RULE,
    rel_threshold: int = 1,
    draws: int = 4000,
    seed: int = 0,
) -> CoverageReport:
    """The coverage of each query (`query_ids`, default: those in the queue, in queue order)."""
    by_query: dict[str, list[PoolEntry]] = {}
    for e in entries:
        by_query.setdefault(e.query_id, []).append(e)
    qids = list(query_ids) if query_ids is not None else list(by_query)
    observations = {
        q: observe(q, by_query.get(q, []), grades.get(q, {}), corpus_size, rel_threshold)
        for q in qids
    }
    model = fit_rank_model(observations.values())
    queries: dict[str, QueryFigures] = {}
    for qid in qids:
        obs, mine, judged = observations[qid], by_query.get(qid, []), grades.get(qid, {})
        row = query_figures(obs, mine, judged, corpus_size, k, rel_threshold)
        aliases = sum(len(e.aliases) for e in mine if e.doc_id in judged)
        if corpus_size and row.judged + aliases >= corpus_size:
            # Every document of the corpus is judged: |Rel| is known exactly, nothing to estimate.
            row = _exact(row, k)
        elif obs.sample_judged >= thresholds.min_samples and obs.sample_judged > 0:
            row = _estimated(row, obs, k, thresholds, model, draws, seed)
        else:
            needed = max(thresholds.min_samples, 1) - obs.sample_judged
            row = replace(row, to_estimate=to_sample(mine, judged, needed))
        queries[qid] = row
    return CoverageReport(k, thresholds, queries, summarize(queries, corpus_size), model)


def to_sample(entries: Sequence[PoolEntry], grades: Mapping[str, int], needed: int) -> int | None:
    """A static queue's judgments (its unjudged items, in queue order) until `needed` more of its
    sampled passages (outside the pool) are judged: what gives the query an estimate. None when
    it has too few sampled passages left (a pool without `--sample`: none at all)."""
    count = 0
    for e in entries:
        if e.doc_id in grades:
            continue
        count += 1
        if e.stratum != POOL_STRATUM:
            needed -= 1
            if needed <= 0:
                return count
    return None


def query_figures(
    obs: QueryObs,
    entries: Sequence[PoolEntry],
    grades: Mapping[str, int],
    corpus_size: int,
    k: int,
    rel_threshold: int,
) -> QueryFigures:
    """A query's figures before any estimate (status unmeasured)."""
    judged_entries = [e for e in entries if e.doc_id in grades]
    known = {e.doc_id for e in entries}
    judged = len(judged_entries) + sum(1 for d in grades if d not in known)
    by_grade: dict[int, int] = {}
    for g in grades.values():
        if g >= rel_threshold:
            by_grade[g] = by_grade.get(g, 0) + 1
    curve = discovery_curve(entries, grades, rel_threshold)
    return QueryFigures(
        pool=obs.pool_size,
        sampled=sum(s.sampled for s in obs.strata),
        judged=judged,
        unjudged=len(entries) - len(judged_entries),
        relevant=obs.judged_relevant,
        relevant_by_grade=dict(sorted(by_grade.items(), key=lambda item: str(item[0]))),
        label_coverage=judged / corpus_size if corpus_size else None,
        ceiling=ceiling(k, obs.judged_relevant),
        est_rel=None,
        est_rel_low=None,
        est_rel_high=None,
        est_rel_ht=None,
        completeness=None,
        completeness_low=None,
        completeness_high=None,
        ceiling_est=None,
        status=Status.UNMEASURED,
        systems=system_figures(entries, grades, rel_threshold),
        discovery=tuple(curve),
        last_quarter_share=last_quarter_share(curve),
        strata=tuple(obs.strata),
    )


def _exact(row: QueryFigures, k: int) -> QueryFigures:
    """Every document judged: the judged relevant count is |Rel|, a point interval."""
    relevant = row.relevant
    return replace(
        row,
        est_rel=relevant,
        est_rel_low=relevant,
        est_rel_high=relevant,
        completeness=1.0,
        completeness_low=1.0,
        completeness_high=1.0,
        ceiling_est=ceiling(k, relevant),
        status=Status.COMPLETE,
        to_estimate=0,
    )


def _estimated(
    row: QueryFigures,
    obs: QueryObs,
    k: int,
    rule: CompletenessRule,
    model: RankModel | None,
    draws: int,
    seed: int,
) -> QueryFigures:
    """|Rel| and completeness from the posterior-predictive draws, with their `rule.level`
    intervals; complete when completeness_low reaches `rule.complete_at`."""
    import numpy as np

    tail = (1 - rule.level) / 2
    relevant = row.relevant
    totals = estimate_missing(obs, model, draws=draws, seed=seed)
    # Nothing relevant left to find (total 0) counts as complete.
    share = np.where(totals > 0, relevant / np.maximum(totals, 1e-9), 1.0)
    est = _quantile(totals, 0.5)
    low = _quantile(share, tail)
    return replace(
        row,
        est_rel=est,
        est_rel_low=_quantile(totals, tail),
        est_rel_high=_quantile(totals, 1 - tail),
        est_rel_ht=horvitz_thompson(obs),
        completeness=(relevant / est) if est > 0 else 1.0,
        completeness_low=low,
        completeness_high=_quantile(share, 1 - tail),
        ceiling_est=ceiling(k, est),
        status=coverage_status(low, rule.complete_at),
        to_estimate=0,
    )


def _quantile(values: Any, q: float) -> float:
    import numpy as np

    return float(np.quantile(values, q))


# -- per-system and discovery figures ------------------------------------------------------------


def system_figures(
    entries: Sequence[PoolEntry], grades: Mapping[str, int], rel_threshold: int = 1
) -> dict[str, SystemFigures]:
    """Per system (by name): judged@k, relevant found within the pool depth, and unique relevant
    (found by no other system: Zobel's leave-one-system-out)."""
    ranks: dict[str, dict[str, int]] = {}
    for e in entries:
        if e.stratum != POOL_STRATUM:
            continue
        for p in e.provenance:
            held = ranks.setdefault(p.system, {})
            held[e.doc_id] = min(p.rank, held.get(e.doc_id, p.rank))
    relevant = {d for d, g in grades.items() if g >= rel_threshold}
    found_by: dict[str, set[str]] = {s: set(r) & relevant for s, r in ranks.items()}
    out: dict[str, SystemFigures] = {}
    for system, held in sorted(ranks.items()):
        judged_at: dict[int, float | None] = {}
        for k in KS:
            top = [d for d, r in held.items() if r <= k]
            judged_at[k] = sum(d in grades for d in top) / len(top) if top else None
        others = set().union(*(found_by[o] for o in found_by if o != system))
        out[system] = SystemFigures(
            judged_at, len(found_by[system]), len(found_by[system] - others)
        )
    return out


def discovery_curve(
    entries: Sequence[PoolEntry], grades: Mapping[str, int], rel_threshold: int = 1
) -> list[int]:
    """Relevant found after each judgment, judged items taken in queue order."""
    curve: list[int] = []
    found = 0
    for e in sorted(entries, key=lambda e: e.position):
        if e.doc_id in grades:
            found += grades[e.doc_id] >= rel_threshold
            curve.append(found)
    return curve


def last_quarter_share(curve: Sequence[int]) -> float | None:
    """Share of the relevant found in the last quarter of the judgments: high means the queue
    was still finding relevant documents when it ended."""
    if not curve or curve[-1] == 0:
        return None
    cut = len(curve) - math.ceil(len(curve) / 4)
    before = curve[cut - 1] if cut > 0 else 0
    return (curve[-1] - before) / curve[-1]


# -- the summary ---------------------------------------------------------------------------------


def summarize(queries: Mapping[str, QueryFigures], corpus_size: int) -> CoverageSummary:
    """Across queries: counts by status, totals, mean and median completeness, system means;
    `est_rel` and the completeness figures over the measured queries (which it counts)."""
    rows = list(queries.values())
    measured = [r for r in rows if r.est_rel is not None]
    return CoverageSummary(
        queries=len(rows),
        complete=sum(r.status == Status.COMPLETE for r in rows),
        incomplete=sum(r.status == Status.INCOMPLETE for r in rows),
        unmeasured=sum(r.status == Status.UNMEASURED for r in rows),
        pool=sum(r.pool for r in rows),
        judged=sum(r.judged for r in rows),
        relevant=sum(r.relevant for r in rows),
        corpus_size=corpus_size,
        est_rel=_sum_or_none(r.est_rel for r in rows),
        mean_completeness=_mean(r.completeness for r in rows),
        median_completeness=_median(r.completeness for r in rows),
        mean_completeness_low=_mean(r.completeness_low for r in rows),
        mean_label_coverage=_mean(r.label_coverage for r in rows),
        mean_last_quarter_share=_mean(r.last_quarter_share for r in rows),
        systems=_system_totals(rows),
        measured=len(measured),
        relevant_measured=sum(r.relevant for r in measured),
    )


def _system_totals(rows: Sequence[QueryFigures]) -> dict[str, SystemFigures]:
    """Each system across the queries it pooled for: mean judged@k, summed counts."""
    held: dict[str, list[SystemFigures]] = {}
    for r in rows:
        for name, figures in r.systems.items():
            held.setdefault(name, []).append(figures)
    return {
        name: SystemFigures(
            {k: _mean(f.judged_at.get(k) for f in per_query) for k in KS},
            sum(f.relevant or 0 for f in per_query),
            sum(f.unique_relevant or 0 for f in per_query),
        )
        for name, per_query in sorted(held.items())
    }


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _median(values: Iterable[float | None]) -> float | None:
    kept = sorted(v for v in values if v is not None)
    if not kept:
        return None
    mid = len(kept) // 2
    return kept[mid] if len(kept) % 2 else (kept[mid - 1] + kept[mid]) / 2


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) if kept else None
