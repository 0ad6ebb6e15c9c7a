"""The rest of the corpus (outside every system's top 100): how many relevant passages it
holds, from the reserve's random sample of it, shared across queries.

Relevant passages there are rare (a few per query in a thousand), so one query's sample rarely
holds any; the queries are pooled. For query q with F_q relevant candidates found, the rest
holds on average rho * g_q * (F_q + 1) relevant passages: rho, shared, is the tail's size
relative to what the candidates hold; g_q ~ Gamma(alpha, alpha) (mean 1) is the query's own
departure from it. A judged sample of n_q of the N_q passages there, h_q of them relevant, is
Poisson with mean rho g_q (F_q + 1) n_q / N_q. rho's posterior is Gamma(H + 1/2, E) (Jeffreys;
H and E are the hits and exposures summed over queries); given rho, g_q's is Gamma(alpha + h_q,
alpha + rho e_q); the unjudged passages' relevant count is Poisson given both. Draws of all three
carry the uncertainty of the tail's rate, of the query's departure and of which passages are
relevant, so the interval holds even when no sample was relevant."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ALPHAS = (0.25, 0.5, 1.0, 2.0, 4.0)
"""How much queries' tails may differ around the shared rate (g_q ~ Gamma(alpha, alpha)): a
grid, weighted by the negative-binomial likelihood of every query's hits (flat prior). It stops
at 4: a query's sample rarely holds two hits, so the data cannot show how much tails differ and
would drift to "alike"; on the shared collections the truth fits alpha 0.5-4."""


@dataclass(frozen=True, slots=True)
class RestSample:
    """One query's rest: its size, how many of it were judged, how many relevant; `found`: the
    relevant candidates found (the query's scale)."""

    size: int
    judged: int
    hits: int
    found: float

    @property
    def exposure(self) -> float:
        return self.judged / self.size * (self.found + 1) if self.size else 0.0


@dataclass(frozen=True, slots=True)
class RestModel:
    hits: int
    exposure: float
    alpha_weights: tuple[float, ...]
    """Posterior weight of each of ALPHAS."""

    @property
    def rho(self) -> float:
        """Posterior mean of the tail's size relative to the candidates' relevant (+1)."""
        return (self.hits + 0.5) / self.exposure if self.exposure else float("nan")


def fit_rest(samples: Sequence[RestSample]) -> RestModel:
    """The pooled hits and exposure, and the weights of the heterogeneity grid."""
    hits = sum(s.hits for s in samples)
    exposure = sum(s.exposure for s in samples)
    if exposure <= 0:
        return RestModel(hits, exposure, tuple(1.0 / len(ALPHAS) for _ in ALPHAS))
    rho = (hits + 0.5) / exposure
    logs = []
    for alpha in ALPHAS:
        total = 0.0
        for s in samples:
            mu = rho * s.exposure
            if mu <= 0:
                continue
            total += (
                math.lgamma(s.hits + alpha)
                - math.lgamma(alpha)
                + alpha * math.log(alpha / (alpha + mu))
                + s.hits * math.log(mu / (alpha + mu))
            )
        logs.append(total)
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    return RestModel(hits, exposure, tuple(w / sum(weights) for w in weights))


def rest_draws(model: RestModel, sample: RestSample, count: int, rng: Any) -> Any:
    """Draws of the query's relevant passages in the rest (the judged relevant included)."""
    import numpy as np

    if sample.size <= 0:
        return np.zeros(count)
    unjudged = max(sample.size - sample.judged, 0)
    if model.exposure <= 0:
        # Nothing judged there in any query: all the rest could be relevant.
        return sample.hits + rng.integers(0, unjudged + 1, count)
    rho = rng.gamma(model.hits + 0.5, 1.0 / model.exposure, count)
    alpha = np.asarray(ALPHAS)[rng.choice(len(ALPHAS), size=count, p=model.alpha_weights)]
    g = rng.gamma(alpha + sample.hits, 1.0 / (alpha + rho * sample.exposure))
    mean = rho * g * (sample.found + 1) * unjudged / sample.size
    return sample.hits + np.minimum(rng.poisson(mean), unjudged)
