"""A run's mean P@k, R@k or nDCG@k from a model judge's labels on every item, corrected by the
human labels of a recorded Poisson design (`workbench.core.design`): a Horvitz-Thompson
difference estimator, valid whatever the judge (a good one narrows the interval, a bad one
cannot bias it), for exactly the items people judged because they were drawn.

Each query's figure is a function F of a few totals over its items (P@k: relevant in the top k;
R@k: relevant in the top k and |Rel|; nDCG@k: the top k's DCG and the count of each grade, from
which the ideal DCG follows). Each total T = sum_i x_i is estimated as

    T_hat = sum_i lam x_i(judge) + sum_{i drawn} (x_i(human) - lam x_i(judge)) / pi_i,

unbiased for any fixed lam. The mean over queries of F(T_hat) has the linearised variance
sum_{i drawn} (1 - pi_i) / pi_i^2 e_i^2 (Poisson sampling), e_i = grad F . (x_i(human) -
lam x_i(judge)) / |queries|. lam is chosen to minimise that variance (clipped to [0, 1]; 0 is
the humans alone, so the interval is never much wider than theirs). A query whose estimated
|Rel| (ideal DCG) is not above 0 counts 0, as the per-query figure it stands for."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
"""The 95% interval's normal quantile, as `core.ppi.Z95` (which imports this module's types)."""

Totals = tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """One item of a query's population: its rank in the run's top k (None below it), its
    inclusion probability, whether it was drawn, the judge's grade (None: no label, counted 0)
    and the human grade (for a drawn item)."""

    doc_id: str
    rank: int | None
    prob: float
    drawn: bool
    judge: int | None
    human: int | None = None


@dataclass(frozen=True, slots=True)
class MeasureForm:
    """A per-query figure as a function `value` of `width` totals, each item adding
    `contribution(grade, rank)`."""

    name: str
    width: int
    contribution: Callable[[int, int | None], Totals]
    value: Callable[[Totals], float]


@dataclass(frozen=True, slots=True)
class DesignEstimate:
    estimate: float
    low: float
    high: float
    labeled: int
    """Drawn items judged by humans that enter this figure."""
    unlabeled: int
    """Items of this figure left to the judge (not drawn)."""
    judge_only: float
    human_only: float | None
    human_low: float | None
    human_high: float | None
    """Horvitz-Thompson over the drawn items alone (lam = 0)."""
    variance: float
    lam: float

    def to_json(self) -> dict:
        return {
            "estimate": self.estimate,
            "ci": [self.low, self.high],
            "human_labels": self.labeled,
            "judge_only_items": self.unlabeled,
            "judge_only": self.judge_only,
            "human_only": self.human_only,
            "human_only_ci": None if self.human_low is None else [self.human_low, self.human_high],
            "lam": self.lam,
            "estimator": "horvitz-thompson difference",
        }


def precision_form(k: int, rel_threshold: int = 1) -> MeasureForm:
    def contribution(grade: int, rank: int | None) -> Totals:
        return (1.0 if rank is not None and grade >= rel_threshold else 0.0,)

    return MeasureForm("P", 1, contribution, lambda t: t[0] / k)


def recall_form(k: int, rel_threshold: int = 1) -> MeasureForm:
    def contribution(grade: int, rank: int | None) -> Totals:
        rel = 1.0 if grade >= rel_threshold else 0.0
        return (rel if rank is not None else 0.0, rel)

    return MeasureForm("R", 2, contribution, lambda t: t[0] / t[1] if t[1] > 1e-9 else 0.0)


def ndcg_form(k: int, max_grade: int) -> MeasureForm:
    """Linear gain (the grade), log2(rank + 1) discount, the ideal DCG from the estimated count
    of each grade (a fractional count fills a fraction of its last place)."""
    grades = range(1, max_grade + 1)

    def contribution(grade: int, rank: int | None) -> Totals:
        dcg = grade / math.log2(rank + 2) if rank is not None and grade > 0 else 0.0
        return (dcg, *(1.0 if grade == g else 0.0 for g in grades))

    def value(t: Totals) -> float:
        ideal, above = 0.0, 0.0
        for g in reversed(grades):
            count = max(t[g], 0.0)
            ideal += g * (_discounts(min(k, above + count)) - _discounts(min(k, above)))
            above += count
        return t[0] / ideal if ideal > 1e-9 else 0.0

    return MeasureForm("nDCG", 1 + max_grade, contribution, value)


def _discounts(places: float) -> float:
    """sum_{j=1}^{places} 1 / log2(j + 1), linear between whole places."""
    whole = int(places)
    total = sum(1 / math.log2(j + 1) for j in range(1, whole + 1))
    return total + (places - whole) / math.log2(whole + 2)


def _totals(units: Sequence[Unit], form: MeasureForm, lam: float) -> Totals:
    sums = [0.0] * form.width
    for u in units:
        judge = form.contribution(u.judge or 0, u.rank)
        for j in range(form.width):
            sums[j] += lam * judge[j]
        if u.drawn:
            human = form.contribution(u.human or 0, u.rank)
            for j in range(form.width):
                sums[j] += (human[j] - lam * judge[j]) / u.prob
    return tuple(sums)


def _gradient(form: MeasureForm, totals: Totals) -> Totals:
    grad = []
    for j in range(form.width):
        step = 1e-6 * max(1.0, abs(totals[j]))
        up = list(totals)
        down = list(totals)
        up[j] += step
        down[j] -= step
        grad.append((form.value(tuple(up)) - form.value(tuple(down))) / (2 * step))
    return tuple(grad)


def _fit(
    population: Mapping[str, Sequence[Unit]], form: MeasureForm, lam: float
) -> tuple[float, list[tuple[float, float, float]]]:
    """The mean at `lam` and, per drawn item, (weight, a, b): its linearised human and judge
    terms, so the variance at any lam' is sum weight (a - lam' b)^2."""
    count = len(population)
    mean = 0.0
    terms = []
    for units in population.values():
        totals = _totals(units, form, lam)
        mean += form.value(totals) / count
        grad = _gradient(form, totals)
        for u in units:
            if not u.drawn or u.prob >= 1:
                continue
            human = form.contribution(u.human or 0, u.rank)
            judge = form.contribution(u.judge or 0, u.rank)
            a = sum(g * h for g, h in zip(grad, human, strict=True)) / count
            b = sum(g * f for g, f in zip(grad, judge, strict=True)) / count
            terms.append(((1 - u.prob) / (u.prob * u.prob), a, b))
    return mean, terms


def _variance(terms: Sequence[tuple[float, float, float]], lam: float) -> float:
    return sum(w * (a - lam * b) ** 2 for w, a, b in terms)


def design_mean(
    population: Mapping[str, Sequence[Unit]],
    form: MeasureForm,
    z: float = Z95,
    lam: float | None = None,
) -> DesignEstimate | None:
    """The mean over `population`'s queries (query id -> its items) of `form`, corrected by
    the drawn items' human grades (`lam` None: chosen to minimise the variance); None without a
    query."""
    if not population:
        return None
    if lam is None:
        _, terms = _fit(population, form, 1.0)
        cross = sum(w * a * b for w, a, b in terms)
        square = sum(w * b * b for w, _, b in terms)
        lam = min(1.0, max(0.0, cross / square)) if square > 0 else 0.0
    estimate, terms = _fit(population, form, lam)
    se = math.sqrt(_variance(terms, lam))
    human, human_terms = _fit(population, form, 0.0)
    human_se = math.sqrt(_variance(human_terms, 0.0))
    judge_only = sum(
        form.value(tuple(_judge_totals(units, form))) for units in population.values()
    ) / len(population)
    every = [u for units in population.values() for u in units if _counts(u, form)]
    labeled = sum(1 for u in every if u.drawn)
    return DesignEstimate(
        estimate, estimate - z * se, estimate + z * se, labeled, len(every) - labeled,
        judge_only, human, human - z * human_se, human + z * human_se, se * se, lam,
    )  # fmt: skip


def _judge_totals(units: Sequence[Unit], form: MeasureForm) -> list[float]:
    sums = [0.0] * form.width
    for u in units:
        for j, x in enumerate(form.contribution(u.judge or 0, u.rank)):
            sums[j] += x
    return sums


def _counts(unit: Unit, form: MeasureForm) -> bool:
    """Whether the item can add to the figure (P@k: only the top k)."""
    return form.name != "P" or unit.rank is not None


def humans_for_width(estimate: DesignEstimate, width: float, z: float = Z95) -> int | None:
    """Drawn items for a 95% interval `width` wide, scaling the design's probabilities alike
    (the variance falls about as 1 / the sample size); None when the figure has no variance
    to go by."""
    if estimate.variance <= 0 or estimate.labeled == 0:
        return None
    half = width / 2 / z
    return max(2, math.ceil(estimate.labeled * estimate.variance / (half * half)))
