"""How many more judgments a query needs to be certified, if the relevance model is right:
the forecast behind 'approx. N to certify' in coverage and the app."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from workbench.core.adaptive.estimate import SampledTotal

if TYPE_CHECKING:
    from workbench.core.adaptive.policy import AdaptiveSession


def more_to_certify(session: AdaptiveSession, query_id: str, total: SampledTotal) -> int | None:
    """Judgments until certified if the model is right, in the policy's shares: feedback
    and candidate draws find the likeliest unjudged candidates (their probabilities add to
    found); the candidates' sampling variance falls with their draws, the unjudged ones'
    Bernoulli variance with what is left; the rest's variance falls with its draws and its
    found grows at its estimated rate; the interval's upper end is also the model's own view of
    the unjudged candidates (as in `estimate.combine`). None when the frame or the cap runs out
    first."""
    import numpy as np

    if total.est is None or total.high is None:
        return None
    q = session.queries[query_id]
    frame = q.frame
    p = session.probabilities(frame.query_id)[: frame.candidates]
    unjudged = [i for i in range(frame.candidates) if i not in q.grades]
    gains = np.sort(p[unjudged])[::-1] if unjudged else np.zeros(0)
    reserve_left = frame.reserve_size - sum(1 for i in q.grades if i >= frame.candidates)
    left = len(gains) + reserve_left
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
        high = total.est + 1.96 * math.sqrt(max(sampling, 0.0) + left_bern + rest)
        # The interval's other side (estimate.combine's hull): the model's Poisson view of the
        # unjudged candidates, centred where it started, its spread what is left unjudged.
        left_expected = float(expected[picked]) if picked < len(expected) else 0.0
        centre = total.found + float(expected[0]) + rest_est
        high = max(high, centre + 1.96 * math.sqrt(left_expected + rest))
        if high > 0 and (found + rest_found) / high >= session.config.target:
            return m
    return None
