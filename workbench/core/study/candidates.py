"""The relevant not yet found among each query's candidates, for the study's joint draws: two
estimators, each in its half of the draws, so that the study's interval (the hull of the two
halves' intervals: `intervals`) holds where either does (`missing_draws`).

Each query's Des Raj estimate e of its missing count M is unbiased, with a standard error s
that is large and uncertain while the query has few random draws. Turned into draws of M >= 0
(bench/study_sim.py, bm25 and dense, six seeds of cacm, cisi and npl, seed 3 of cranfield):

- a gamma with e's mean and variance says exactly none missing wherever e <= 0, as after a few
  draws that all missed likely candidates (58% of cacm's queries at 30 judgments per query,
  where its range held the true count for 42% of queries): dropped;
- e's normal cut at 0 (`_alone`: the per-query interval's own distribution, which held the
  count for 96% of cacm's queries) adds about 0.4 s to every query whose e is near 0: on
  cranfield, whose queries have few relevant passages, every mean's interval fell below the
  truth at every budget (bm25 R@10 at 150 per query [0.322, 0.378], true 0.381), while on cisi
  (many relevant per query, half of them outside the candidates) it held;
- an empirical Bayes posterior (`_pooled`: the study's queries' counts spread as G, a grid NPMLE
  by EM, Efron's g-modeling without its smoothing, refitted on resampled queries so that its
  own uncertainty is kept; each query's draws from G(m) N(e; m, s^2)) shrinks a query whose
  draws all missed toward what the others show and keeps a collection of small queries small:
  cranfield held 14 of 16 means, npl all; but it shrinks cisi's large queries too, and cisi's
  means at 60 and 100 per query fell above the truth.

Neither alone holds everywhere; their hull does where either does, at the cost of width where
they disagree. Below `MIN_QUERIES` queries there is nothing to pool: both halves are the
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


def missing_draws(
    evidence: Mapping[str, Evidence], count: int, rng: Any, models: Any = None
) -> dict[str, Any]:
    """Per query, `count` whole-count draws of its candidates' missing relevant; `models` (per
    draw, 0 or 1) says which estimator each draw is from: 0 the pooled posterior, 1 each query
    alone (None: all pooled)."""
    import numpy as np

    names = list(evidence)
    if not names:
        return {}
    e = np.array([evidence[q].estimate for q in names])
    s = np.array([max(evidence[q].error, 1e-6) for q in names])
    cap = np.array([max(evidence[q].unjudged, 0) for q in names], dtype=float)
    alone = _alone(e, s, cap, count, rng)
    pooled = alone if len(names) < MIN_QUERIES else _pooled(e, s, cap, count, rng)
    if models is not None:
        pooled = np.where(np.asarray(models)[None, :] == 1, alone, pooled)
    return {q: np.floor(pooled[j] + rng.random(count)) for j, q in enumerate(names)}


def _alone(e: Any, s: Any, cap: Any, count: int, rng: Any) -> Any:
    """Each query's normal cut at 0 (and at its unjudged candidates): queries x draws."""
    import numpy as np

    drawn = rng.normal(e[:, None], s[:, None], (len(e), count))
    return np.minimum(np.maximum(drawn, 0.0), cap[:, None])


def _pooled(e: Any, s: Any, cap: Any, count: int, rng: Any) -> Any:
    """Each query's empirical Bayes posterior under the NPMLE of the queries' spread, refitted
    on resampled queries (`REPLICATES`, each serving its share of the draws): queries x draws."""
    import numpy as np

    top = float(min(cap.max(), max(np.max(e + 4 * s), 1.0)))
    grid = np.linspace(0.0, top, min(GRID, int(top) + 1))
    step = grid[1] - grid[0] if len(grid) > 1 else 0.0
    like = np.exp(-0.5 * ((e[:, None] - grid[None, :]) / s[:, None]) ** 2) / s[:, None]
    like = np.where(grid[None, :] <= cap[:, None] + step, like, 0.0) + 1e-300
    out = np.empty((len(e), count))
    bounds = np.linspace(0, count, REPLICATES + 1).astype(int)
    for r in range(REPLICATES):
        rows = np.arange(len(e)) if r == 0 else rng.integers(0, len(e), len(e))
        posterior = like * _npmle(like[rows])
        cdf = np.cumsum(posterior, axis=1)
        lo, hi = bounds[r], bounds[r + 1]
        u = rng.random((len(e), hi - lo)) * cdf[:, -1:]
        at = np.minimum((cdf[:, None, :] < u[:, :, None]).sum(axis=2), len(grid) - 1)
        value = grid[at] + step * (rng.random((len(e), hi - lo)) - 0.5)
        out[:, lo:hi] = np.clip(value, 0.0, cap[:, None])
    return out


def _npmle(like: Any) -> Any:
    """The grid weights that maximise the likelihood of the rows (EM from uniform)."""
    import numpy as np

    weights = np.full(like.shape[1], 1.0 / like.shape[1])
    for _ in range(ITERATIONS):
        posterior = like * weights
        posterior /= posterior.sum(axis=1, keepdims=True)
        weights = posterior.mean(axis=0)
    return weights
