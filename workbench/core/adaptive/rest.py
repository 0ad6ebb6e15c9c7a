"""The rest of the corpus (outside every system's top 100): how many relevant passages it
holds, from the reserve's random samples of its rank bands, shared across queries.

Relevant passages there are rare (on the shared collections 0.3-3.5% of band 101-300, far
fewer deeper), so one query's sample rarely holds any; the queries are pooled, band by band.
For query q with D_q, its relevant candidates each weighted by its best rank / 100 (its scale
s_q = (D_q + 1/2) / 1000: relevant passages deep in the rankings say the rankings run on past
the candidates; `AdaptiveSession._depth_weighted`), a passage of band b is relevant at rate
kappa_b * g_q * s_q: kappa_b, shared, is the band's rate per unit of scale; g_q ~ Gamma(alpha,
alpha) (mean 1) is the query's own departure, the same in every band.
A band's judged sample of n_bq, h_bq of them relevant, is Poisson with mean kappa_b g_q s_q
n_bq. Each kappa_b's posterior is Gamma(H_b + 1/2, E_b) (Jeffreys; H_b and E_b the band's hits
and exposures summed over queries); given them, g_q's is Gamma(alpha + h_q, alpha + sum_b kappa_b
s_q n_bq); the unjudged passages' relevant counts are Poisson given both. Draws of all of them
carry the uncertainty of the bands' rates, of the query's departure and of which passages are
relevant, so the interval holds even when no sample was relevant. Rates never rise with rank:
each draw of a deeper band's rate is capped by the band above's. A band no query has a judged
sample of yet takes the band above's rate, or, with none above, anything from none to all
relevant."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.coverage.observations import stratum_order

ALPHAS = (0.25, 0.5, 1.0, 2.0, 4.0)
"""How much queries' tails may differ around the shared rates (g_q ~ Gamma(alpha, alpha)): a
grid, weighted by the negative-binomial likelihood of every query's hits (flat prior). It stops
at 4: a query's sample rarely holds two hits, so the data cannot show how much tails differ and
would drift to "alike"; on the shared collections the truth fits alpha 0.5-4."""


SCALE_FLOOR = 0.5
"""Added to a query's depth-weighted relevant candidates: a query with none found may still have
relevant passages in its rest."""


@dataclass(frozen=True, slots=True)
class BandSample:
    """One rank band of one query's rest: its size, how many were judged, how many relevant."""

    name: str
    size: int
    judged: int
    hits: int


@dataclass(frozen=True, slots=True)
class RestSample:
    """One query's rest by band; `weighted`: the query's estimated relevant candidates, each
    weighted by its depth (its scale)."""

    bands: tuple[BandSample, ...]
    weighted: float

    @property
    def scale(self) -> float:
        return (self.weighted + SCALE_FLOOR) / 1000.0

    @property
    def hits(self) -> int:
        return sum(b.hits for b in self.bands)

    @property
    def judged(self) -> int:
        return sum(b.judged for b in self.bands)


@dataclass(frozen=True, slots=True)
class RestModel:
    hits: Mapping[str, int]
    exposure: Mapping[str, float]
    """Per band: hits and exposure summed over queries."""
    alpha_weights: tuple[float, ...]
    """Posterior weight of each of ALPHAS."""

    def rate(self, band: str) -> float | None:
        """Posterior mean of the band's rate per unit of scale (None: never sampled)."""
        exposure = self.exposure.get(band, 0.0)
        return (self.hits.get(band, 0) + 0.5) / exposure if exposure > 0 else None


def fit_rest(samples: Sequence[RestSample]) -> RestModel:
    """The pooled hits and exposures per band, and the weights of the heterogeneity grid."""
    hits: dict[str, int] = {}
    exposure: dict[str, float] = {}
    for s in samples:
        for b in s.bands:
            hits[b.name] = hits.get(b.name, 0) + b.hits
            exposure[b.name] = exposure.get(b.name, 0.0) + b.judged * s.scale
    model = RestModel(hits, exposure, ())
    logs = []
    for alpha in ALPHAS:
        total = 0.0
        for s in samples:
            mu = sum((model.rate(b.name) or 0.0) * b.judged * s.scale for b in s.bands)
            if mu <= 0:
                continue
            h = s.hits
            total += (
                math.lgamma(h + alpha)
                - math.lgamma(alpha)
                + alpha * math.log(alpha / (alpha + mu))
                + h * math.log(mu / (alpha + mu))
            )
        logs.append(total)
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    return RestModel(hits, exposure, tuple(w / sum(weights) for w in weights))


def rest_draws(model: RestModel, sample: RestSample, count: int, rng: Any) -> Any:
    """Draws of the query's relevant passages in the rest (the judged relevant included)."""
    import numpy as np

    total = np.full(count, float(sample.hits))
    if not sample.bands:
        return total
    alpha = np.asarray(ALPHAS)[rng.choice(len(ALPHAS), size=count, p=model.alpha_weights)]
    rates, exposure = [], np.zeros(count)
    shallower = None
    for b in sorted(sample.bands, key=lambda b: stratum_order(b.name)):
        if model.rate(b.name) is None:
            rates.append((b, shallower))  # unsampled: the band above's rate (None: no bound)
            continue
        kappa = rng.gamma(model.hits.get(b.name, 0) + 0.5, 1.0 / model.exposure[b.name], count)
        if shallower is not None:
            # Relevance does not rise with rank: a deeper band's rate is capped by the one above
            # (a big band sampled a few times would otherwise take its prior's half hit as rate).
            kappa = np.minimum(kappa, shallower)
        shallower = kappa
        rates.append((b, kappa))
        exposure += kappa * sample.scale * b.judged
    g = rng.gamma(alpha + sample.hits, 1.0 / (alpha + exposure))
    for b, kappa in rates:
        unjudged = max(b.size - b.judged, 0)
        if kappa is None:
            total += rng.integers(0, unjudged + 1, count)
        else:
            mean = kappa * g * sample.scale * unjudged
            total += np.minimum(rng.poisson(mean), unjudged)
    return total
