"""Fitting the relevance-vs-rank model to every query's judged samples: the posterior mode of
the hyperparameters (marginal likelihood over each query's grid, times weak priors), then
draws of them that carry the fit's own uncertainty."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.coverage.laplace import laplace_draws
from workbench.core.coverage.observations import (
    UNSAMPLED,
    QueryObs,
    band_of,
    query_covariate,
    stratum_order,
)
from workbench.core.coverage.optimizer import Objective, nelder_mead
from workbench.core.coverage.rank_model import (
    KNOT_RANKS,
    U_GRID,
    RankModel,
    grid_loglik,
    log_prior,
)

MIN_QUERIES_FOR_SLOPE = 8
"""Below this many sampled queries, the query level ignores the pool covariate."""
PARAMETER_DRAWS = 100
"""How many draws of the fitted hyperparameters the per-query estimates mix over."""


@dataclass(frozen=True)
class _Layout:
    """How a hyperparameter vector maps to a model: theta = [mu, gamma, log tau, the log
    steepness of each curve segment..., the offset of each non-band stratum..., log slope_sd]."""

    knots: list[float]
    others: list[str]
    use_gamma: bool
    x_center: float
    queries: int

    def start(self) -> list[float]:
        return [-4.0, 0.5, 0.0] + [0.0 for _ in self.knots[1:]] + [-3.0] * len(self.others) + [-1.2]

    def model(self, theta: Any) -> RankModel:
        """The model theta stands for (mu centred on the mean covariate)."""
        mu, gamma, log_tau = theta[0], theta[1] if self.use_gamma else 0.0, theta[2]
        rest = list(theta[3:])
        curve = [0.0]
        for k, raw in enumerate(rest[: len(self.knots) - 1], start=1):
            # Relevance never rises with rank: each segment's slope is -exp(raw) per log-rank unit.
            curve.append(curve[-1] - math.exp(min(raw, 5.0)) * (self.knots[k] - self.knots[k - 1]))
        offsets = {
            n: float(v) for n, v in zip(self.others, rest[len(self.knots) - 1 : -1], strict=True)
        }
        tau = math.exp(min(max(log_tau, -3.0), 2.0))
        slope_sd = math.exp(min(max(rest[-1], -5.0), 1.0))
        model = RankModel(
            self.knots,
            curve,
            offsets,
            float(mu),
            float(gamma),
            tau,
            self.queries,
            slope_sd=slope_sd,
        )
        model.mu -= model.gamma * self.x_center
        return model


def fit_rank_model(observations: Iterable[QueryObs]) -> RankModel | None:
    """The posterior mode of the hyperparameters (weak priors keep it finite with few queries or
    no hits), with weighted draws around it. None when no query has a judged sample."""
    sampled = [o for o in observations if o.sample_judged]
    if not sampled:
        return None
    names, relevant, judged, covariate = _sample_matrix(sampled)
    layout = _layout(names, covariate, len(sampled))
    objective = _objective(layout, names, relevant, judged, covariate)
    start = layout.start()
    theta = nelder_mead(objective, start, iters=150 * len(start))
    model = layout.model(theta)
    if not layout.use_gamma:
        theta = list(theta)
        theta[1] = 0.0
    model.draws.extend(_alternatives(objective, theta, layout))
    return model


def _sample_matrix(observations: Sequence[QueryObs]) -> tuple[list[str], Any, Any, Any]:
    """The judged strata's names, queries x strata relevant and judged counts, covariates."""
    import numpy as np

    names = sorted(
        {s.name for o in observations for s in o.strata if s.judged and s.name != UNSAMPLED},
        key=stratum_order,
    )
    index = {n: i for i, n in enumerate(names)}
    relevant = np.zeros((len(observations), len(names)))
    judged = np.zeros((len(observations), len(names)))
    for row, obs in enumerate(observations):
        for s in obs.strata:
            if s.name in index:
                relevant[row, index[s.name]] = s.relevant
                judged[row, index[s.name]] = s.judged
    covariate = np.array([query_covariate(o) for o in observations])
    return names, relevant, judged, covariate


def _layout(names: Sequence[str], covariate: Any, queries: int) -> _Layout:
    """Knots from the shallowest to the deepest sampled rank; gamma only with enough queries."""
    import numpy as np

    bands = [band for band in map(band_of, names) if band is not None]
    if bands:
        low = min(b[0] for b in bands)
        high = max(b[1] for b in bands)
        knot_ranks = (
            [low] + [k for k in KNOT_RANKS if low < k < high] + ([high] if high > low else [])
        )
    else:
        knot_ranks = [1]
    return _Layout(
        knots=[math.log(k) for k in knot_ranks],
        others=[n for n in names if band_of(n) is None],
        use_gamma=queries >= MIN_QUERIES_FOR_SLOPE and float(np.ptp(covariate)) > 0,
        x_center=float(covariate.mean()),
        queries=queries,
    )


def _objective(
    layout: _Layout, names: Sequence[str], relevant: Any, judged: Any, covariate: Any
) -> Objective:
    """The negative log posterior of theta: each query's likelihood summed over its grid."""
    import numpy as np

    # Queries with the same samples and covariate share one likelihood row, counted once each.
    rows, multiplicity = np.unique(
        np.column_stack([relevant, judged, covariate]), axis=0, return_counts=True
    )
    width = len(names)
    relevant_u, judged_u, covariate_u = rows[:, :width], rows[:, width : 2 * width], rows[:, -1]
    grid_step = (U_GRID[1] - U_GRID[0]) / (U_GRID[2] - 1)

    def objective(theta: Any) -> float:
        model = layout.model(theta)
        loglik = grid_loglik(model, names, relevant_u, judged_u) + log_prior(model, covariate_u)
        peak = loglik.max(axis=1, keepdims=True)
        per_row = peak[:, 0] + np.log(np.exp(loglik - peak).sum(axis=1) * grid_step)
        marginal = float(per_row @ multiplicity)
        return float(-marginal + _penalty(theta, layout.use_gamma))

    return objective


def _penalty(theta: Any, use_gamma: bool) -> float:
    """Weak priors: level near logit 2%, gamma near 0.5, tau near 1, a curve that falls gently,
    the steepness spread's log sd near log 0.3."""
    penalty = ((theta[0] + 4.0) / 4.0) ** 2 / 2 + ((theta[2]) / 1.0) ** 2 / 2
    if use_gamma:
        penalty += ((theta[1] - 0.5) / 1.0) ** 2 / 2
    penalty += sum((v / 2.0) ** 2 / 2 for v in theta[3:-1])
    penalty += ((theta[-1] + 1.2) / 1.0) ** 2 / 2
    return penalty


def _alternatives(objective: Objective, theta: Any, layout: _Layout) -> list[RankModel]:
    """The fit's posterior draws as models, each distinct draw once with its summed weight."""
    import numpy as np

    fixed = [1] if not layout.use_gamma else []
    distinct: dict[tuple, list] = {}
    for draw, weight in laplace_draws(objective, theta, fixed, PARAMETER_DRAWS):
        # Resampling repeats draws: each distinct one is kept once with their summed weight.
        held = distinct.setdefault(tuple(np.round(draw, 12)), [draw, 0.0])
        held[1] += weight
    out = []
    for draw, weight in distinct.values():
        alternative = layout.model(draw)
        alternative.weight = weight
        out.append(alternative)
    return out
