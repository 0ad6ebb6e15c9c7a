"""Chance-corrected agreement statistics (pure: numbers in, numbers out; numpy only when asked).

Cohen's kappa (unweighted, weighted, binary at a relevance threshold) and Fleiss' kappa, with
their intervals, and `compare`: every figure for two sets of grades. Conventions:

- Categories are given (the store's grade scale), not the grades that happen to occur: kappa is
  0 when chance agreement p_e < 1 and *undefined* (None; sklearn returns nan) when p_e = 1,
  i.e. both annotators used the same single grade.
- Weighted kappa uses agreement weights on the grade values; quadratic 1 - d^2 / dmax^2 equals
  sklearn's ``weights="quadratic"`` with ``labels=[0, 1, 2, 3]`` on the scale 0..3.
- The 95% CI of Cohen's kappa is analytic: the large-sample variance of Fleiss, Cohen & Everitt
  (1969), then a Wald interval kappa +/- 1.96 SE clipped to [-1, 1]. It is optimistic for
  small n (it is [1, 1] at perfect agreement), hence n beside every figure.
- Fleiss' kappa gets a seeded percentile bootstrap over items (1000 resamples, seed 0).
- The field's bar is kappa >= 0.6 (``KAPPA_BAR``); a comparison ``meets_bar`` on unweighted
  kappa, and ``below_bar`` names every figure short of it, undefined ones included.
- `compare` withholds every kappa (None, with the reason) on fewer than ``min_items`` shared
  items, only when asked: the callers set the minimum (agreement.MIN_SHARED_ITEMS).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.core.interval_level import TAILS, Z
from workbench.core.random_streams import resampling_stream

KAPPA_BAR = 0.6
Z_95 = Z
CI_METHOD = "analytic large-sample SE (Fleiss, Cohen & Everitt 1969), Wald 95%"
FLEISS_CI_METHOD = "percentile bootstrap over items, 1000 resamples, numpy seed 0"


@dataclass(frozen=True, slots=True)
class Kappa:
    """A kappa with its sample size; `kappa` and `ci` are None when undefined (p_e = 1, n = 0)."""

    kappa: float | None
    n: int
    ci: tuple[float, float] | None = None
    se: float | None = None

    @property
    def meets_bar(self) -> bool:
        return self.kappa is not None and self.kappa >= KAPPA_BAR


def weight_matrix(categories: Sequence[int], weights: str | None) -> list[list[float]]:
    """Agreement weights: 1 on the diagonal; off it 0 (None), or 1 - d/dmax (linear), or
    1 - d^2/dmax^2 (quadratic), d the grade distance."""
    span = (max(categories) - min(categories)) if categories else 0
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"unknown weights {weights!r}")

    def weight(a: int, b: int) -> float:
        if a == b:
            return 1.0
        if weights is None or span == 0:
            return 0.0
        if weights == "linear":
            return 1.0 - abs(a - b) / span
        return 1.0 - (a - b) ** 2 / span**2

    return [[weight(a, b) for b in categories] for a in categories]


def confusion_matrix(
    pairs: Iterable[tuple[int, int]], categories: Sequence[int]
) -> list[list[int]]:
    """Counts: row = first annotator's grade, column = second's, both in `categories` order."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for a, b in pairs:
        matrix[index[a]][index[b]] += 1
    return matrix


def kappa_from_confusion(
    matrix: Sequence[Sequence[int]], weights: Sequence[Sequence[float]]
) -> Kappa:
    """Cohen's kappa (weighted by agreement weights) with the FCE-1969 analytic SE and 95% CI."""
    n = sum(sum(row) for row in matrix)
    if n == 0:
        return Kappa(None, 0)
    k = len(matrix)
    p = [[matrix[i][j] / n for j in range(k)] for i in range(k)]
    row = [sum(p[i]) for i in range(k)]
    col = [sum(p[i][j] for i in range(k)) for j in range(k)]
    p_o = sum(weights[i][j] * p[i][j] for i in range(k) for j in range(k))
    p_e = sum(weights[i][j] * row[i] * col[j] for i in range(k) for j in range(k))
    if 1.0 - p_e <= 1e-12:
        return Kappa(None, n)
    kappa = (p_o - p_e) / (1.0 - p_e)
    w_row = [sum(col[j] * weights[i][j] for j in range(k)) for i in range(k)]
    w_col = [sum(row[i] * weights[i][j] for i in range(k)) for j in range(k)]
    spread = sum(
        p[i][j] * (weights[i][j] - (w_row[i] + w_col[j]) * (1.0 - kappa)) ** 2
        for i in range(k)
        for j in range(k)
    )
    variance = (spread - (kappa - p_e * (1.0 - kappa)) ** 2) / (n * (1.0 - p_e) ** 2)
    se = math.sqrt(max(variance, 0.0))
    ci = (max(-1.0, kappa - Z_95 * se), min(1.0, kappa + Z_95 * se))
    return Kappa(kappa, n, ci, se)


def cohen_kappa(
    pairs: Sequence[tuple[int, int]], categories: Sequence[int], weights: str | None = None
) -> Kappa:
    """Cohen's kappa of paired grades over the given categories (see the module docstring)."""
    categories = sorted(categories)
    return kappa_from_confusion(
        confusion_matrix(pairs, categories), weight_matrix(categories, weights)
    )


def binary_kappa(pairs: Sequence[tuple[int, int]], rel_threshold: int = 1) -> Kappa:
    """Unweighted kappa on relevant (grade >= threshold) vs not."""
    binary = [(int(a >= rel_threshold), int(b >= rel_threshold)) for a, b in pairs]
    return cohen_kappa(binary, [0, 1])


def fleiss_kappa_from_counts(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss (1971): rows are items, columns categories, each row summing to the same number of
    raters m >= 2. None when chance agreement is 1 (every rating in one category) or no items."""
    if not table:
        return None
    raters = sum(table[0])
    if raters < 2 or any(sum(r) != raters for r in table):
        raise ValueError("every item needs the same number (>= 2) of ratings")
    items = len(table)
    p_bar = sum((sum(c * c for c in r) - raters) / (raters * (raters - 1)) for r in table) / items
    shares = [sum(r[j] for r in table) / (items * raters) for j in range(len(table[0]))]
    p_e = sum(s * s for s in shares)
    if 1.0 - p_e <= 1e-12:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def fleiss_bootstrap_ci(
    table: Sequence[Sequence[int]], resamples: int = 1000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile 95% interval of Fleiss' kappa, resampling items with replacement (numpy's
    PCG64 seeded with `seed`)."""
    import numpy as np

    counts = np.asarray(table, dtype=float)
    items, raters = counts.shape[0], counts[0].sum()
    agreement = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    rng = resampling_stream(seed)
    values = []
    for _ in range(resamples):
        pick = rng.integers(0, items, items)
        shares = counts[pick].sum(axis=0) / (items * raters)
        p_e = float((shares**2).sum())
        if 1.0 - p_e > 1e-12:
            values.append((float(agreement[pick].mean()) - p_e) / (1.0 - p_e))
    if not values:
        return None
    values.sort()
    return (
        values[int(TAILS[0] * (len(values) - 1))],
        values[int(math.ceil(TAILS[1] * (len(values) - 1)))],
    )


# -- two sets of grades compared -------------------------------------------------------------

Item = tuple[str, str]
"""(query_id, doc_id)"""
FIGURES = ("kappa", "weighted_kappa", "binary_kappa")
"""The three kappas of a comparison, in the order reports list them."""
ONE_GRADE = "undefined (one grade only: chance agreement is 1)"
NONE_SHARED = "no shared items"


def too_few(min_items: int) -> str:
    """Why a kappa is withheld below a minimum of shared items."""
    return f"too few shared items (n < {min_items})"


@dataclass(frozen=True, slots=True)
class QueryAgreement:
    """One query's share of a comparison."""

    n: int
    agreement: float
    kappa: float | None
    weighted_kappa: float | None

    def to_json(self) -> dict:
        return {
            "n": self.n,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "weighted_kappa": self.weighted_kappa,
        }


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Two sets of grades on the items both graded; rows of `confusion` are the first's."""

    n: int
    agreement: float | None
    kappa: Kappa
    weighted_kappa: Kappa
    binary_kappa: Kappa
    confusion: tuple[tuple[int, ...], ...]
    reasons: Mapping[str, str]
    """Figure name -> why it is None (too few items, one grade only, none shared)."""
    per_query: Mapping[str, QueryAgreement]

    def figures(self) -> dict[str, Kappa]:
        """The three kappas by name (`FIGURES`)."""
        return dict(zip(FIGURES, (self.kappa, self.weighted_kappa, self.binary_kappa), strict=True))

    @property
    def meets_bar(self) -> bool:
        """Judged on unweighted kappa."""
        return self.kappa.meets_bar

    @property
    def below_bar(self) -> tuple[str, ...]:
        """Every figure that does not reach the bar, undefined ones included."""
        return tuple(name for name, k in self.figures().items() if not k.meets_bar)

    def to_json(self) -> dict:
        out: dict = {"n": self.n, "agreement": self.agreement}
        for name, kappa in self.figures().items():
            out[name] = kappa.kappa
            out[f"{name}_ci"] = list(kappa.ci) if kappa.ci is not None else None
        return out | {
            "confusion": [list(row) for row in self.confusion],
            "meets_bar": self.meets_bar,
            "below_bar": list(self.below_bar),
            "reasons": dict(self.reasons),
            "per_query": {qid: q.to_json() for qid, q in self.per_query.items()},
        }


def _why_undefined(kappa: Kappa, min_items: int) -> str | None:
    if kappa.n == 0:
        return NONE_SHARED
    if kappa.n < min_items:
        return too_few(min_items)
    return ONE_GRADE if kappa.kappa is None else None


def withheld(kappa: Kappa, min_items: int) -> Kappa:
    """`kappa`, or an undefined one when it rests on fewer than `min_items` items."""
    return Kappa(None, kappa.n) if kappa.n < min_items else kappa


def _query_figures(
    pairs: Sequence[tuple[int, int]], categories: Sequence[int], min_items: int
) -> QueryAgreement:
    return QueryAgreement(
        n=len(pairs),
        agreement=sum(a == b for a, b in pairs) / len(pairs),
        kappa=withheld(cohen_kappa(pairs, categories), min_items).kappa,
        weighted_kappa=withheld(cohen_kappa(pairs, categories, "quadratic"), min_items).kappa,
    )


def compare(
    first: Mapping[Item, int],
    second: Mapping[Item, int],
    grade_scale: Iterable[int],
    rel_threshold: int = 1,
    min_items: int = 0,
    *,
    min_query_items: int | None = None,
) -> PairAgreement:
    """Every figure for two sets of grades on the items both graded. With fewer than
    `min_items` shared items every kappa is None (`reasons` says why); a query's own kappas
    are withheld below `min_query_items` (default: `min_items`)."""
    categories = sorted(grade_scale)
    shared = sorted(set(first) & set(second))
    pairs = [(first[i], second[i]) for i in shared]
    plain, weighted, binary = (
        withheld(k, min_items)
        for k in (
            cohen_kappa(pairs, categories),
            cohen_kappa(pairs, categories, "quadratic"),
            binary_kappa(pairs, rel_threshold),
        )
    )
    by_query: dict[str, list[tuple[int, int]]] = {}
    for item, pair in zip(shared, pairs, strict=True):
        by_query.setdefault(item[0], []).append(pair)
    query_min = min_items if min_query_items is None else min_query_items
    return PairAgreement(
        n=len(pairs),
        agreement=(sum(a == b for a, b in pairs) / len(pairs)) if pairs else None,
        kappa=plain,
        weighted_kappa=weighted,
        binary_kappa=binary,
        confusion=tuple(map(tuple, confusion_matrix(pairs, categories))),
        reasons={
            name: why
            for name, k in zip(FIGURES, (plain, weighted, binary), strict=True)
            if (why := _why_undefined(k, min_items)) is not None
        },
        per_query={
            qid: _query_figures(q_pairs, categories, query_min)
            for qid, q_pairs in sorted(by_query.items())
        },
    )
