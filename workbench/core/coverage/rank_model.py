"""The relevance-vs-rank model (`RankModel`) and its per-query grid: the rate of each stratum at
each (level, steepness) point, the likelihood of a query's judged samples there and the prior."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.coverage.observations import band_of

KNOT_RANKS = (50, 100, 300, 1000)
"""Where the shared relevance-vs-rank curve may bend (log scale), besides the shallowest rank."""
U_GRID = (-16.0, 6.0, 151)
"""The grid of query levels u on which each query's posterior is computed exactly."""
BAND_POINTS = 48
"""Evenly spaced ranks that stand for a band when averaging the rate over it."""
LEVEL_DF: float | None = 4.0
"""Query levels follow a Student-t (4 df) around the prior mean, so an unusual query is not
pulled all the way to the others (None: normal)."""
SLOPE_NODES = 5
"""Gauss-Hermite nodes over the per-query steepness s_q."""
MODEL_FORMULA = (
    "logit p = u_q + exp(s_q) f(log rank); u_q ~ t4(mu + gamma * x_q, tau), s_q ~ N(0, slope_sd)"
)
"""The model in one line (the coverage JSON's `model.model`)."""


@dataclass
class RankModel:
    """One fit of the model (see the package docstring): the shared curve f (piecewise linear
    in log rank through `knots`, values `curve`), the offsets of non-band strata, the level
    prior (mu, gamma, tau) and the steepness spread `slope_sd`."""

    knots: list[float]
    curve: list[float]
    offsets: dict[str, float]
    mu: float
    gamma: float
    tau: float
    queries: int
    draws: list[RankModel] = field(default_factory=list, repr=False)
    """Plausible alternatives to this fit, drawn from the hyperparameters' posterior, each with
    its importance weight (empty: plug the fit in as if it were known)."""
    weight: float = 1.0
    slope_sd: float = 0.0
    """Spread of the per-query steepness s_q ~ N(0, slope_sd)."""
    cache: dict = field(default_factory=dict, repr=False, compare=False)
    """Grid rate tables by stratum names (the model is not changed once fitted)."""

    def band_rates(
        self, bands: Mapping[str, tuple[int, int]], u: Any, steepness: Any = 1.0
    ) -> dict[str, Any]:
        """Mean relevance rate over each band's ranks (docs spread evenly over them), per u."""
        import numpy as np

        out = {}
        steep = np.broadcast_to(np.asarray(steepness, dtype=float), np.shape(u))[:, None]
        for name, (low, high) in bands.items():
            points = min(BAND_POINTS, high - low + 1)
            log_rank = np.log(low + (high - low) * (np.arange(points) + 0.5) / points)
            shape = np.interp(log_rank, self.knots, self.curve)
            out[name] = expit(np.asarray(u)[:, None] + steep * shape[None, :]).mean(axis=1)
        return out

    def nodes(self) -> tuple[Any, Any]:
        """Quadrature over the per-query steepness: (multipliers exp(s_k), log weights)."""
        import numpy as np

        z, log_w = _hermite_nodes()
        return np.exp(self.slope_sd * z), log_w

    def as_dict(self) -> dict[str, Any]:
        """The fit as plain data (the `model` of the coverage JSON)."""
        return {
            "model": MODEL_FORMULA,
            "knot_ranks": [round(math.exp(k)) for k in self.knots],
            "curve": self.curve,
            "offsets": self.offsets,
            "mu": self.mu,
            "gamma": self.gamma,
            "tau": self.tau,
            "slope_sd": self.slope_sd,
            "queries": self.queries,
            "parameter_draws": len(self.draws),
        }


@functools.cache
def _hermite_nodes() -> tuple[Any, Any]:
    """Gauss-Hermite nodes and log weights for a standard normal."""
    import numpy as np

    z, w = np.polynomial.hermite_e.hermegauss(SLOPE_NODES)
    return z, np.log(w / w.sum())


def expit(values: Any) -> Any:
    """The logistic function, clipped so it never overflows."""
    import numpy as np

    return 1.0 / (1.0 + np.exp(-np.clip(values, -40, 40)))


def u_grid() -> Any:
    """The query levels u of the per-query grid."""
    import numpy as np

    return np.linspace(*U_GRID)


def stratum_rates(model: RankModel, names: Sequence[str], u: Any, steepness: Any = 1.0) -> Any:
    """len(u) x len(names) matrix of relevance rates; unknown non-band strata get NaN."""
    import numpy as np

    bands = {n: band_of(n) for n in names}
    rates = model.band_rates({n: b for n, b in bands.items() if b is not None}, u, steepness)
    columns = []
    for name in names:
        if bands[name] is not None:
            columns.append(rates[name])
        elif name in model.offsets:
            columns.append(expit(np.asarray(u) + np.asarray(steepness) * model.offsets[name]))
        else:
            columns.append(np.full(len(u), np.nan))
    return np.stack(columns, axis=1) if columns else np.zeros((len(u), 0))


def _grid_points(model: RankModel) -> tuple[Any, Any]:
    """The (level u, steepness) points of the per-query grid, steepness-major."""
    import numpy as np

    grid = u_grid()
    steep, _ = model.nodes()
    return np.tile(grid, len(steep)), np.repeat(steep, len(grid))


def grid_rates(model: RankModel, names: Sequence[str]) -> Any:
    """grid points x strata relevance rates (cached on the model)."""
    key = tuple(names)
    if key not in model.cache:
        levels, steepness = _grid_points(model)
        model.cache[key] = stratum_rates(model, names, levels, steepness)
    return model.cache[key]


def grid_loglik(model: RankModel, names: Sequence[str], relevant: Any, judged: Any) -> Any:
    """queries x grid log-likelihood of the judged samples at each (level, steepness) point."""
    import numpy as np

    key = ("log", tuple(names))
    if key not in model.cache:
        rates = np.clip(grid_rates(model, names), 1e-12, 1 - 1e-12)
        rates = np.nan_to_num(rates, nan=0.5)
        model.cache[key] = (np.log(rates).T, np.log1p(-rates).T)
    log_rate, log_miss = model.cache[key]
    return relevant @ log_rate + (judged - relevant) @ log_miss


def log_prior(model: RankModel, covariate: Any) -> Any:
    """queries x grid log prior density of (level, steepness node)."""
    import numpy as np

    grid = u_grid()
    center = model.mu + model.gamma * np.asarray(covariate)[:, None]
    z = (grid[None, :] - center) / model.tau
    if LEVEL_DF is None:
        level = -0.5 * z**2 - math.log(model.tau)
    else:
        level = -(LEVEL_DF + 1) / 2 * np.log1p(z**2 / LEVEL_DF) - math.log(model.tau)
    _, log_weights = model.nodes()
    return (level[:, None, :] + log_weights[None, :, None]).reshape(len(level), -1)
