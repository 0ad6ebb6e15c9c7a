"""How many more judgments a query needs: to be certified, if the relevance model is right
(the forecast behind 'approx. N to certify' in coverage and the app), and to have an estimate at
all (the policy's own sequence of picks, run ahead); and how many its frame has left."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from workbench.core.adaptive.estimate import CandidateTotal, SampledTotal
from workbench.core.adaptive.picking import estimate_need, kind_behind
from workbench.core.adaptive.records import PolicyConfig, QueryRecord
from workbench.core.adaptive.rest import RestSample
from workbench.core.coverage.status import is_complete, is_measured, rest_seen
from workbench.core.interval_level import Z


class AdaptiveSession(Protocol):
    """What the forecasts read of the policy's session (`policy.AdaptiveSession`)."""

    config: PolicyConfig
    queries: Mapping[str, QueryRecord]


    def probabilities(self, query_id: str) -> Any: ...
    def candidates_total(self, query_id: str) -> CandidateTotal: ...
    def rest_sample(self, query_id: str, for_fit: bool = False) -> RestSample: ...


def more_to_certify(session: AdaptiveSession, query_id: str, total: SampledTotal) -> int | None:
    """Judgments until certified if the model is right, in the policy's shares: feedback
    and candidate draws find the likeliest unjudged candidates (their probabilities add to
    found); the candidates' sampling variance falls with their draws, the unjudged ones'
    Bernoulli variance with what is left; the rest's variance falls with its draws and its
    found grows at its estimated rate; the interval's upper end is also the model's own view of
    the unjudged candidates (as in `estimate.combine`). Where the model sees no end within the
    frame but the frame holds the whole rest of the corpus (its reserve is every passage outside
    the candidates), judging all of it knows |Rel| exactly, so all that is left is the figure.
    None when the frame (holding a sample of the rest only) or the cap runs out first."""
    import numpy as np

    if total.est is None or total.high is None:
        return None
    q = session.queries[query_id]
    frame = q.frame
    p = session.probabilities(frame.query_id)[: frame.candidates]
    unjudged = [i for i in range(frame.candidates) if i not in q.grades]
    gains = np.sort(p[unjudged])[::-1] if unjudged else np.zeros(0)
    reserve_left = frame.reserve_size - sum(1 for i in q.grades if i >= frame.candidates)
    everything = left = len(gains) + reserve_left
    if session.config.max_per_query is not None:
        left = min(left, session.config.max_per_query - len(q.grades))
    rest_share = session.config.rest_share if reserve_left > 0 else 0.0
    cand = session.candidates_total(frame.query_id)
    sample = session.rest_sample(frame.query_id)
    bern = np.cumsum((gains * (1 - gains))[::-1])[::-1] if len(gains) else np.zeros(1)
    expected = np.cumsum(gains[::-1])[::-1] if len(gains) else np.zeros(1)
    rest_est = max(total.est - max(cand.est, cand.found), 0.0)
    rest_rate = max(total.est - cand.est, 0.0) / max(frame.rest_size, 1)
    found = float(total.found)
    rest_found = 0.0
    picked = 0
    for m in range(1, left + 1):
        if picked < len(gains) and (m * (1 - rest_share)) >= picked + 1:
            found += float(gains[picked])
            picked += 1
        else:
            rest_found += rest_rate
        draws_c = cand.draws + m * session.config.draw_share
        draws_r = sample.judged + m * rest_share
        sampling = total.candidate_spread * cand.draws / max(draws_c, 1e-9)
        left_bern = float(bern[picked]) if picked < len(bern) else 0.0
        rest = total.rest_spread * max(sample.judged, 1) / max(draws_r, 1e-9)
        high = total.est + Z * math.sqrt(max(sampling, 0.0) + left_bern + rest)
        # The interval's other side (estimate.combine's hull): the model's Poisson view of the
        # unjudged candidates, centred where it started, its spread what is left unjudged.
        left_expected = float(expected[picked]) if picked < len(expected) else 0.0
        centre = total.found + float(expected[0]) + rest_est
        high = max(high, centre + Z * math.sqrt(left_expected + rest))
        if high > 0 and is_complete((found + rest_found) / high, session.config.target):
            return m
    if 0 < left == everything and all(len(b.members) >= b.size for b in frame.bands):
        return left  # every passage judged: |Rel| known, completeness 1
    return None


def frame_left(session: AdaptiveSession, query_id: str) -> int:
    """The passages of the query's frame not judged yet, within the cap: what judging can still
    do for it."""
    q = session.queries[query_id]
    left = len(q.frame.doc_ids) - len(q.grades)
    cap = session.config.max_per_query
    return max(0, left if cap is None else min(left, cap - len(q.grades)))


def has_estimate(session: AdaptiveSession, query_id: str) -> bool:
    """Whether the query has what `estimate.combine` needs for an estimate now (two judged draws
    among its candidates, or every candidate judged; a judged reserve passage in the study
    unless its frame has no rest), without making one."""
    q = session.queries[query_id]
    frame = q.frame
    judged = sum(1 for i in q.grades if i < frame.candidates)
    exact = judged == frame.candidates and bool(frame.candidates or q.grades)
    return is_measured(exact, q.candidate_draws, rest_seen(bool(frame.bands), q.reserve_seen))


def more_to_estimate(session: AdaptiveSession, query_id: str, measured: bool) -> int | None:
    """Judgments of this query until it has an estimate: 0 when it has one (`measured`); else
    the policy's picks run ahead (a draw waiting first, then the fair start, then what the
    estimate still needs (`picking.estimate_need`), then the kinds in their shares, as
    `picking.kind_behind` chooses them) until `estimate.combine` has what it needs: two judged
    draws among the candidates (or every candidate judged) and a judged reserve passage of its
    own, unless the frame has no rest. None when the frame or the cap runs out first."""
    if measured:
        return 0
    q = session.queries[query_id]
    frame = q.frame
    candidates = sum(1 for i in range(frame.candidates) if i not in q.grades)
    reserve = frame.reserve_size - sum(1 for i in q.grades if i >= frame.candidates)
    draws = q.candidate_draws
    rest_known = rest_seen(bool(frame.bands), q.reserve_seen)
    judged_any = bool(frame.candidates or q.grades)
    fair = [i for i in frame.fair_order if i not in q.grades]
    pending = q.pending
    kinds = dict(q.kinds)
    for m in range(1, frame_left(session, query_id) + 1):
        if pending is not None:
            kind, pending = ("rest" if pending.reserve else "draw"), None
        elif fair:
            fair.pop(0)
            kind = "fair"
        elif candidates or reserve:
            need = estimate_need(session.config, draws, candidates > 0, reserve > 0, rest_known)
            kind = need or kind_behind(session.config, kinds, bool(candidates), bool(reserve))
            kinds[kind] = kinds.get(kind, 0) + 1
        else:
            return None
        judged_any = True  # a query no system ranked: one judged reserve passage does it
        if kind == "rest":
            reserve -= 1
            rest_known = True
        else:
            candidates -= 1
            draws += kind == "draw"
        exact = candidates == 0 and judged_any
        if (exact or draws >= 2) and rest_known:
            return m
    return None


def to_first_figure(session: AdaptiveSession, query_ids: Sequence[str]) -> int | None:
    """Judgments until every query of `query_ids` has an estimate (the study's first figure):
    the sum of their forecasts (`more_to_estimate`; each query's needs are its own). None when
    some query's frame or cap runs out first."""
    total = 0
    for query_id in query_ids:
        more = more_to_estimate(session, query_id, has_estimate(session, query_id))
        if more is None:
            return None
        total += more
    return total
