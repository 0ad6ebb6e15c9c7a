"""The rest of the corpus (outside every system's candidates): how many relevant passages it
holds, from the reserve's random samples of its rank bands, shared across queries.

Relevant passages there are rare (on the shared collections 0.3-3.5% of band 101-300, far
fewer deeper), so one query's sample rarely holds any; the queries are pooled. For query q with
D_q, its relevant candidates each weighted by its best rank / the candidate depth (its scale
s_q = (D_q + 1/2) / 1000: relevant passages deep in the rankings say the rankings run on past
the candidates;
`AdaptiveSession._relevant_candidates`), a passage of band b is relevant at rate
kappa (m_b / m_0)^-gamma g_q s_q: m_b is the band's middle rank (m_0 the shallowest band's),
so the rate falls with rank as a power law; kappa, shared, is the shallowest band's rate per
unit of scale; g_q ~ Gamma(alpha, alpha) (mean 1) is the query's own departure, the same in every
band. One rate and one fall for all bands, not a rate per band: a deep band holds tens of
times more passages than band 101-300 and few relevant, so a rate of its own, learned from the
few hits (none on npl's 'rest' band, 3 hits in all on npl), was mostly its prior's half hit,
and its upper end made most of the interval (walks pickled once and re-estimated, the harness on
branch rest-research, bench/rest_harness.py; budget 100, seeds 0-2: the
rest's median width / |Rel| on npl 1.60 -> 1.25, cacm 1.33 -> 1.15; the total's 2.04 -> 1.75
and 1.80 -> 1.63, its coverage .989 -> .982 and .994 -> .981).
A query's judged sample of n_bq, h_bq of them relevant, is Poisson with mean kappa r_b g_q s_q
n_bq. gamma and alpha are on grids, gamma's weighted by the likelihood of every band's hits
(kappa integrated out under its Jeffreys prior), alpha's given gamma by the negative-binomial
likelihood of every query's hits (at most HEAVY_ALPHA where the rest holds a heavy share of the
relevant, `outside_share`); given gamma, kappa's posterior is Gamma(H + 1/2, E_gamma) (H
the hits over all bands and queries, E_gamma the exposures sum_qb n_bq s_q r_b); given them,
g_q's is Gamma(alpha + h_q, alpha + sum_b kappa r_b s_q n_bq); the unjudged passages' relevant
counts are Poisson given all of them. Draws of all of them carry the uncertainty of the shared
rate and its fall, of the query's departure and of which passages are relevant, so the interval
holds even when no sample was relevant. With no judged sample anywhere yet, a band may hold
anything from none to all relevant: no draws, and no estimate (`rest_draws`). Where a judge
covariate labelled the reserve, each band splits by its label and the model is two-phase
(`twophase`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.coverage.observations import band_of

ALPHAS = (0.25, 0.5, 1.0, 2.0, 4.0)
"""How much queries' tails may differ around the shared rates (g_q ~ Gamma(alpha, alpha)): a
grid, weighted by the negative-binomial likelihood of every query's hits (flat prior). It stops
at 4: a query's sample rarely holds two hits, so the data cannot show how much tails differ and
would drift to "alike"; on the shared collections the truth fits alpha 0.5-4."""

GAMMAS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)
"""How fast the rest's relevance rate falls with rank (rate ~ rank^-gamma): a grid, weighted by
the likelihood of the bands' hits (flat prior). On the shared collections the truth falls by
gamma 1-1.5 between bands 101-300 and 301-1000."""

HEAVY_REST = 0.4
"""A study whose rest of the corpus holds at least this share of the relevant (`outside_share`)
is one where the systems miss much, and there a query's rest follows its depth-weighted scale
loosely: on cisi (49% outside both systems' top 100) the interval held |Rel| for 92% of queries
with alpha as the hits fit it, 95% with alpha at most 1 (six seeds, 100 judgments per query;
width 1.62 -> 1.82 |Rel|). Such a study lets queries' tails differ that much at least
(`HEAVY_ALPHA`). On cranfield (20% outside), cacm (26%) and npl (33%) the fitted alpha holds
|Rel| for 98-99% of queries; capped at 1 everywhere, cranfield's interval widened past the
static design's."""

HEAVY_ALPHA = 1.0
"""The largest alpha a study with a heavy rest (`HEAVY_REST`) may fit."""

SCALE_FLOOR = 0.5
"""Added to a query's depth-weighted relevant candidates: a query with none found may still have
relevant passages in its rest."""

DEEPEST_RANK = 1000
"""Where a band past every ranking ('rest') starts when the query has no rank band to say."""


@dataclass(frozen=True, slots=True)
class StratumSample:
    """One stratum of a band's reserve split by a model judge's label (`twophase`): its reserve
    passages (all labelled by the judge: the first phase), how many people judged (a simple
    random sample of them: the second phase), how many of those were relevant."""

    reserve: int
    judged: int
    hits: int


@dataclass(frozen=True, slots=True)
class BandSample:
    """One rank band of one query's rest: its size, how many were judged, how many relevant."""

    name: str
    size: int
    judged: int
    hits: int
    strata: tuple[StratumSample, ...] = ()
    """By the judge's label (judge-negative or unlabelled, judge-positive) when a judge
    covariate labelled the query's reserve (`twophase`); empty otherwise."""


@dataclass(frozen=True, slots=True)
class RestSample:
    """One query's rest by band; `weighted`: the query's estimated relevant candidates, each
    weighted by its depth (its scale)."""

    bands: tuple[BandSample, ...]
    weighted: float
    candidates: float = 0.0
    """The query's estimated relevant candidates, counted plainly (`outside_share`)."""

    @property
    def scale(self) -> float:
        return (self.weighted + SCALE_FLOOR) / 1000.0

    @property
    def hits(self) -> int:
        return sum(b.hits for b in self.bands)

    @property
    def judged(self) -> int:
        return sum(b.judged for b in self.bands)


def middle_rank(band: BandSample, bands: Sequence[BandSample]) -> float:
    """A band's middle rank: a rank band's middle; a band past every ranking ('rest') starts
    after the deepest rank band of the query and is counted a rank per passage."""
    limits = band_of(band.name)
    if limits:
        return (limits[0] + limits[1]) / 2
    deepest = max((lim[1] for b in bands if (lim := band_of(b.name))), default=DEEPEST_RANK)
    return deepest + band.size / 2


@dataclass(frozen=True, slots=True)
class RestModel:
    hits: Mapping[str, int]
    exposure: Mapping[str, float]
    """Per band: hits and exposure summed over queries (the queue's allocation of reserve draws
    reads `rate`)."""
    grid: tuple[tuple[float, float, float], ...] = ()
    """(gamma, alpha, E_gamma) of each grid point with an exposure."""
    weights: tuple[float, ...] = ()
    """Posterior weight of each grid point."""
    total_hits: int = 0
    reference: float = 1.0
    """m_0: the middle rank of the shallowest band."""
    outside: float | None = None
    """The share of the relevant outside the candidates (`outside_share`)."""

    def rate(self, band: str) -> float | None:
        """Posterior mean of the band's own rate per unit of scale (None: never sampled)."""
        exposure = self.exposure.get(band, 0.0)
        return (self.hits.get(band, 0) + 0.5) / exposure if exposure > 0 else None

    def fall(self, band: BandSample, bands: Sequence[BandSample], gamma: Any) -> Any:
        """The band's rate relative to the shallowest band's, (m_b / m_0)^-gamma."""
        return (middle_rank(band, bands) / self.reference) ** -gamma

    def shared(self, count: int, rng: Any) -> SharedDraws | None:
        """`shared_draws` of this model (the two-phase model has its own: `twophase`)."""
        return _shared(self, count, rng)

    def unjudged(self, sample: RestSample, total: Any, shared: SharedDraws, rng: Any) -> Any:
        """`rest_draws`' draws of the unjudged relevant, added to `total` (the judged)."""
        return _unjudged(self, sample, total, shared, rng)


def outside_share(samples: Sequence[RestSample]) -> float | None:
    """The share of the relevant that lies outside the candidates, over the queries whose
    reserve has a judged passage: the rest's relevant by Horvitz-Thompson (`band_total`: the
    reserve is a simple random sample of each band, so a band's term needs no model), against
    the candidates' estimated relevant (judged, plus the relevance model's probabilities of the
    unjudged). A ratio of estimates, and a low one: a band not yet
    judged counts none, and an early model over-counts the candidates (measured against the
    truth in bench/coverage_sim.py). None before any reserve passage is judged."""
    rest = candidates = 0.0
    for s in samples:
        judged = [b for b in s.bands if b.judged]
        if judged:
            rest += sum(band_total(b) for b in judged)
            candidates += s.candidates
    total = rest + candidates
    return rest / total if total > 0 else None


def alpha_weights(mu: Any, hits: Any, alphas: Sequence[float]) -> list[float]:
    """Each alpha's relative likelihood (largest 1) of the queries' `hits` as negative binomial
    with means `mu` (Gamma(alpha, alpha) departures)."""
    import numpy as np

    nb = []
    values = set(hits.tolist())
    for alpha in alphas:
        table = {v: math.lgamma(v + alpha) for v in values}
        lg = np.array([table[v] for v in hits.tolist()])
        nb.append(float((lg - math.lgamma(alpha) + alpha * np.log(alpha / (alpha + mu))
                         + hits * np.log(mu / (alpha + mu))).sum()))  # fmt: skip
    top = max(nb)
    return [math.exp(v - top) for v in nb]


def normalized(logs: Sequence[float]) -> tuple[float, ...]:
    """Posterior weights (summing to 1) from log weights."""
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    return tuple(w / sum(weights) for w in weights)


def study_alphas(outside: float | None) -> tuple[float, ...]:
    """The alphas a study may fit: at most `HEAVY_ALPHA` where its rest is heavy."""
    if outside is not None and outside >= HEAVY_REST:
        return tuple(a for a in ALPHAS if a <= HEAVY_ALPHA)
    return ALPHAS


def band_total(b: BandSample) -> float:
    """The band's relevant by Horvitz-Thompson: its hits x its size / its judged; split by a
    judge's label, each judged stratum's hits x its reserve / its judged, scaled from the
    reserve to the band (the two-phase estimate: the strata are judged at different rates)."""
    if not b.strata:
        return b.hits * b.size / b.judged
    reserve = sum(c.reserve for c in b.strata)
    found = sum(c.hits * c.reserve / c.judged for c in b.strata if c.judged)
    return found * b.size / reserve if reserve else 0.0


def fit_rest(samples: Sequence[RestSample]) -> RestModel:
    """The pooled hits and exposures per band, and the posterior weights of the (gamma, alpha)
    grid; alpha at most `HEAVY_ALPHA` where the rest holds a heavy share (`HEAVY_REST`). Samples
    split by a judge's label (`BandSample.strata`) are the two-phase model's
    (`twophase.fit_rest_model`)."""
    import numpy as np

    if any(b.strata for s in samples for b in s.bands):
        raise ValueError("samples split by a judge's label: `twophase.fit_rest_model` fits them")
    hits: dict[str, int] = {}
    exposure: dict[str, float] = {}
    for s in samples:
        for b in s.bands:
            hits[b.name] = hits.get(b.name, 0) + b.hits
            exposure[b.name] = exposure.get(b.name, 0.0) + b.judged * s.scale
    outside = outside_share(samples)
    alphas = study_alphas(outside)
    flat = RestModel(hits, exposure, outside=outside)
    rows = [(i, b, s) for i, s in enumerate(samples) for b in s.bands]
    if not rows:
        return flat
    mids = np.array([middle_rank(b, s.bands) for _, b, s in rows])
    reference = float(mids.min())
    hit_rows = np.array([b.hits for _, b, _ in rows], dtype=float)
    total = int(sum(s.hits for s in samples))
    posterior = grid_posterior(
        samples, [i for i, _, _ in rows], [b.judged * s.scale for _, b, s in rows], hit_rows,
        np.log(mids / reference), alphas, total,
    )  # fmt: skip
    if posterior is None:
        return flat
    grid, _, weights = posterior
    return RestModel(hits, exposure, grid, weights, total, reference, outside)


GridPosterior = tuple[tuple[tuple[float, float, float], ...], tuple[float, ...], tuple[float, ...]]
"""(gamma, alpha, E) of each grid point, its rho (`twophase`; 1 without strata), its weight."""


# long: the grid, the likelihood at each point and the normalised posterior, in one pass
def grid_posterior(
    samples: Sequence[RestSample],
    owner: Sequence[int],
    exposed_rows: Sequence[float],
    hit_rows: Any,
    logs_mid: Any,
    alphas: Sequence[float],
    total: int,
    ratios: Sequence[tuple[float, float]] = ((1.0, 1.0),),
    positive: Any = None,
) -> GridPosterior | None:
    """The posterior over the grid of gamma (`GAMMAS`) x rho (`ratios`: (rho, prior), the
    judge-positive rows' rate over the others', `positive`; none: 1) x alpha, from the rows
    (a band of a query, or a stratum of one: the query it belongs to (`owner`), its exposure
    n s_q and hits, its log middle rank over m_0) and the `total` hits: kappa integrated out
    under its Jeffreys prior at each (gamma, rho), alpha given them by `alpha_weights`. None
    when no grid point has an exposure."""
    import numpy as np

    owner_rows, exposures = np.asarray(owner), np.asarray(exposed_rows, dtype=float)
    per_query = np.array([s.hits for s in samples], dtype=float)
    fitted = np.array([s.judged > 0 for s in samples])
    positive_hits = 0 if positive is None else int(hit_rows[positive].sum())
    grid, rhos, logs = [], [], []
    for gamma in GAMMAS:
        fall = np.exp(-gamma * logs_mid)
        for rho, prior in ratios:
            weighted = exposures * fall
            if positive is not None:
                weighted = weighted * np.where(positive, rho, 1.0)
            exposed = float(weighted.sum())
            if exposed <= 0:
                continue
            # kappa (kappa_0 with strata) integrated out under its Jeffreys prior
            marginal = (
                -gamma * float((hit_rows * logs_mid).sum())
                + positive_hits * math.log(rho)
                + math.lgamma(total + 0.5)
                - (total + 0.5) * math.log(exposed)
                + math.log(prior)
            )
            kappa = (total + 0.5) / exposed
            mu = kappa * np.bincount(owner_rows, weighted, minlength=len(samples))
            use = fitted & (mu > 0)
            given = alpha_weights(mu[use], per_query[use], alphas)
            for alpha, w in zip(alphas, given, strict=True):
                grid.append((gamma, alpha, exposed))
                rhos.append(rho)
                logs.append(marginal + math.log(max(w / sum(given), 1e-300)))
    return (tuple(grid), tuple(rhos), normalized(logs)) if grid else None


@dataclass(frozen=True, slots=True)
class SharedDraws:
    """Draws of the parameters every query's rest shares (the rate's fall gamma, the spread of
    queries' tails alpha, and the shallowest band's rate kappa), one per posterior draw: the
    study level (`workbench.core.study`) takes the same draw for every query, so the
    correlation they cause between queries is kept."""

    gamma: Any
    alpha: Any
    kappa: Any


def shared_draws(model: RestModel, count: int, rng: Any) -> SharedDraws | None:
    """`count` draws of the shared parameters; None while the model has no grid (no reserve
    passage judged anywhere: `rest_draws`)."""
    return model.shared(count, rng)


def _shared(model: RestModel, count: int, rng: Any) -> SharedDraws | None:
    import numpy as np

    if not model.grid:
        return None
    gamma, alpha, exposed = np.asarray(model.grid)[rng.choice(len(model.grid), size=count,
                                                                p=model.weights)].T  # fmt: skip
    kappa = rng.gamma(model.total_hits + 0.5, 1.0 / exposed)
    return SharedDraws(gamma, alpha, kappa)


def rest_draws(
    model: RestModel,
    sample: RestSample,
    count: int,
    rng: Any,
    shared: SharedDraws | None = None,
) -> Any | None:
    """Draws of the query's relevant passages in the rest (the judged relevant included); None
    while no query's reserve has a judged passage: the rest could then hold anything from none
    to all of its passages, and a point taken from that read as a finding (410 [5, 8342] on a
    12-query npl study after 15 grades), so the query has no estimate yet (`combine`).
    `shared`: the shared parameters' draws to use (one per draw, `count` of them); by default
    drawn here for this query alone."""
    import numpy as np

    total = np.full(count, float(sample.hits))
    if not sample.bands:
        return total
    if shared is None:
        shared = shared_draws(model, count, rng)
    if shared is None:
        return None
    return model.unjudged(sample, total, shared, rng)


def _unjudged(
    model: RestModel, sample: RestSample, total: Any, shared: SharedDraws, rng: Any
) -> Any:
    import numpy as np

    gamma, alpha, kappa = shared.gamma, shared.alpha, shared.kappa
    falls = [model.fall(b, sample.bands, gamma) for b in sample.bands]
    exposure = np.zeros(len(total))
    for b, fall in zip(sample.bands, falls, strict=True):
        exposure += kappa * fall * sample.scale * b.judged
    g = rng.gamma(alpha + sample.hits, 1.0 / (alpha + exposure))
    for b, fall in zip(sample.bands, falls, strict=True):
        unjudged = max(b.size - b.judged, 0)
        mean = kappa * fall * g * sample.scale * unjudged
        total += np.minimum(rng.poisson(mean), unjudged)
    return total
