"""Krippendorff's alpha at the ordinal level, for any number of raters per item and missing
ratings (an item graded once is not pairable and counts for nothing): agreement among
annotators who did not all grade the same items, where Fleiss needs every rater on every item.

From the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
o_ck sums, over items, the ordered pairs of grades (c, k) given by different raters, each item
weighted 1 / (m_u - 1); n_c = sum_k o_ck; the ordinal distance of c <= k is
(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 over the scale's grades in order; and
alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ONE_VALUE = "every pairable grade is the same: alpha is undefined"


@dataclass(frozen=True, slots=True)
class AlphaResult:
    """Ordinal alpha over `annotators` on the `items` graded by two or more of them."""

    annotators: tuple[str, ...]
    alpha: float | None
    items: int
    pairable_values: int
    reason: str | None = None

    def to_json(self) -> dict:
        return {
            "annotators": list(self.annotators),
            "alpha": self.alpha,
            "items": self.items,
            "pairable_values": self.pairable_values,
            "level": "ordinal",
            "reason": self.reason,
        }


def ordinal_alpha(
    ratings: Iterable[Sequence[int]], categories: Sequence[int]
) -> tuple[float | None, int, int]:
    """(alpha, pairable items, pairable values) of the items' grades (one list per item, any
    length); alpha None when there is no pairable value or all agree on one grade."""
    order = sorted(categories)
    index = {c: i for i, c in enumerate(order)}
    size = len(order)
    coincidence = [[0.0] * size for _ in range(size)]
    items = values = 0
    for grades in ratings:
        m = len(grades)
        if m < 2:
            continue
        items += 1
        values += m
        counts = [0] * size
        for g in grades:
            counts[index[g]] += 1
        for c in range(size):
            if not counts[c]:
                continue
            for k in range(size):
                pairs = counts[c] * (counts[k] - (1 if c == k else 0))
                if pairs:
                    coincidence[c][k] += pairs / (m - 1)
    totals = [sum(row) for row in coincidence]
    n = sum(totals)
    if n <= 1:
        return None, items, values

    def distance(c: int, k: int) -> float:
        low, high = min(c, k), max(c, k)
        return (sum(totals[low : high + 1]) - (totals[low] + totals[high]) / 2) ** 2

    observed = sum(coincidence[c][k] * distance(c, k) for c in range(size) for k in range(size))
    expected = sum(totals[c] * totals[k] * distance(c, k) for c in range(size) for k in range(size))
    if expected == 0:
        return None, items, values
    return 1.0 - (n - 1) * observed / expected, items, values


def alpha_report(
    grades: Mapping[str, Mapping[tuple[str, str], int]],
    annotators: Sequence[str],
    categories: Sequence[int],
) -> AlphaResult | None:
    """Ordinal alpha over `annotators` (two or more), missing grades allowed; None with fewer
    than two annotators."""
    if len(annotators) < 2:
        return None
    items = sorted({item for a in annotators for item in grades.get(a, {})})
    ratings = [[grades[a][item] for a in annotators if item in grades.get(a, {})] for item in items]
    alpha, pairable, values = ordinal_alpha(ratings, categories)
    reason = None
    if alpha is None:
        reason = ONE_VALUE if pairable else "no item was graded by two of them"
    return AlphaResult(tuple(annotators), alpha, pairable, values, reason)
