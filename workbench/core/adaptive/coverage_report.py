"""The coverage report of a store judged by the adaptive queue: the static report's figures per
query, with |Rel|, the status and what is still needed from the adaptive estimate. Here, not in
`core.coverage`, because coverage sits below the adaptive queue (which reads its observations)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from workbench.core.adaptive.frame import CANDIDATE
from workbench.core.coverage.observations import POOL_STRATUM, observe
from workbench.core.coverage.report import DEFAULT_RULE, query_figures, summarize
from workbench.core.coverage.results import CompletenessRule, CoverageReport, QueryFigures
from workbench.core.interval_level import LEVEL
from workbench.core.measures.metrics import ceiling
from workbench.core.model import PoolEntry


def adaptive_coverage_report(
    entries: Sequence[PoolEntry],
    grades: Mapping[str, Mapping[str, int]],
    corpus_size: int,
    states: Mapping[str, Any],
    *,
    query_ids: Sequence[str] | None = None,
    k: int = 10,
    thresholds: CompletenessRule = DEFAULT_RULE,
    rel_threshold: int = 1,
    outside: float | None = None,
) -> CoverageReport:
    """The coverage of a store judged by the adaptive queue: the same figures, with |Rel| and
    the status from the adaptive estimate (`states`: query -> core.adaptive QueryState, whose
    policy certifies at `thresholds.complete_at`), and for
    each query the judgments the model expects it still needs to be certified. The candidates
    count as the pool; the reserve is the one sampled stratum. `outside`: the share of the
    relevant outside the candidates (`AdaptiveSession.outside_share`). ValueError for a rule
    at another level than `LEVEL`, the adaptive estimate's (the report would claim it)."""
    if thresholds.level != LEVEL:
        raise ValueError(
            f"the adaptive estimate's intervals are at {LEVEL:.0%}, not {thresholds.level:.0%}"
        )

    by_query: dict[str, list[PoolEntry]] = {}
    for e in entries:
        pooled = replace(e, stratum=POOL_STRATUM) if e.stratum == CANDIDATE else e
        by_query.setdefault(e.query_id, []).append(pooled)
    qids = list(query_ids) if query_ids is not None else list(by_query)
    queries: dict[str, QueryFigures] = {}
    for qid in qids:
        mine, judged = by_query.get(qid, []), grades.get(qid, {})
        obs = observe(qid, mine, judged, corpus_size, rel_threshold)
        row = query_figures(obs, mine, judged, corpus_size, k, rel_threshold)
        state = states.get(qid)
        if state is not None:
            row = replace(row, to_estimate=state.to_estimate, frame_left=state.frame_left)
        if state is not None and state.total.est is not None:
            total = state.total
            row = replace(
                row,
                est_rel=total.est,
                est_rel_low=total.low,
                est_rel_high=total.high,
                completeness=total.completeness,
                completeness_low=total.completeness_low,
                completeness_high=total.completeness_high,
                ceiling_est=ceiling(k, total.est),
                status=state.status,
                more_to_certify=state.more_to_certify,
            )
        queries[qid] = row
    return CoverageReport(
        k, thresholds, queries, summarize(queries, corpus_size), None, "adaptive", outside
    )
