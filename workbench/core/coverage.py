"""How complete is the judged relevant set? Per-query pool and judging figures, per-system
contribution (Zobel's unique relevant), the discovery curve, and an estimate of the relevant
documents the pool missed, from the stratified sample judged outside it (see
workbench.core.sampling).

The estimate (see `RankModel`, `estimate_missing`): one model of relevance against rank for all
queries, logit p = u_q + exp(s_q) f(log best rank), with f a falling curve shared by everyone,
u_q a level per query centred on what its pool says (how many relevant pool docs some system
missed) and s_q a per-query steepness (some queries' relevant documents sit deep). Fitted by
marginal likelihood over all queries' judged samples (empirical Bayes: strength is borrowed
across strata and queries); the fit's own uncertainty is carried by importance draws from the
hyperparameters' posterior; then per query the exact grid posterior of (u_q, s_q) under each
drawn fit and posterior-predictive draws of the relevant count among each stratum's unjudged
documents. The 95% interval stays finite and honest when a stratum's sample holds no relevant
document. The
design-based Horvitz-Thompson estimate (unbiased, but noisy with 40 samples) is reported beside it.

Pure: plain data in, plain data out; numpy only (imported lazily).
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.metrics import ceiling
from workbench.core.model import Judgment, PoolEntry, Status

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

Objective = Callable[[Any], float]
"""A negative log posterior over a hyperparameter vector (the fit minimizes it)."""

POOL_STRATUM = "pool"
UNSAMPLED = "unsampled"
KS = (5, 10, 20)


@dataclass(frozen=True)
class CompletenessRule:
    """When a query's judged relevant set counts as complete.

    complete: completeness_low >= complete_at (the lower end of the 95% interval, so the figure
    users act on is a one-sided bound); unmeasured: fewer than min_samples judged items outside
    the pool (nothing to estimate from); incomplete: otherwise."""

    complete_at: float = 0.8
    min_samples: int = 1
    level: float = 0.95

    def as_dict(self) -> dict[str, float]:
        return {
            "complete_at": self.complete_at,
            "min_samples": self.min_samples,
            "level": self.level,
        }


# -- judgments -----------------------------------------------------------------------------------


def grades_counted(
    judgments: Iterable[Judgment], annotator: str | None = None
) -> dict[str, dict[str, int]]:
    """query -> doc -> the grade that counts. One annotator's current grades when named (any
    role, models included); else the project's resolution rule (workbench.core.resolve: adjudicator
    decides, agreement, else the low median; model judges left out; 'oracle' rows count)."""
    if annotator is None:
        from workbench.core.resolve import resolve

        return resolve(judgments)[0]
    grades: dict[str, dict[str, int]] = {}
    for j in judgments:
        if j.annotator == annotator and j.grade is not None:
            grades.setdefault(j.query_id, {})[j.doc_id] = j.grade
    return grades


# -- observations --------------------------------------------------------------------------------


@dataclass
class StratumObs:
    """One stratum of one query: its population, how many of it were judged, how many relevant."""

    name: str
    population: int
    sampled: int = 0
    judged: int = 0
    relevant: int = 0
    inclusion_prob: float = 1.0

    @property
    def unjudged(self) -> int:
        return max(self.population - self.judged, 0)


@dataclass
class QueryObs:
    query_id: str
    pool_size: int
    pool_judged: int
    pool_relevant: int
    extra_relevant: int = 0
    """Judged relevant docs that are in no queue entry (e.g. imported labels)."""
    partial_relevant: int | None = None
    """Judged relevant pool docs that some system missed (None when the pool has one system)."""
    strata: list[StratumObs] = field(default_factory=list)

    @property
    def judged_relevant(self) -> int:
        return (
            self.pool_relevant
            + self.extra_relevant
            + sum(s.relevant for s in self.strata if s.name != POOL_STRATUM)
        )

    @property
    def sample_judged(self) -> int:
        return sum(s.judged for s in self.strata)


def observe(
    query_id: str,
    entries: Sequence[PoolEntry],
    grades: Mapping[str, int],
    corpus_size: int,
    rel_threshold: int = 1,
) -> QueryObs:
    """Group one query's queue entries into the pool and its sampling strata."""
    pool_docs = [e for e in entries if e.stratum == POOL_STRATUM]
    judged_pool = [e for e in pool_docs if e.doc_id in grades]
    strata: dict[str, StratumObs] = {}
    for e in entries:
        if e.stratum == POOL_STRATUM:
            continue
        s = strata.setdefault(e.stratum, StratumObs(e.stratum, 0, inclusion_prob=e.inclusion_prob))
        s.sampled += 1
        if e.doc_id in grades:
            s.judged += 1
            s.relevant += grades[e.doc_id] >= rel_threshold
    for s in strata.values():
        s.population = max(int(round(s.sampled / s.inclusion_prob)), s.sampled)
    known = {e.doc_id for e in entries}
    obs = QueryObs(
        query_id=query_id,
        pool_size=len(pool_docs),
        pool_judged=len(judged_pool),
        pool_relevant=sum(grades[e.doc_id] >= rel_threshold for e in judged_pool),
        extra_relevant=sum(1 for d, g in grades.items() if d not in known and g >= rel_threshold),
        strata=sorted(strata.values(), key=lambda s: _stratum_key(s.name)),
    )
    systems = {p.system for e in pool_docs for p in e.provenance}
    if len(systems) > 1:
        obs.partial_relevant = sum(
            1
            for e in judged_pool
            if grades[e.doc_id] >= rel_threshold
            and len({p.system for p in e.provenance}) < len(systems)
        )
    if strata:
        # Documents in no stratum (e.g. allocation gave a stratum nothing) form their own.
        twins = sum(len(e.aliases) for e in pool_docs)
        left = corpus_size - len(pool_docs) - twins - sum(s.population for s in obs.strata)
        if left > 0:
            obs.strata.append(StratumObs(UNSAMPLED, left, inclusion_prob=0.0))
    return obs


def _stratum_key(name: str) -> tuple[int, str]:
    if name.startswith("rank:"):
        try:
            return (int(name[5:].split("-")[0]), name)
        except ValueError:
            pass
    return (10**9, name)


# -- the estimator -------------------------------------------------------------------------------


def _logit_rate(relevant: int, judged: int) -> float:
    return math.log((relevant + 0.5) / (judged - relevant + 0.5))


def query_covariate(obs: QueryObs) -> float:
    """What the pool says about what it missed: the log count of relevant pool docs that some
    system did not retrieve (systems that disagree leave more unfound, as in capture-recapture);
    with a single system, the empirical logit of the pool's relevance rate."""
    if obs.partial_relevant is not None:
        return math.log(obs.partial_relevant + 0.5)
    return _logit_rate(obs.pool_relevant, obs.pool_judged)


def _nelder_mead(
    fun: Objective, start: Sequence[float], step: float = 0.5, iters: int = 400
) -> list[float]:
    """Minimize fun over R^d (small d) without scipy."""
    import numpy as np

    dim = len(start)
    simplex = [np.array(start, dtype=float)]
    for i in range(dim):
        point = np.array(start, dtype=float)
        point[i] += step
        simplex.append(point)
    values = [fun(p) for p in simplex]
    for _ in range(iters):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-9:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        reflected = centroid + (centroid - worst)
        fr = fun(reflected)
        if fr < values[0]:
            expanded = centroid + 2 * (centroid - worst)
            fe = fun(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (worst - centroid)
            fc = fun(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best + 0.5 * (p - best) for p in simplex]
                values = [fun(p) for p in simplex]
    return list(simplex[int(np.argmin(values))])


def beta_binomial_loglik(
    y: ArrayLike, n: ArrayLike, alpha: ArrayLike, beta: ArrayLike
) -> np.ndarray:
    """log P(y | n, alpha, beta) up to the binomial coefficient, exact for integer counts:
    sum_{i<y} log(alpha+i) + sum_{i<n-y} log(beta+i) - sum_{i<n} log(alpha+beta+i)."""
    import numpy as np

    hits = np.asarray(y)
    trials = np.asarray(n)
    steps = np.arange(max(int(trials.max(initial=0)), 1))
    a = np.asarray(alpha, dtype=float)[:, None]
    b = np.asarray(beta, dtype=float)[:, None]
    return (
        (np.log(a + steps) * (steps < hits[:, None])).sum(1)
        + (np.log(b + steps) * (steps < (trials - hits)[:, None])).sum(1)
        - (np.log(a + b + steps) * (steps < trials[:, None])).sum(1)
    )


def band_of(name: str) -> tuple[int, int] | None:
    """(first, last) rank of a 'rank:LO-HI' stratum; None for any other stratum."""
    if not name.startswith("rank:"):
        return None
    try:
        low, high = (int(part) for part in name[5:].split("-"))
    except ValueError:
        return None
    return (low, high) if 0 < low <= high else None


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
MIN_QUERIES_FOR_SLOPE = 8
"""Below this many sampled queries, the query level ignores the pool covariate."""


@dataclass
class RankModel:
    """logit P(relevant | query q, best rank r) = u_q + f(log r), u_q ~ t4(mu + gamma x_q, tau).

    f is a piecewise-linear curve in log rank shared by all queries (f = 0 at the shallowest
    sampled rank; knots at KNOT_RANKS), x_q the empirical logit of the query's pool relevance
    rate, and strata that are not rank bands ('rest') get their own offset instead of f. Fitted
    by maximum marginal likelihood across queries: a hit in one stratum of one query raises that
    query's level in every stratum, and the shape comes from everyone's samples."""

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
    """Per-query steepness: query q's curve is exp(s_q) * f, s_q ~ N(0, slope_sd) (a query whose
    relevant documents sit deep in the rankings falls more gently than the others)."""
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
            out[name] = _expit(np.asarray(u)[:, None] + steep * shape[None, :]).mean(axis=1)
        return out

    def nodes(self) -> tuple[Any, Any]:
        """Quadrature over the per-query steepness: (multipliers exp(s_k), log weights)."""
        import numpy as np

        z, log_w = _hermite_nodes()
        return np.exp(self.slope_sd * z), log_w

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": "logit p = u_q + exp(s_q) f(log rank); u_q ~ t4(mu + gamma * x_q, tau), "
            "s_q ~ N(0, slope_sd)",
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


def _expit(values: Any) -> Any:
    import numpy as np

    return 1.0 / (1.0 + np.exp(-np.clip(values, -40, 40)))


def _u_grid() -> Any:
    import numpy as np

    return np.linspace(*U_GRID)


def _stratum_rates(model: RankModel, names: Sequence[str], u: Any, steepness: Any = 1.0) -> Any:
    """len(u) x len(names) matrix of relevance rates; unknown non-band strata get NaN."""
    import numpy as np

    bands = {n: band_of(n) for n in names}
    rates = model.band_rates({n: b for n, b in bands.items() if b is not None}, u, steepness)
    columns = []
    for name in names:
        if bands[name] is not None:
            columns.append(rates[name])
        elif name in model.offsets:
            columns.append(_expit(np.asarray(u) + np.asarray(steepness) * model.offsets[name]))
        else:
            columns.append(np.full(len(u), np.nan))
    return np.stack(columns, axis=1) if columns else np.zeros((len(u), 0))


def _grid_points(model: RankModel) -> tuple[Any, Any]:
    """The (level u, steepness) points of the per-query grid, steepness-major."""
    import numpy as np

    grid = _u_grid()
    steep, _ = model.nodes()
    return np.tile(grid, len(steep)), np.repeat(steep, len(grid))


def _grid_rates(model: RankModel, names: Sequence[str]) -> Any:
    """grid points x strata relevance rates (cached on the model)."""
    key = tuple(names)
    if key not in model.cache:
        levels, steepness = _grid_points(model)
        model.cache[key] = _stratum_rates(model, names, levels, steepness)
    return model.cache[key]


def _grid_loglik(model: RankModel, names: Sequence[str], relevant: Any, judged: Any) -> Any:
    """queries x grid log-likelihood of the judged samples at each (level, steepness) point."""
    import numpy as np

    key = ("log", tuple(names))
    if key not in model.cache:
        rates = np.clip(_grid_rates(model, names), 1e-12, 1 - 1e-12)
        rates = np.nan_to_num(rates, nan=0.5)
        model.cache[key] = (np.log(rates).T, np.log1p(-rates).T)
    log_rate, log_miss = model.cache[key]
    return relevant @ log_rate + (judged - relevant) @ log_miss


def _log_prior(model: RankModel, covariate: Any) -> Any:
    """queries x grid log prior density of (level, steepness node)."""
    import numpy as np

    grid = _u_grid()
    center = model.mu + model.gamma * np.asarray(covariate)[:, None]
    z = (grid[None, :] - center) / model.tau
    if LEVEL_DF is None:
        level = -0.5 * z**2 - math.log(model.tau)
    else:
        level = -(LEVEL_DF + 1) / 2 * np.log1p(z**2 / LEVEL_DF) - math.log(model.tau)
    _, log_weights = model.nodes()
    return (level[:, None, :] + log_weights[None, :, None]).reshape(len(level), -1)


def _sample_matrix(observations: Sequence[QueryObs]) -> tuple[list[str], Any, Any, Any]:
    import numpy as np

    names = sorted(
        {s.name for o in observations for s in o.strata if s.judged and s.name != UNSAMPLED},
        key=_stratum_key,
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


def fit_rank_model(observations: Iterable[QueryObs]) -> RankModel | None:
    """Maximum marginal likelihood (weak priors keep it finite with few queries or no hits).
    None when no query has a judged sample."""
    import numpy as np

    sampled = [o for o in observations if o.sample_judged]
    if not sampled:
        return None
    names, relevant, judged, covariate = _sample_matrix(sampled)
    # Queries with the same samples and covariate share one likelihood row, counted once each.
    rows, multiplicity = np.unique(
        np.column_stack([relevant, judged, covariate]), axis=0, return_counts=True
    )
    width = len(names)
    relevant_u, judged_u, covariate_u = rows[:, :width], rows[:, width : 2 * width], rows[:, -1]
    bands = [band for band in map(band_of, names) if band is not None]
    others = [n for n in names if band_of(n) is None]
    if bands:
        low = min(b[0] for b in bands)
        high = max(b[1] for b in bands)
        knot_ranks = (
            [low] + [k for k in KNOT_RANKS if low < k < high] + ([high] if high > low else [])
        )
    else:
        knot_ranks = [1]
    knots = [math.log(k) for k in knot_ranks]
    use_gamma = len(sampled) >= MIN_QUERIES_FOR_SLOPE and float(np.ptp(covariate)) > 0
    x_center = float(covariate.mean())
    grid_step = (U_GRID[1] - U_GRID[0]) / (U_GRID[2] - 1)

    def unpack(theta: Any) -> RankModel:
        mu, gamma, log_tau = theta[0], theta[1] if use_gamma else 0.0, theta[2]
        rest = list(theta[3:])
        curve = [0.0]
        for k, raw in enumerate(rest[: len(knots) - 1], start=1):
            # Relevance never rises with rank: each segment's slope is -exp(raw) per log-rank unit.
            curve.append(curve[-1] - math.exp(min(raw, 5.0)) * (knots[k] - knots[k - 1]))
        offsets = {n: float(v) for n, v in zip(others, rest[len(knots) - 1 : -1], strict=True)}
        tau = math.exp(min(max(log_tau, -3.0), 2.0))
        slope_sd = math.exp(min(max(rest[-1], -5.0), 1.0))
        return RankModel(
            knots, curve, offsets, float(mu), float(gamma), tau, len(sampled), slope_sd=slope_sd
        )

    def objective(theta: Any) -> float:
        model = unpack(theta)
        model.mu -= model.gamma * x_center
        loglik = _grid_loglik(model, names, relevant_u, judged_u) + _log_prior(model, covariate_u)
        peak = loglik.max(axis=1, keepdims=True)
        per_row = peak[:, 0] + np.log(np.exp(loglik - peak).sum(axis=1) * grid_step)
        marginal = float(per_row @ multiplicity)
        # Weak priors: level near logit 2%; gamma near 0.5; tau near 1; a curve that falls gently.
        penalty = ((theta[0] + 4.0) / 4.0) ** 2 / 2 + ((theta[2]) / 1.0) ** 2 / 2
        if use_gamma:
            penalty += ((theta[1] - 0.5) / 1.0) ** 2 / 2
        penalty += sum((v / 2.0) ** 2 / 2 for v in theta[3:-1])
        # Steepness spread: log sd near log 0.3, weakly.
        penalty += ((theta[-1] + 1.2) / 1.0) ** 2 / 2
        return float(-marginal + penalty)

    start = [-4.0, 0.5, 0.0]
    start += [0.0 for _ in knots[1:]]
    start += [-3.0] * len(others)
    start += [-1.2]
    theta = _nelder_mead(objective, start, iters=150 * len(start))
    model = unpack(theta)
    model.mu -= model.gamma * x_center
    if not use_gamma:
        theta = list(theta)
        theta[1] = 0.0
    distinct: dict[tuple, list] = {}
    for draw, weight in _laplace_draws(
        objective, theta, [1] if not use_gamma else [], PARAMETER_DRAWS
    ):
        # Resampling repeats draws: each distinct one is kept once with their summed weight.
        held = distinct.setdefault(tuple(np.round(draw, 12)), [draw, 0.0])
        held[1] += weight
    for draw, weight in distinct.values():
        alternative = unpack(draw)
        alternative.mu -= alternative.gamma * x_center
        alternative.weight = weight
        model.draws.append(alternative)
    return model


PARAMETER_DRAWS = 100
"""How many draws of the fitted hyperparameters the per-query estimates mix over."""


def _laplace_draws(
    objective: Objective, theta: Sequence[float], fixed: Sequence[int], count: int
) -> list[tuple[Any, float]]:
    """(hyperparameters, weight) pairs that stand for the posterior of the fit (the weak priors
    times the marginal likelihood, exp(-objective)): the fit's own uncertainty (the shape of the
    rank curve, the spread of query levels), which plugging in the mode would ignore.

    Importance sampling: proposals from a Student-t (4 df) around the mode with the inverse
    numerical Hessian as its scale (the Laplace approximation, made heavy-tailed), weighted by
    the exact posterior over the proposal density, so a skewed posterior (a log slope near a
    flat segment) is not taken for a normal one. Directions with little curvature get the
    curvature of a sd of 2 (the priors' scale). `fixed` coordinates are not varied.
    Deterministic (fixed seed)."""
    import numpy as np

    mode = np.asarray(theta, dtype=float)
    free = [i for i in range(len(mode)) if i not in set(fixed)]
    if not free or count <= 0:
        return []
    step = 1e-2
    dim = len(free)
    hessian = np.zeros((dim, dim))
    center = objective(mode)

    def at(offsets: dict[int, float]) -> float:
        point = mode.copy()
        for i, delta in offsets.items():
            point[free[i]] += delta
        return objective(point)

    for i in range(dim):
        plus, minus = at({i: step}), at({i: -step})
        hessian[i, i] = (plus - 2 * center + minus) / step**2
        for j in range(i):
            value = (
                at({i: step, j: step})
                - at({i: step, j: -step})
                - at({i: -step, j: step})
                + at({i: -step, j: -step})
            ) / (4 * step**2)
            hessian[i, j] = hessian[j, i] = value
    if not np.all(np.isfinite(hessian)):
        return []
    values, vectors = np.linalg.eigh(hessian)
    values = np.maximum(values, 0.25)
    rng = np.random.default_rng(20240917)
    df = 4.0
    # Proposals: the Laplace t, then t's fitted to the weighted draws so far (adaptive importance
    # sampling); all draws are weighted against the mixture of the proposals' densities.
    proposals = [(np.zeros(dim), (vectors / np.sqrt(values)))]
    points: list[Any] = []
    for round_ in range(IMPORTANCE_ROUNDS):
        shift, factor = proposals[round_]
        standard = (
            rng.standard_normal((count, dim)) * np.sqrt(df / rng.chisquare(df, size=count))[:, None]
        )
        points.extend(shift + standard @ factor.T)
        if round_ < IMPORTANCE_ROUNDS - 1:
            first = _importance(objective, mode, free, points, proposals, df, center)
            if first is None:
                return []
            mean = first @ np.asarray(points)
            spread = np.asarray(points) - mean
            cov = (spread * first[:, None]).T @ spread + np.eye(dim) * 1e-3
            proposals.append((mean, np.linalg.cholesky(cov)))
    weights = _importance(objective, mode, free, points, proposals, df, center)
    if weights is None:
        return []
    # Systematic resampling to equally weighted draws.
    cumulative = np.cumsum(weights)
    chosen = np.searchsorted(cumulative, (np.arange(count) + rng.uniform()) / count)
    out = []
    for index in np.minimum(chosen, len(points) - 1):
        point = mode.copy()
        point[free] += points[index]
        out.append((point, 1.0 / count))
    return out


IMPORTANCE_ROUNDS = 2
"""Rounds of adaptive importance sampling of the hyperparameters (each adds PARAMETER_DRAWS)."""


def _importance(
    objective: Objective,
    theta: np.ndarray,
    free: Sequence[int],
    deltas: Sequence[Any],
    proposals: Sequence[tuple[np.ndarray, np.ndarray]],
    df: float,
    center: float,
) -> np.ndarray | None:
    """Normalized weights exp(-objective) / (mean of the t proposal densities) of the deltas
    (offsets of the free coordinates from theta); None when no draw has a finite weight."""
    import numpy as np

    dim = len(free)
    log_densities = []
    for shift, factor in proposals:
        # log density of a multivariate t with location shift and scale factor factor^T.
        inverse = np.linalg.inv(factor)
        z = (np.asarray(deltas) - shift) @ inverse.T
        log_det = float(np.log(np.abs(np.linalg.det(factor))))
        log_densities.append(-(df + dim) / 2 * np.log1p((z**2).sum(1) / df) - log_det)
    stacked = np.stack(log_densities)
    top = stacked.max(axis=0)
    log_proposal = top + np.log(np.exp(stacked - top).mean(axis=0))
    log_target = []
    for delta in deltas:
        point = np.asarray(theta, dtype=float).copy()
        point[free] += delta
        log_target.append(-(objective(point) - center))
    log_weights = np.nan_to_num(np.asarray(log_target) - log_proposal, nan=-np.inf)
    if not np.isfinite(log_weights.max()):
        return None
    weights = np.exp(log_weights - log_weights.max())
    return weights / weights.sum()


def _draw_levels(model: RankModel, obs: QueryObs, draws: int, rng: Any) -> Any:
    """Draws of the query's (level u, steepness) from its exact grid posterior, as indices of
    the grid's points."""
    import numpy as np

    names = [s.name for s in obs.strata if s.judged and s.name != UNSAMPLED]
    relevant = np.array([[s.relevant for s in obs.strata if s.name in names]], dtype=float)
    judged = np.array([[s.judged for s in obs.strata if s.name in names]], dtype=float)
    covariate = [query_covariate(obs)]
    log_post = (_grid_loglik(model, names, relevant, judged) + _log_prior(model, covariate))[0]
    weights = np.exp(log_post - log_post.max())
    return rng.choice(len(weights), size=draws, p=weights / weights.sum())


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
    """Posterior-predictive draws of |Rel| for one query (a numpy array of `draws` totals).

    A level u_q is drawn from its posterior given the query's judged samples; each unjudged
    document of a stratum is then relevant with the stratum's rate at that level (binomial, which
    over-covers a band whose rates differ). Unjudged pool items use the query's own pool rate with
    a Jeffreys prior; a stratum the model cannot place uses Beta(0.5, 0.5) and its own counts."""
    import numpy as np

    rng = np.random.default_rng([seed, zlib.crc32(obs.query_id.encode("utf-8"))])
    total = np.full(draws, float(obs.judged_relevant))
    pool_unjudged = obs.pool_size - obs.pool_judged
    if pool_unjudged > 0:
        rate = rng.beta(0.5 + obs.pool_relevant, 0.5 + obs.pool_judged - obs.pool_relevant, draws)
        total += rng.binomial(pool_unjudged, rate)
    open_strata = [s for s in obs.strata if s.unjudged > 0]
    if not open_strata:
        return total
    if model is not None:
        # Each block of draws uses one plausible fit, so the interval carries the fit's own
        # uncertainty as well as the query's.
        fits = model.draws or [model]
        names = [s.name if s.name != UNSAMPLED else _deepest(model, obs) for s in open_strata]
        weights = np.array([fit.weight for fit in fits])
        picks = rng.choice(len(fits), size=draws, p=weights / weights.sum())
        rates = np.empty((draws, len(open_strata)))
        for index, fit in enumerate(fits):
            block = np.flatnonzero(picks == index)
            if len(block):
                points = _draw_levels(fit, obs, len(block), rng)
                rates[block] = _grid_rates(fit, names)[points]
    else:
        rates = np.full((draws, len(open_strata)), np.nan)
    for column, s in enumerate(open_strata):
        rate = rates[:, column]
        if np.isnan(rate).any():
            rate = rng.beta(0.5 + s.relevant, 0.5 + s.judged - s.relevant, draws)
        total += rng.binomial(s.unjudged, np.clip(rate, 0.0, 1.0))
    return total


def _deepest(model: RankModel, obs: QueryObs) -> str:
    """Documents in no sampled stratum are treated like the deepest stratum sampled."""
    candidates = [s.name for s in obs.strata if s.name != UNSAMPLED]
    if "rest" in model.offsets:
        return "rest"
    return max(candidates, key=_stratum_key) if candidates else UNSAMPLED


# -- per-system and discovery figures ------------------------------------------------------------


def system_figures(
    entries: Sequence[PoolEntry], grades: Mapping[str, int], rel_threshold: int = 1
) -> dict[str, dict[str, float | int | None]]:
    """Per system: judged@k (share of its top k that was judged), relevant found within the pool
    depth, and unique relevant (found by no other system: Zobel's leave-one-system-out)."""
    ranks: dict[str, dict[str, int]] = {}
    for e in entries:
        if e.stratum != POOL_STRATUM:
            continue
        for p in e.provenance:
            held = ranks.setdefault(p.system, {})
            held[e.doc_id] = min(p.rank, held.get(e.doc_id, p.rank))
    relevant = {d for d, g in grades.items() if g >= rel_threshold}
    found_by: dict[str, set[str]] = {s: set(r) & relevant for s, r in ranks.items()}
    out: dict[str, dict[str, float | int | None]] = {}
    for system, held in sorted(ranks.items()):
        figures: dict[str, float | int | None] = {}
        for k in KS:
            top = [d for d, r in held.items() if r <= k]
            figures[f"judged@{k}"] = sum(d in grades for d in top) / len(top) if top else None
        others = set().union(*(found_by[o] for o in found_by if o != system))
        figures["relevant"] = len(found_by[system])
        figures["unique_relevant"] = len(found_by[system] - others)
        out[system] = figures
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


# -- the report ----------------------------------------------------------------------------------


def _quantile(values: np.ndarray, q: float) -> float:
    import numpy as np

    return float(np.quantile(values, q))


def coverage_report(
    entries: Sequence[PoolEntry],
    grades: Mapping[str, Mapping[str, int]],
    corpus_size: int,
    *,
    query_ids: Sequence[str] | None = None,
    k: int = 10,
    thresholds: CompletenessRule = CompletenessRule(),
    rel_threshold: int = 1,
    draws: int = 4000,
    seed: int = 0,
) -> dict[str, Any]:
    """The coverage report as plain data: {"queries": {QID: {...}}, "summary": {...}}."""
    import numpy as np

    by_query: dict[str, list[PoolEntry]] = {}
    for e in entries:
        by_query.setdefault(e.query_id, []).append(e)
    qids = list(query_ids) if query_ids is not None else list(by_query)
    observations = {
        q: observe(q, by_query.get(q, []), grades.get(q, {}), corpus_size, rel_threshold)
        for q in qids
    }
    model = fit_rank_model(observations.values())
    tail = (1 - thresholds.level) / 2
    queries: dict[str, dict[str, Any]] = {}
    for qid in qids:
        obs = observations[qid]
        query_entries = by_query.get(qid, [])
        query_grades = grades.get(qid, {})
        judged_entries = [e for e in query_entries if e.doc_id in query_grades]
        known = {e.doc_id for e in query_entries}
        judged = len(judged_entries) + sum(1 for d in query_grades if d not in known)
        relevant = obs.judged_relevant
        by_grade: dict[str, int] = {}
        for g in query_grades.values():
            if g >= rel_threshold:
                by_grade[str(g)] = by_grade.get(str(g), 0) + 1
        curve = discovery_curve(query_entries, query_grades, rel_threshold)
        row: dict[str, Any] = {
            "pool": obs.pool_size,
            "sampled": sum(s.sampled for s in obs.strata),
            "judged": judged,
            "unjudged": len(query_entries) - len(judged_entries),
            "relevant": relevant,
            "relevant_by_grade": dict(sorted(by_grade.items())),
            "label_coverage": judged / corpus_size if corpus_size else None,
            "ceiling": ceiling(k, relevant),
            "est_rel": None,
            "est_rel_low": None,
            "est_rel_high": None,
            "est_rel_ht": None,
            "completeness": None,
            "completeness_low": None,
            "completeness_high": None,
            "ceiling_est": None,
            "status": Status.UNMEASURED,
            "systems": system_figures(query_entries, query_grades, rel_threshold),
            "discovery": curve,
            "last_quarter_share": last_quarter_share(curve),
            "strata": {
                s.name: {
                    "population": s.population,
                    "sampled": s.sampled,
                    "judged": s.judged,
                    "relevant": s.relevant,
                }
                for s in obs.strata
            },
        }
        judged_with_aliases = judged + sum(len(e.aliases) for e in judged_entries)
        if corpus_size and judged_with_aliases >= corpus_size:
            # Every document of the corpus is judged: |Rel| is known exactly, nothing to estimate.
            row.update(
                est_rel=relevant,
                est_rel_low=relevant,
                est_rel_high=relevant,
                completeness=1.0,
                completeness_low=1.0,
                completeness_high=1.0,
                ceiling_est=ceiling(k, relevant),
                status=Status.COMPLETE,
            )
        elif obs.sample_judged >= thresholds.min_samples and obs.sample_judged > 0:
            totals = estimate_missing(obs, model, draws=draws, seed=seed)
            # Nothing relevant left to find (total 0) counts as complete.
            share = np.where(totals > 0, relevant / np.maximum(totals, 1e-9), 1.0)
            est = _quantile(totals, 0.5)
            row.update(
                est_rel=est,
                est_rel_low=_quantile(totals, tail),
                est_rel_high=_quantile(totals, 1 - tail),
                est_rel_ht=horvitz_thompson(obs),
                completeness=(relevant / est) if est > 0 else 1.0,
                completeness_low=_quantile(share, tail),
                completeness_high=_quantile(share, 1 - tail),
                ceiling_est=ceiling(k, est),
            )
            low = row["completeness_low"]
            complete = low >= thresholds.complete_at
            row["status"] = Status.COMPLETE if complete else Status.INCOMPLETE
        queries[qid] = row
    return {
        "k": k,
        "thresholds": thresholds.as_dict(),
        "queries": queries,
        "summary": summarize(queries, corpus_size),
        "model": model.as_dict() if model is not None else None,
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


def summarize(queries: Mapping[str, Mapping[str, Any]], corpus_size: int) -> dict[str, Any]:
    """Across queries: counts by status, totals, mean and median completeness, system means."""
    rows = list(queries.values())
    status = {
        s: sum(r["status"] == s for r in rows)
        for s in (Status.COMPLETE, Status.INCOMPLETE, Status.UNMEASURED)
    }
    systems: dict[str, dict[str, list]] = {}
    for r in rows:
        for name, figures in r["systems"].items():
            for key, value in figures.items():
                systems.setdefault(name, {}).setdefault(key, []).append(value)
    return {
        "queries": len(rows),
        **status,
        "pool": sum(r["pool"] for r in rows),
        "judged": sum(r["judged"] for r in rows),
        "relevant": sum(r["relevant"] for r in rows),
        "corpus_size": corpus_size,
        "est_rel": _sum_or_none(r["est_rel"] for r in rows),
        "mean_completeness": _mean(r["completeness"] for r in rows),
        "median_completeness": _median(r["completeness"] for r in rows),
        "mean_completeness_low": _mean(r["completeness_low"] for r in rows),
        "mean_label_coverage": _mean(r["label_coverage"] for r in rows),
        "mean_last_quarter_share": _mean(r["last_quarter_share"] for r in rows),
        "systems": {
            name: {
                key: (_mean(values) if key.startswith("judged@") else sum(v or 0 for v in values))
                for key, values in figures.items()
            }
            for name, figures in sorted(systems.items())
        },
    }


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) if kept else None


# -- store adapters ------------------------------------------------------------------------------


def coverage_for_store(
    store: Any,
    k: int = 10,
    complete_at: float = 0.8,
    min_samples: int = 1,
    annotator: str | None = None,
    rel_threshold: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """The coverage report of a judgments store (anything with pool(), current_judgments(),
    corpus_size(), queries())."""
    grades = grades_counted(store.current_judgments(annotator), annotator)
    return coverage_report(
        store.pool(),
        grades,
        store.corpus_size(),
        query_ids=[q.query_id for q in store.queries()],
        k=k,
        thresholds=CompletenessRule(complete_at=complete_at, min_samples=min_samples),
        rel_threshold=rel_threshold,
        seed=seed,
    )


SUMMARY_KEYS = (
    "est_rel",
    "est_rel_low",
    "est_rel_high",
    "completeness",
    "completeness_low",
    "status",
)


SUMMARY_DIGITS = {
    "est_rel": (1, "nearest"),
    "est_rel_low": (1, "down"),
    "est_rel_high": (1, "up"),
    "completeness": (3, "nearest"),
    "completeness_low": (3, "down"),
}
"""How the summary's figures, meant for people (golden.yaml), are rounded: |Rel| estimates to
1 decimal, completeness to 3; each bound outwards (low down, high up), so the rounded interval
holds the computed one, and a status read again from completeness_low (`eval --complete-at`)
can never turn complete on rounding alone."""
SUMMARY_MEAN_DIGITS = 3
"""Shares and means in the summary's `summary` block (mean completeness, judged@k, ...)."""


def round_figure(value: float | None, digits: int, direction: str = "nearest") -> float | None:
    """`value` to `digits` decimals: to the nearest, or down/up (a hair of float noise, 1e-9,
    is forgiven so 0.29 stays 0.29). None and whole numbers (int) stay as they are."""
    if value is None or isinstance(value, int) or not math.isfinite(value):
        return value
    if direction == "nearest":
        return round(value, digits)
    scale = 10**digits
    if direction == "down":
        return round(math.floor(value * scale + 1e-9) / scale, digits)
    return round(math.ceil(value * scale - 1e-9) / scale, digits)


def _rounded_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key == "systems":
            out[key] = {
                name: {
                    k: round_figure(v, SUMMARY_MEAN_DIGITS) if isinstance(v, float) else v
                    for k, v in figures.items()
                }
                for name, figures in value.items()
            }
        elif key == "est_rel":
            out[key] = round_figure(value, 1)
        elif isinstance(value, float):
            out[key] = round_figure(value, SUMMARY_MEAN_DIGITS)
        else:
            out[key] = value
    return out


def summary_for_store(store: Any, **options: Any) -> dict[str, Any]:
    """The compact coverage slot of golden.yaml: per-query estimate and status, the summary,
    and the thresholds that decided the status. Figures are rounded for people
    (`SUMMARY_DIGITS`); the status is the one the unrounded figures decided. `workbench
    coverage --json` (`coverage_for_store`) keeps every figure as computed."""
    report = coverage_for_store(store, **options)
    queries: dict[str, dict[str, Any]] = {}
    for qid, row in report["queries"].items():
        slot = {key: row[key] for key in ("pool", "judged", "relevant", *SUMMARY_KEYS)}
        for key, (digits, direction) in SUMMARY_DIGITS.items():
            slot[key] = round_figure(slot[key], digits, direction)
        queries[qid] = slot
    return {
        "queries": queries,
        "summary": _rounded_summary(report["summary"]),
        "thresholds": report["thresholds"],
        "method": "stratified sample outside the pool; empirical-Bayes relevance-vs-rank model",
    }
