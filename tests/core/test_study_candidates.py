"""The candidates' missing counts for the study's draws (`core.study.candidates`): an empirical
Bayes posterior over the study's queries."""

from __future__ import annotations

import numpy as np

from workbench.core.study.candidates import MIN_QUERIES, Evidence, missing_draws


def test_draws_are_whole_counts_within_the_unjudged():
    rng = np.random.default_rng(0)
    evidence = {f"q{i}": Evidence(float(rng.normal(3, 6)), 4.0, 12) for i in range(20)}
    draws = missing_draws(evidence, 500, rng)
    for values in draws.values():
        assert (values == np.floor(values)).all() and values.min() >= 0 and values.max() <= 12


def test_a_query_whose_draws_all_missed_is_shrunk_toward_the_study_not_to_none():
    """Its estimate below 0 said 'none missing' under a gamma; the study's other queries show
    about 20 missing each, so its posterior does not sit at 0."""
    rng = np.random.default_rng(1)
    evidence = {f"q{i}": Evidence(float(rng.normal(20, 3)), 3.0, 150) for i in range(30)}
    evidence["missed"] = Evidence(-4.0, 25.0, 150)
    draws = missing_draws(evidence, 2000, rng)
    assert np.median(draws["missed"]) > 10
    assert abs(np.median(draws["q0"]) - evidence["q0"].estimate) < 4  # its own draws decide


def test_a_study_of_small_queries_keeps_their_counts_small():
    """Cranfield's case: few relevant per query; an estimate near 0 with a wide error must not
    lift every query's count by a share of its error (the normal cut at 0 did)."""
    rng = np.random.default_rng(2)
    evidence = {f"q{i}": Evidence(float(rng.normal(0.5, 1.0)), 4.0, 150) for i in range(100)}
    draws = missing_draws(evidence, 2000, rng)
    mean_missing = np.mean([values.mean() for values in draws.values()])
    clipped = np.mean([np.maximum(rng.normal(ev.estimate, ev.error, 2000), 0).mean()
                       for ev in evidence.values()])  # fmt: skip
    assert mean_missing < 0.6 * clipped


def test_too_few_queries_to_pool_take_each_estimate_alone():
    rng = np.random.default_rng(3)
    evidence = {f"q{i}": Evidence(10.0, 2.0, 100) for i in range(MIN_QUERIES - 1)}
    draws = missing_draws(evidence, 4000, rng)
    assert all(abs(values.mean() - 10.0) < 0.3 for values in draws.values())


def test_each_half_of_the_draws_is_one_estimator_and_the_interval_their_hull():
    """The pooled posterior in one half of the draws, each query's normal cut at 0 in the other:
    a study interval is the hull of each half's own."""
    from workbench.core.study.intervals import _interval

    rng = np.random.default_rng(4)
    evidence = {f"q{i}": Evidence(float(rng.normal(0.5, 1.0)), 4.0, 150) for i in range(50)}
    models = np.arange(4000) % 2
    draws = missing_draws(evidence, 4000, rng, models)
    alone = np.mean([values[models == 1].mean() for values in draws.values()])
    pooled = np.mean([values[models == 0].mean() for values in draws.values()])
    assert pooled < 0.6 * alone  # the normal cut at 0 lifts a small query's count; pooling not
    values = np.where(models == 0, rng.normal(0, 1, 4000), rng.normal(5, 1, 4000))
    hull = _interval(values, 1, models)
    assert hull.low < -1.5 and hull.high > 6.5  # each half's own ends, not the mixture's
