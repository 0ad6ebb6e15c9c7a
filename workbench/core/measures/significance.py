"""Paired significance tests over per-query differences (candidate − baseline), and Holm's
correction. Pure: numbers in, typed results out; numpy only for the randomization test, and
no scipy (the light install has none: the tests check every p-value against scipy's).

Conventions:

- Differences are compared at a resolution of `RESOLUTION` (1e-9): two that differ by less are
  tied, one smaller than it is zero. Metric values carry float noise (0.3 − 0.1 is not
  0.5 − 0.3); at this resolution the noise never makes a tie or a win out of nothing.
- Every test is two-sided; a p-value is None where the test is undefined (too few queries).
- `paired_t`: Student's t on the differences, n − 1 degrees of freedom (scipy's ttest_rel);
  all differences zero gives p = 1, a constant non-zero difference p = 0.
- `wilcoxon`: signed ranks with zero differences dropped (Wilcoxon's rule) and tied |d|
  given their average rank; the exact distribution of W+ given those ranks when at most
  `WILCOXON_EXACT_MAX` differences are non-zero, else the normal approximation with the tie
  correction and no continuity correction (scipy's `wilcoxon` defaults).
- `randomization`: the mean difference against its distribution under random sign flips of
  each query's difference (Fisher's paired randomization test). Every sign pattern when there
  are at most `permutations` of them, else `permutations` patterns drawn from numpy's PCG64
  seeded with `seed`, p = (1 + as extreme) / (1 + permutations) (never 0: a valid p-value).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.core.random_streams import resampling_stream

RESOLUTION = 1e-9
"""Differences closer than this are tied (float noise of metric values is far below it)."""
TESTS = ("randomization", "paired-t", "wilcoxon")
"""The test names, as `--test` spells them; the first is the default."""
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_SEED = 0
WILCOXON_EXACT_MAX = 50
"""Up to this many non-zero differences, Wilcoxon's p-value is exact (as scipy's `auto`)."""
_CELLS = 1_000_000
"""Signs held at once by the randomization test (8 MB): patterns go in blocks of this over n."""


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired test's outcome: its statistic (t, W+, or the mean difference), the two-sided
    p-value (None: undefined), how many pairs it saw and how the p-value was obtained."""

    test: str
    statistic: float | None
    p_value: float | None
    pairs: int
    method: str
    direction: int = 0
    """Which way the test found the run moved: +1 up, -1 down, 0 neither. The mean's sign for
    t and randomization; for Wilcoxon W+ against its null mean n(n+1)/4, which can disagree
    with the mean (most queries gain a little, one loses much)."""


def quantized(differences: Sequence[float]) -> list[int]:
    """Each difference in units of `RESOLUTION` (exact integers: sums and ties are exact)."""
    return [round(d / RESOLUTION) for d in differences]


def paired_test(
    test: str,
    differences: Sequence[float],
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairedTest:
    """The named test (one of `TESTS`) on the differences."""
    if test == "paired-t":
        return paired_t(differences)
    if test == "wilcoxon":
        return wilcoxon(differences)
    if test == "randomization":
        return randomization(differences, permutations, seed)
    raise ValueError(f"unknown test {test!r}: one of {', '.join(TESTS)}")


# -- Student's t --------------------------------------------------------------------------------


def paired_t(differences: Sequence[float]) -> PairedTest:
    """Student's paired t test; None below two pairs."""
    n = len(differences)
    if n < 2:
        return PairedTest("paired-t", None, None, n, "fewer than 2 queries")
    mean = math.fsum(differences) / n
    method = f"Student's t, {n - 1} degrees of freedom"
    units = set(quantized(differences))
    if len(units) == 1:  # every difference the same: no spread to test against
        if units == {0}:
            return PairedTest("paired-t", 0.0, 1.0, n, method)
        # scipy says p = 0 here; a gate must not read certainty into n equal changes.
        return PairedTest("paired-t", None, None, n, "no spread: every query changed alike")
    variance = math.fsum((d - mean) ** 2 for d in differences) / (n - 1)
    t = mean / math.sqrt(variance / n)
    return PairedTest("paired-t", t, t_two_sided(t, n - 1), n, method, _sign(mean))


def _sign(value: float) -> int:
    """+1, -1 or 0 at the module's resolution."""
    return 0 if abs(value) < RESOLUTION else (1 if value > 0 else -1)


def t_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    return min(1.0, regularized_beta(df / (df + t * t), df / 2, 0.5))


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) by its continued fraction (Lentz's method, Numerical Recipes 6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
        + a * math.log(x) + b * math.log1p(-x)
    )  # fmt: skip
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return result


def normal_two_sided(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2.0))


# -- Wilcoxon's signed ranks ----------------------------------------------------------------------


def signed_ranks(units: Sequence[int]) -> tuple[list[float], list[int]]:
    """Ranks of |d| over the non-zero differences (ties averaged), each with its sign's side
    (1 positive, 0 negative); zeros dropped."""
    nonzero = sorted((abs(u), u > 0) for u in units if u != 0)
    ranks: list[float] = []
    positive: list[int] = []
    i = 0
    while i < len(nonzero):
        j = i
        while j + 1 < len(nonzero) and nonzero[j + 1][0] == nonzero[i][0]:
            j += 1
        average = (i + j + 2) / 2  # ranks i+1 .. j+1
        for k in range(i, j + 1):
            ranks.append(average)
            positive.append(int(nonzero[k][1]))
        i = j + 1
    return ranks, positive


def wilcoxon(differences: Sequence[float]) -> PairedTest:
    """Wilcoxon's signed-rank test (see the module's conventions); statistic W+."""
    if not differences:
        return PairedTest("wilcoxon", None, None, 0, "no queries")
    ranks, positive = signed_ranks(quantized(differences))
    n = len(ranks)
    w_plus = sum(r for r, p in zip(ranks, positive, strict=True) if p)
    if n == 0:
        return PairedTest("wilcoxon", 0.0, 1.0, len(differences), "every difference is zero")
    direction = _sign(w_plus - n * (n + 1) / 4)
    if n <= WILCOXON_EXACT_MAX:
        # Doubled ranks are integers (a tie averages to a half): count sign patterns by sum.
        doubled = [round(2 * r) for r in ranks]
        counts = [1] + [0] * sum(doubled)
        for r in doubled:
            for s in range(len(counts) - 1, r - 1, -1):
                counts[s] += counts[s - r]
        observed = round(2 * w_plus)
        at_least = sum(counts[observed:])
        at_most = sum(counts[: observed + 1])
        p = min(1.0, 2 * min(at_least, at_most) / 2**n)
        method = f"exact distribution of W+ over {n} non-zero differences"
        return PairedTest("wilcoxon", w_plus, p, len(differences), method, direction)
    mean = n * (n + 1) / 4
    ties: dict[float, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    variance = (n * (n + 1) * (2 * n + 1) - sum(t**3 - t for t in ties.values()) / 2) / 24
    z = (w_plus - mean) / math.sqrt(variance)
    method = f"normal approximation over {n} non-zero differences (tie-corrected)"
    return PairedTest(
        "wilcoxon", w_plus, normal_two_sided(z), len(differences), method, direction
    )


# -- the randomization test ------------------------------------------------------------------------


def randomization(
    differences: Sequence[float],
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairedTest:
    """Fisher's paired randomization test of the mean difference (two-sided; see the module's
    conventions). Zero differences do not change under a sign flip, so only the others are
    flipped: the same p-value, and exact enumeration reaches further."""
    import numpy as np

    n = len(differences)
    if permutations < 1:
        raise ValueError(f"permutations must be >= 1, got {permutations}")
    units = np.array([u for u in quantized(differences) if u != 0], dtype=np.int64)
    if n == 0:
        return PairedTest("randomization", None, None, 0, "no queries")
    mean = math.fsum(differences) / n
    if units.size == 0:
        return PairedTest("randomization", mean, 1.0, n, "every difference is zero")
    observed = abs(int(units.sum()))
    m = int(units.size)
    rows = max(1, _CELLS // m)  # sign patterns per block: memory stays near _CELLS numbers
    if m < 63 and 2**m <= permutations:
        shifts = np.arange(m, dtype=np.int64)
        extreme = 0
        for start in range(0, 2**m, rows):
            patterns = np.arange(start, min(start + rows, 2**m), dtype=np.int64)[:, None]
            signs = ((patterns >> shifts) & 1) * 2 - 1
            extreme += int((np.abs(signs @ units) >= observed).sum())
        method = f"exact: all {2**m:,} sign patterns of {m} non-zero differences"
        return PairedTest("randomization", mean, extreme / 2**m, n, method, _sign(mean))
    rng = resampling_stream(seed)
    extreme = 0
    for start in range(0, permutations, rows):
        block = min(rows, permutations - start)
        signs = rng.integers(0, 2, size=(block, m), dtype=np.int64) * 2 - 1
        extreme += int((np.abs(signs @ units) >= observed).sum())
    method = f"{permutations:,} random sign patterns, seed {seed}"
    p = (extreme + 1) / (permutations + 1)
    return PairedTest("randomization", mean, p, n, method, _sign(mean))


# -- Holm ----------------------------------------------------------------------------------------


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the p-values given (None: not tested, not counted in
    the family, stays None): the i-th smallest of m becomes max over j <= i of
    min(1, (m − j + 1) p_(j))."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
