"""The paired tests and Holm's correction of `workbench.core.measures.significance`, checked against
scipy and statsmodels (test-only references: the light install has neither) on seeded data.

Tolerances, and why:
- paired t, Wilcoxon (exact and normal), exact randomization, Holm: 1e-12 or tighter. Both
  sides evaluate the same closed form or enumerate the same finite distribution; only float
  rounding (the incomplete beta's continued fraction, sums in another order) differs.
- randomization by random sign patterns: two Monte Carlo estimates of one p. Ours counts
  |T| >= |t| (variance p(1-p)/B), scipy doubles its one-sided count (variance ~2p/B). With
  B = 200,000 both sides the difference has sd sqrt((3p - 2p^2)/B) <= 0.0028; we allow 5 sd
  (+ 2/B for the +1 both add). Against scipy's exact enumeration (n = 18): 5 sd of ours alone.

Data go to scipy in the units our tests work in (`quantized`, resolution 1e-9): at that
resolution ties are exact on both sides. For the randomization test scipy gets the integer
units: its float mean of a sign pattern summing to 0 comes out as ±1e-18, which its tolerance
(relative to an observed 0) does not absorb (one seeded case read 0.99609 for an exact 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.measures.significance import (
    RESOLUTION,
    holm,
    paired_t,
    quantized,
    randomization,
    regularized_beta,
    signed_ranks,
    wilcoxon,
)

scipy_stats = pytest.importorskip("scipy.stats")
multitest = pytest.importorskip("statsmodels.stats.multitest")


def seeded_differences(seed: int, n: int, kind: str) -> np.ndarray:
    """Differences shaped like metric deltas: continuous, or on a coarse grid (ties, zeros)."""
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        d = rng.normal(rng.uniform(-0.05, 0.05), rng.uniform(0.02, 0.3), n)
    else:  # e.g. P@10 deltas: multiples of 0.1, many zeros
        d = rng.integers(-4, 5, n) / 10 * (rng.random(n) < 0.7)
    return np.array(quantized(list(d)), dtype=np.int64) * RESOLUTION


def has_ties_or_zeros(d: np.ndarray) -> bool:
    units = np.array(quantized(list(d)))
    nonzero = np.abs(units[units != 0])
    return bool((units == 0).any() or len(set(nonzero.tolist())) < nonzero.size)


# -- Student's t ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(60))
def test_paired_t_equals_scipy_ttest_rel(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.choice([2, 3, 5, 12, 50, 225, 1000]))
    d = seeded_differences(seed, n, "continuous" if seed % 2 else "grid")
    if len(set(quantized(list(d)))) == 1:
        pytest.skip("no spread: scipy gives nan")
    baseline = rng.random(n)
    ours = paired_t(list((baseline + d) - baseline))
    ref = scipy_stats.ttest_rel(baseline + d, baseline)
    assert ours.pairs == n
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12, rel=1e-9)


def test_paired_t_edges() -> None:
    assert paired_t([0.2]).p_value is None and paired_t([]).p_value is None
    assert paired_t([0.0, 0.0, 0.0]).p_value == 1.0
    constant = paired_t([0.1, 0.1, 0.1])  # scipy says p = 0: no spread is no test
    assert constant.p_value is None and "no spread" in constant.method
    assert paired_t([-1.0, -1.0]).p_value is None


def test_each_test_says_which_way_the_run_moved() -> None:
    # twenty queries gain a little, one loses much: the mean falls, the ranks rise
    mixed = [0.01] * 20 + [-1.0]
    assert wilcoxon(mixed).direction == 1 and wilcoxon(mixed).p_value < 0.01
    assert paired_t(mixed).direction == -1 and randomization(mixed).direction == -1
    assert wilcoxon([0.0, 0.0]).direction == 0


def test_incomplete_beta_against_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(7)
    for _ in range(500):
        a, b, x = rng.uniform(0.05, 600), rng.uniform(0.05, 50), rng.random()
        assert regularized_beta(x, a, b) == pytest.approx(
            special.betainc(a, b, x), abs=1e-13, rel=1e-9
        )


# -- Wilcoxon ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_wilcoxon_exact_without_ties_equals_scipy(seed: int) -> None:
    """n <= 50, no ties or zeros: scipy's default is the exact distribution too."""
    n = int(np.random.default_rng(seed).integers(1, 51))
    d = seeded_differences(seed, n, "continuous")
    assert not has_ties_or_zeros(d)
    ours = wilcoxon(list(d))
    assert "exact" in ours.method
    assert ours.p_value == pytest.approx(scipy_stats.wilcoxon(d).pvalue, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_wilcoxon_with_ties_on_few_queries_equals_scipy(seed: int) -> None:
    """n <= 13 with ties or zeros: scipy enumerates every sign pattern, as our exact count."""
    n = int(np.random.default_rng(seed).integers(2, 14))
    d = seeded_differences(seed, n, "grid")
    if not np.any(d):
        assert wilcoxon(list(d)).p_value == 1.0  # scipy: nan (nothing to rank)
        return
    ours = wilcoxon(list(d))
    assert ours.p_value == pytest.approx(scipy_stats.wilcoxon(d).pvalue, abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_wilcoxon_exact_with_ties_equals_scipy_enumeration(seed: int) -> None:
    """14-18 pairs with ties: scipy's default falls back to the normal approximation; ours stays
    exact, so the reference is scipy's own enumeration of every sign pattern of W+ (ranks from
    scipy's rankdata)."""
    n = 14 + seed % 5
    d = seeded_differences(500 + seed, n, "grid")
    ranks = np.zeros(n)
    nonzero = d != 0
    ranks[nonzero] = scipy_stats.rankdata(np.abs(d[nonzero]))

    def w_plus(x: np.ndarray, axis: int) -> np.ndarray:
        return np.sum((x > 0) * ranks, axis=axis)

    ref = scipy_stats.permutation_test(
        (d,), w_plus, permutation_type="samples", n_resamples=np.inf, vectorized=True
    ).pvalue
    assert wilcoxon(list(d)).p_value == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("seed", range(30))
def test_wilcoxon_normal_approximation_equals_scipy(seed: int) -> None:
    """More than 50 pairs: the tie-corrected normal approximation, no continuity correction."""
    n = int(np.random.default_rng(seed).integers(51, 400))
    d = seeded_differences(900 + seed, n, "grid" if seed % 2 else "continuous")
    ours = wilcoxon(list(d))
    if sum(1 for u in quantized(list(d)) if u) <= 50:
        pytest.skip("50 non-zero or fewer: ours is exact there")
    assert "normal" in ours.method
    assert ours.p_value == pytest.approx(scipy_stats.wilcoxon(d).pvalue, abs=1e-12)


def test_signed_ranks_average_ties_and_drop_zeros() -> None:
    ranks, positive = signed_ranks([0, 3, -3, 1, -7, 0])
    assert sorted(zip(ranks, positive, strict=True)) == [(1.0, 1), (2.5, 0), (2.5, 1), (4.0, 0)]


# -- the randomization test ----------------------------------------------------------------------


def scipy_sign_flips(units: np.ndarray, resamples: float, seed: int = 0) -> float:
    return scipy_stats.permutation_test(
        (units, np.zeros_like(units)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=resamples,
        rng=seed,
        alternative="two-sided",
        vectorized=True,
    ).pvalue


@pytest.mark.parametrize("seed", range(40))
def test_randomization_exact_equals_scipy_enumeration(seed: int) -> None:
    n = int(np.random.default_rng(seed).integers(2, 14))
    d = seeded_differences(2000 + seed, n, "grid" if seed % 2 else "continuous")
    ours = randomization(list(d), permutations=10_000)
    assert ours.method.startswith("exact") or not np.any(d)
    units = np.array(quantized(list(d)), dtype=np.int64)
    assert ours.p_value == pytest.approx(scipy_sign_flips(units, np.inf), abs=1e-12)


@pytest.mark.parametrize("n,seed", [(30, 1), (60, 2), (120, 3), (52, 4)])
def test_randomization_sampled_agrees_with_scipy_sampled(n: int, seed: int) -> None:
    resamples = 200_000
    d = seeded_differences(3000 + seed, n, "grid" if seed % 2 else "continuous")
    d = d + 0.02 * (np.abs(d) > 0)  # a real effect on some, so p is not always near 1
    units = np.array(quantized(list(d)), dtype=np.int64)
    ours = randomization(list(units * RESOLUTION), permutations=resamples, seed=seed)
    ref = scipy_sign_flips(units, resamples, seed=seed + 100)
    p = (ours.p_value + ref) / 2
    sd = math.sqrt(max(3 * p - 2 * p * p, 1e-9) / resamples)
    assert abs(ours.p_value - ref) <= 5 * sd + 2 / resamples, (ours.p_value, ref, sd)


def test_randomization_sampled_agrees_with_exact_enumeration() -> None:
    d = seeded_differences(4242, 18, "continuous") + 0.03
    units = np.array(quantized(list(d)), dtype=np.int64)
    exact = scipy_sign_flips(units, np.inf)  # all 262,144 patterns
    ours = randomization(list(d), permutations=200_000, seed=0)
    assert ours.method.startswith("200,000 random")
    sd = math.sqrt(exact * (1 - exact) / 200_000)
    assert abs(ours.p_value - exact) <= 5 * sd + 1 / 200_000, (ours.p_value, exact)


def test_randomization_is_reproducible_and_never_zero() -> None:
    d = list(seeded_differences(5, 80, "continuous") + 0.2)  # a huge effect
    first, again = randomization(d, 10_000, seed=3), randomization(d, 10_000, seed=3)
    assert first == again
    assert first.p_value == pytest.approx(1 / 10_001)  # no pattern as extreme: (0 + 1)/(B + 1)
    assert randomization([0.0] * 20).p_value == 1.0
    assert randomization([]).p_value is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=40), st.integers(0, 2**32))
def test_a_flipped_comparison_has_the_same_p_value(grid: list[int], seed: int) -> None:
    """Baseline and run swapped: the differences change sign, no p-value changes."""
    d = [g / 7 for g in grid]  # thirds and sevenths: float noise everywhere
    flipped = [-x for x in d]
    for test in (paired_t, wilcoxon):
        assert test(d).p_value == pytest.approx(test(flipped).p_value, abs=1e-12)
    assert randomization(d, 2_000, seed).p_value == randomization(flipped, 2_000, seed).p_value


# -- Holm ----------------------------------------------------------------------------------------


def test_holm_by_hand() -> None:
    # sorted: .005*4 = .02; .01*3 = .03; .03*2 = .06; .04*1 = .04 -> kept at .06 (monotone)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, None, 0.01]) == [pytest.approx(0.5), None, pytest.approx(0.02)]
    assert holm([]) == [] and holm([0.9, 0.9]) == [1.0, 1.0]  # 2 × .9 capped at 1


@pytest.mark.parametrize("seed", range(40))
def test_holm_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = rng.choice([rng.random(m), rng.random(m) ** 4, np.round(rng.random(m), 1)])
    reject, corrected, _, _ = multitest.multipletests(p, alpha=0.05, method="holm")
    ours = holm(list(p))
    assert ours == pytest.approx(list(corrected), abs=1e-15)
    assert [a <= 0.05 for a in ours] == list(reject)
