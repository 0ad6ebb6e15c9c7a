"""How many relevant documents one query has in all: posterior-predictive draws under the rank
model (`estimate_missing`), and the design-based Horvitz-Thompson estimate beside them."""

from __future__ import annotations

from typing import Any

from workbench.core.coverage.observations import UNSAMPLED, QueryObs, query_covariate, stratum_order
from workbench.core.coverage.rank_model import RankModel, grid_loglik, grid_rates, log_prior
from workbench.core.random_streams import coverage_stream


def horvitz_thompson(obs: QueryObs) -> float:
    """Design-based estimate of |Rel|: judged relevant plus, per stratum, the sample rate times
    the stratum's unjudged documents (unbiased under the stratified design)."""
    total = float(obs.pool_relevant + obs.extra_relevant)
    if obs.pool_judged < obs.pool_size and obs.pool_judged:
        total += (obs.pool_size - obs.pool_judged) * obs.pool_relevant / obs.pool_judged
    for s in obs.strata:
        if s.judged:
            total += s.population * s.relevant / s.judged
    return total


def estimate_missing(
    obs: QueryObs,
    model: RankModel | None,
    draws: int = 4000,
    seed: int = 0,
) -> Any:
    """Posterior-predictive draws of |Rel| for one query (a numpy array of `draws` totals): the
    judged relevant plus, per stratum, a binomial count among its unjudged documents."""
    import numpy as np

    rng = coverage_stream(seed, obs.query_id)
    total = np.full(draws, float(obs.judged_relevant))
    pool_unjudged = obs.pool_size - obs.pool_judged
    if pool_unjudged > 0:
        rate = rng.beta(0.5 + obs.pool_relevant, 0.5 + obs.pool_judged - obs.pool_relevant, draws)
        total += rng.binomial(pool_unjudged, rate)
    open_strata = [s for s in obs.strata if s.unjudged > 0]
    if not open_strata:
        return total
    if model is not None:
        names = [s.name if s.name != UNSAMPLED else _deepest(model, obs) for s in open_strata]
        rates = _model_rates(model, obs, names, draws, rng)
    else:
        rates = np.full((draws, len(open_strata)), np.nan)
    for column, s in enumerate(open_strata):
        rate = rates[:, column]
        if np.isnan(rate).any():
            rate = rng.beta(0.5 + s.relevant, 0.5 + s.judged - s.relevant, draws)
        total += rng.binomial(s.unjudged, np.clip(rate, 0.0, 1.0))
    return total


def _model_rates(model: RankModel, obs: QueryObs, names: list[str], draws: int, rng: Any) -> Any:
    """draws x strata relevance rates: each block of draws uses one plausible fit (so the
    interval carries the fit's own uncertainty as well as the query's) and the query's
    (level, steepness) drawn from its grid posterior under that fit."""
    import numpy as np

    fits = model.draws or [model]
    weights = np.array([fit.weight for fit in fits])
    picks = rng.choice(len(fits), size=draws, p=weights / weights.sum())
    rates = np.empty((draws, len(names)))
    for index, fit in enumerate(fits):
        block = np.flatnonzero(picks == index)
        if len(block):
            points = _draw_levels(fit, obs, len(block), rng)
            rates[block] = grid_rates(fit, names)[points]
    return rates


def _draw_levels(model: RankModel, obs: QueryObs, draws: int, rng: Any) -> Any:
    """Draws of the query's (level u, steepness) from its exact grid posterior, as indices of
    the grid's points."""
    import numpy as np

    names = [s.name for s in obs.strata if s.judged and s.name != UNSAMPLED]
    relevant = np.array([[s.relevant for s in obs.strata if s.name in names]], dtype=float)
    judged = np.array([[s.judged for s in obs.strata if s.name in names]], dtype=float)
    covariate = [query_covariate(obs)]
    log_post = (grid_loglik(model, names, relevant, judged) + log_prior(model, covariate))[0]
    weights = np.exp(log_post - log_post.max())
    return rng.choice(len(weights), size=draws, p=weights / weights.sum())


def _deepest(model: RankModel, obs: QueryObs) -> str:
    """Documents in no sampled stratum are treated like 'rest' when the model has it, else like
    the deepest stratum sampled."""
    candidates = [s.name for s in obs.strata if s.name != UNSAMPLED]
    if "rest" in model.offsets:
        return "rest"
    return max(candidates, key=stratum_order) if candidates else UNSAMPLED
