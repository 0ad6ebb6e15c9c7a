"""One grid posterior (`rest.grid_posterior`) under the rest's model with and without a judge's
strata: a judge whose ratio is held at 1 (it says nothing) fits as no judge at all."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.core.adaptive import rest
from workbench.core.adaptive.rest import BandSample, RestSample, StratumSample, grid_posterior
from workbench.core.adaptive.twophase import fit_two_phase


def _samples(rng, queries=12):
    out = []
    for _ in range(queries):
        bands = []
        for name, size in (("rank:101-300", 200), ("rest", 4000)):
            cells = tuple(StratumSample(40, int(rng.integers(0, 8)), 0) for _ in range(2))
            cells = tuple(dataclasses.replace(c, hits=int(rng.binomial(c.judged, 0.2)))
                          for c in cells)  # fmt: skip
            judged, hits = sum(c.judged for c in cells), sum(c.hits for c in cells)
            bands.append(BandSample(name, size, judged, hits, cells))
        out.append(RestSample(tuple(bands), float(rng.integers(1, 9))))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_a_judge_held_at_ratio_one_fits_as_no_judge(seed):
    split = _samples(np.random.default_rng(seed))
    plain = [RestSample(tuple(dataclasses.replace(b, strata=()) for b in s.bands), s.weighted)
             for s in split]  # fmt: skip
    rows = [(i, b, s, k, c) for i, s in enumerate(split) for b in s.bands
            for k, c in enumerate(b.strata)]  # fmt: skip
    mids = np.array([rest.middle_rank(b, s.bands) for _, b, s, _, _ in rows])
    hit_rows = np.array([c.hits for *_, c in rows], dtype=float)
    alphas = rest.study_alphas(rest.outside_share(plain))
    posterior = grid_posterior(
        split, [i for i, *_ in rows], [c.judged * s.scale for _, _, s, _, c in rows], hit_rows,
        np.log(mids / mids.min()), alphas, int(hit_rows.sum()),
        positive=np.array([k == 1 for *_, k, _ in rows]),
    )  # fmt: skip
    model = rest.fit_rest(plain)
    assert posterior is not None
    grid, ratios, weights = posterior
    assert set(ratios) == {1.0}
    assert np.allclose(grid, model.grid, rtol=1e-12)
    assert np.allclose(weights, model.weights, rtol=1e-9, atol=1e-15)
    two_phase = fit_two_phase(split)
    assert len(two_phase.grid) > len(model.grid) and sum(two_phase.weights) == pytest.approx(1.0)


def test_no_exposure_no_grid():
    empty = [RestSample((BandSample("rest", 100, 0, 0),), 1.0)]
    assert grid_posterior(empty, [0], [0.0], np.zeros(1), np.zeros(1), (1.0,), 0) is None
    assert rest.fit_rest(empty).grid == ()
