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
