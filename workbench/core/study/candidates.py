"""The relevant not yet found among each query's candidates, for the study's joint draws: an
empirical Bayes posterior over the queries (`missing_draws`).

Each query's Des Raj estimate e of its missing count M is unbiased, with a standard error s
that is large and uncertain while the query has few random draws. Two ways of turning it into
draws of M >= 0 each failed somewhere (bench/study_sim.py, bm25 and dense, seeds 0-2 to choose,
cranfield seed 3 held out):

- a gamma with e's mean and variance says exactly none missing wherever e <= 0, as after a few
  draws that all missed likely candidates (58% of cacm's queries at 30 judgments per query,
  where its range held the true count for 42% of queries); the study intervals missed cisi's
  mean nDCG@10 at 30 and 60 per query and npl's deltas at 100 and 150;
- e's normal cut at 0 (the per-query interval's own distribution, which held the count for 96%
  of cacm's queries) adds about 0.4 s to every query whose e is near 0: on cranfield, whose
  queries have few relevant passages, every mean's interval fell below the truth at every
  budget (bm25 R@10 at 150 per query [0.322, 0.378], true 0.381).

The queries of one study tell how their missing counts spread: M_q ~ G, e_q ~ N(M_q, s_q^2).
G is estimated on a grid by maximum likelihood (the NPMLE, by EM: Efron's g-modeling without
its smoothing), and each query's draws come from its posterior G(m) N(e_q; m, s_q^2): a query
whose draws all missed is shrunk toward what the study's other queries show, not to zero, and
a collection of small queries keeps its counts small. G rests on the study's queries; its own
uncertainty is kept by refitting it on the queries resampled (`REPLICATES` bootstrap fits, each
serving its share of the draws). Below `MIN_QUERIES` queries there is nothing to pool: the
normal cut at 0. Pure: plain data in, arrays out (numpy, imported lazily)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIN_QUERIES = 5
"""Queries (with a Des Raj estimate) below which no prior is pooled from them."""
REPLICATES = 10
"""Bootstrap refits of the prior G."""
ITERATIONS = 150
"""EM steps per fit."""
GRID = 120
"""Most points of the grid G lives on (spaced evenly up to the largest plausible count)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """One query's Des Raj estimate of its candidates' missing relevant (`estimate`, may be below
    0), its standard error (t-widened for the few draws it rests on), and the unjudged candidates
    (no more can be missing)."""

    estimate: float
    error: float
    unjudged: int


def missing_draws(evidence: Mapping[str, Evidence], count: int, rng: Any) -> dict[str, Any]:
    """Per query, `count` whole-count draws of its candidates' missing relevant."""
    import numpy as np

    names = list(evidence)
    if not names:
        return {}
    e = np.array([evidence[q].estimate for q in names])
    s = np.array([max(evidence[q].error, 1e-6) for q in names])
    cap = np.array([max(evidence[q].unjudged, 0) for q in names], dtype=float)
    if len(names) < MIN_QUERIES:
        drawn = rng.normal(e[:, None], s[:, None], (len(names), count))
        drawn = np.minimum(np.maximum(drawn, 0.0), cap[:, None])
        return {q: np.floor(drawn[j] + rng.random(count)) for j, q in enumerate(names)}
    top = float(min(cap.max(), max(np.max(e + 4 * s), 1.0)))
    grid = np.linspace(0.0, top, min(GRID, int(top) + 1))
    step = grid[1] - grid[0] if len(grid) > 1 else 0.0
    like = np.exp(-0.5 * ((e[:, None] - grid[None, :]) / s[:, None]) ** 2) / s[:, None]
    like = np.where(grid[None, :] <= cap[:, None] + step, like, 0.0) + 1e-300
    out = {q: np.empty(count) for q in names}
    bounds = np.linspace(0, count, REPLICATES + 1).astype(int)
    for r in range(REPLICATES):
        rows = np.arange(len(names)) if r == 0 else rng.integers(0, len(names), len(names))
        prior = _npmle(like[rows])
        posterior = like * prior
        posterior /= posterior.sum(axis=1, keepdims=True)
        lo, hi = bounds[r], bounds[r + 1]
        cdf = np.cumsum(posterior, axis=1)
        for j, q in enumerate(names):
            at = np.searchsorted(cdf[j], rng.random(hi - lo) * cdf[j, -1])
            value = grid[np.minimum(at, len(grid) - 1)] + step * (rng.random(hi - lo) - 0.5)
            out[q][lo:hi] = np.clip(value, 0.0, cap[j])
    return {q: np.floor(v + rng.random(count)) for q, v in out.items()}


def _npmle(like: Any) -> Any:
    """The grid weights that maximise the likelihood of the rows (EM from uniform)."""
    import numpy as np

    weights = np.full(like.shape[1], 1.0 / like.shape[1])
    for _ in range(ITERATIONS):
        posterior = like * weights
        posterior /= posterior.sum(axis=1, keepdims=True)
        weights = posterior.mean(axis=0)
    return weights
