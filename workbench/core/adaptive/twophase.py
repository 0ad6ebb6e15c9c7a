"""Two-phase sampling of the rest of the corpus, stratified by a model judge's label (pure).

The reserve is a simple random sample of each rest rank band (`frame`). Where the judge covariate
(`judge`) labelled a query's reserve, that labelling is the first phase: each band's reserve splits
into the judge-positive passages and the others (judge-negative or unlabelled). People judge the
second phase: a simple random sample of each stratum, drawn by the queue with its probability
recorded (`picking.rest_draw`), the judge-positive stratum at a higher rate when it holds more
relevant per passage (Neyman-like: each stratum's reserve x sqrt(its estimated rate)).

The rest's model (`rest`) then gives the judge-positive stratum a rate rho times the other's: a
passage of band b in stratum s is relevant at rate kappa rho^s (m_b / m_0)^-gamma g_q s_q, the
fall gamma, the query's departure g_q ~ Gamma(alpha, alpha) and its scale s_q as in `rest`. rho
is on a grid (`RATIOS`, half its prior on 1: the judge says nothing), weighted with gamma and
alpha by the likelihood of every stratum's hits (kappa integrated out under its Jeffreys prior
with the exposure E_0 + rho E_1); given them kappa's posterior is Gamma(H + 1/2, E_0 + rho E_1).
(Two free rates, one per stratum, widened the interval where the judge says nothing: the small
stratum's rate, from a few judged passages, was mostly its prior's half hit.) A band's unjudged
relevant: in each stratum's unjudged reserve Poisson at the stratum's rate, and in the passages
outside the reserve Poisson at the mixture rate kappa (pi rho + 1 - pi), where pi ~ Beta(M_1 +
1/2, M_0 + 1/2) is the band's judge-positive share as its reserve (a simple random sample of the
band) measures it: the judge's counts scaled to the band, with their sampling error. A judge
that agrees with people shows a large rho and a query's own judge counts say much of its rest;
a useless one keeps rho near 1, about the one-stratum interval; never a bias from the judge's
labels (they only choose the strata and the allocation; every rate is measured
by people on random samples)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.adaptive.frame import Band
from workbench.core.adaptive.judge import JudgeCovariate
from workbench.core.adaptive.records import QueryRecord
from workbench.core.adaptive.rest import (
    BandSample,
    RestModel,
    RestSample,
    SharedDraws,
    StratumSample,
    fit_rest,
    grid_posterior,
    middle_rank,
    outside_share,
    study_alphas,
)

STRATA = 2
"""Stratum 0: judge-negative or unlabelled; stratum 1: judge-positive."""
RATIOS = ((1.0, 0.5), *((2.0**k, 0.5 / 13) for k in (-3, -2, -1, *range(1, 11))))
"""(rho, prior) of the grid of the judge-positive stratum's rate over the other's: half the prior
on 1 (the judge says nothing), the rest spread over 1/8 to 1024, so a judge that says nothing
keeps about the one-stratum interval and one that sorts the relevant from the rest soon shows a
ratio of tens to hundreds (a kappa-.8 judge on cranfield: a positive's rate ~100x a
negative's); chosen before any measurement, not tuned."""
POSITIVE_PRIOR = 0.5
"""The rate the queue's allocation assumes of a judge-positive cell nobody judged yet (a band's
own prior is far lower: without this its few judge-positive passages would wait for a rate that
only judging them can give)."""


def reserve_positives(q: QueryRecord, judge: JudgeCovariate | None) -> frozenset[int] | None:
    """The frame indices of the query's reserve passages the judge labelled relevant; None
    without a judge or when it labelled none of the query's reserve (then no strata)."""
    import numpy as np

    frame = q.frame
    if judge is None or frame.reserve_size == 0:
        return None
    if q.judge_columns is None:
        q.judge_columns = judge.columns(frame.query_id, frame.doc_ids)
    reserve = q.judge_columns[frame.candidates :]
    if not (reserve[:, 2] == 0).any():
        return None
    return frozenset(int(i) + frame.candidates for i in np.nonzero(reserve[:, 0] > 0)[0])


def band_sample(
    band: Band, grades: Mapping[int, bool], positives: frozenset[int] | None
) -> BandSample:
    """The band's judged reserve (`rest.BandSample`), split by the judge's label when
    `positives` (`reserve_positives`) is given."""
    judged = [i for i in band.members if i in grades]
    hits = sum(1 for i in judged if grades[i])
    if positives is None:
        return BandSample(band.name, band.size, len(judged), hits)
    strata = []
    for label in range(STRATA):
        members = [i for i in band.members if (i in positives) == bool(label)]
        done = [i for i in members if i in grades]
        strata.append(StratumSample(len(members), len(done), sum(1 for i in done if grades[i])))
    return BandSample(band.name, band.size, len(judged), hits, tuple(strata))


def cells(b: BandSample) -> tuple[StratumSample, ...]:
    """A band's strata; a band without (a query the judge did not label) is all stratum 0."""
    return b.strata or (StratumSample(b.judged, b.judged, b.hits),)


@dataclass(frozen=True, slots=True)
class TwoPhaseModel(RestModel):
    """The rest's model with one shared rate per judge stratum."""

    ratios: tuple[float, ...] = ()
    """rho at each grid point (`grid`'s order; its exposure there is E_0 + rho E_1)."""
    cell_hits: Mapping[tuple[str, int], int] = field(default_factory=dict)
    cell_exposure: Mapping[tuple[str, int], float] = field(default_factory=dict)
    """Per (band, stratum): hits and exposure summed over queries (the allocation's rates)."""

    def shared(self, count: int, rng: Any) -> SharedDraws | None:
        return two_phase_shared(self, count, rng)

    def unjudged(self, sample: RestSample, total: Any, shared: SharedDraws, rng: Any) -> Any:
        return two_phase_draws(self, sample, total, shared, rng)

    def stratum_rate(self, band: str, stratum: int) -> float | None:
        """Posterior mean of the stratum's own rate in the band per unit of scale (None: never
        sampled)."""
        exposure = self.cell_exposure.get((band, stratum), 0.0)
        return (self.cell_hits.get((band, stratum), 0) + 0.5) / exposure if exposure > 0 else None


def fit_rest_model(samples: Sequence[RestSample]) -> RestModel:
    """The rest's model: two-phase where some band is split by a judge's label, else
    `rest.fit_rest`'s."""
    if any(b.strata for s in samples for b in s.bands):
        return fit_two_phase(samples)
    return fit_rest(samples)


def fit_two_phase(samples: Sequence[RestSample]) -> TwoPhaseModel:
    """`rest.fit_rest` with the judge-positive stratum's rate rho times the other's, rho on
    `RATIOS` (the module docstring)."""
    import numpy as np

    hits: dict[str, int] = {}
    exposure: dict[str, float] = {}
    cell_hits: dict[tuple[str, int], int] = {}
    cell_exposure: dict[tuple[str, int], float] = {}
    rows = []
    for i, s in enumerate(samples):
        for b in s.bands:
            hits[b.name] = hits.get(b.name, 0) + b.hits
            exposure[b.name] = exposure.get(b.name, 0.0) + b.judged * s.scale
            for k, cell in enumerate(cells(b)):
                key = (b.name, k)
                cell_hits[key] = cell_hits.get(key, 0) + cell.hits
                cell_exposure[key] = cell_exposure.get(key, 0.0) + cell.judged * s.scale
                rows.append((i, b, s, k, cell))
    outside = outside_share(samples)
    alphas = study_alphas(outside)
    parts = {"cell_hits": cell_hits, "cell_exposure": cell_exposure}
    flat = TwoPhaseModel(hits, exposure, outside=outside, **parts)
    if not rows:
        return flat
    mids = np.array([middle_rank(b, s.bands) for _, b, s, _, _ in rows])
    reference = float(mids.min())
    hit_rows = np.array([c.hits for *_, c in rows], dtype=float)
    total = int(hit_rows.sum())
    posterior = grid_posterior(
        samples, [i for i, *_ in rows], [c.judged * s.scale for _, _, s, _, c in rows], hit_rows,
        np.log(mids / reference), alphas, total, RATIOS, np.array([k == 1 for *_, k, _ in rows]),
    )  # fmt: skip
    if posterior is None:
        return flat
    grid, ratios, weights = posterior
    return TwoPhaseModel(
        hits, exposure, grid, weights, total, reference, outside, ratios, cell_hits, cell_exposure
    )


def two_phase_shared(model: TwoPhaseModel, count: int, rng: Any) -> SharedDraws | None:
    """`rest.shared_draws` with kappa one row per stratum (STRATA x count): kappa_0, and rho
    kappa_0."""
    import numpy as np

    if not model.grid:
        return None
    pick = rng.choice(len(model.grid), size=count, p=model.weights)
    gamma, alpha, exposed = np.asarray(model.grid)[pick].T
    kappa = rng.gamma(model.total_hits + 0.5, 1.0 / exposed)
    return SharedDraws(gamma, alpha, np.array([kappa, np.asarray(model.ratios)[pick] * kappa]))


def two_phase_draws(
    model: TwoPhaseModel, sample: RestSample, total: Any, shared: SharedDraws, rng: Any
) -> Any:
    """`rest.rest_draws` with the strata (the module docstring): `total` holds the judged
    relevant; the draws of the unjudged relevant are added to it."""
    import numpy as np

    gamma, alpha, kappa = shared.gamma, shared.alpha, shared.kappa
    falls = [model.fall(b, sample.bands, gamma) for b in sample.bands]
    exposure = np.zeros(len(total))
    for b, fall in zip(sample.bands, falls, strict=True):
        for k, cell in enumerate(cells(b)):
            exposure += kappa[k] * fall * sample.scale * cell.judged
    g = rng.gamma(alpha + sample.hits, 1.0 / (alpha + exposure))
    for b, fall in zip(sample.bands, falls, strict=True):
        unit = fall * g * sample.scale
        for k, cell in enumerate(b.strata):
            unjudged = max(cell.reserve - cell.judged, 0)
            total += np.minimum(rng.poisson(kappa[k] * unit * unjudged), unjudged)
        if b.strata:
            outside = max(b.size - sum(c.reserve for c in b.strata), 0)
            pi = rng.beta(b.strata[1].reserve + 0.5, b.strata[0].reserve + 0.5, len(total))
            rate = pi * kappa[1] + (1.0 - pi) * kappa[0]
        else:
            outside, rate = max(b.size - b.judged, 0), kappa[0]
        total += np.minimum(rng.poisson(rate * unit * outside), outside)
    return total
