"""A run's mean P@k, R@k or nDCG@k from a model judge's labels on every item, corrected by the
human labels of a recorded Poisson design (`workbench.core.judges.design`): a Horvitz-Thompson
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
|Rel| (ideal DCG) is not above 0 counts 0, as the per-query figure it stands for.

For P@k (a linear total, the figure validated by simulation) two small-sample rules: lam is
cross-fitted (each half of the drawn items corrected with the lam fitted on the other half),
and the variance gets a floor of one pseudo-disagreement. With a good judge the variance rests
on the few drawn items it got wrong; in bench/design_sim.py (four collections, five judges, two
shares, 100 held-out seeds) the plain interval held the truth in .84-.98 of draws, with the two
rules .94-1.00, at 9-32% more width with the best judge and 1-4% with a random one.
R@k and nDCG@k (ratios per query) keep the plain interval: the floor is unstable there (its
gradient at a small estimated |Rel|), and neither is validated (see the bench)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from workbench.core.interval_level import Z

VALIDATED = frozenset({"P"})
"""The measures whose 95% interval bench/design_sim.py found valid on held-out seeds."""

Z95 = Z
"""The 95% interval's normal quantile, as `core.ppi.Z95` (which imports this module's types)."""

Totals = tuple[float, ...]

PSEUDO_DISAGREEMENTS = 1.0
"""Pseudo-disagreements added to the variance under `small_sample`: with few drawn items the
judge got wrong, the variance rests on those few and a draw that happens to hold fewer than
usual is both off and overconfident; one more, at the drawn items' mean weight, is the floor
chosen by bench/design_sim.py on its development seeds (0-39)."""


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
    small_sample: bool = False
    """Whether the small-sample rules (cross-fitted lam, the pseudo-disagreement floor) made
    the interval."""

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
            "interval": (
                "cross-fitted lam, variance floored by one pseudo-disagreement"
                if self.small_sample
                else "linearised variance, lam fitted on the draw"
            ),
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
    small_sample: bool | None = None,
) -> DesignEstimate | None:
    """The mean over `population`'s queries (query id -> its items) of `form`, corrected by
    the drawn items' human grades (`lam` None: chosen to minimise the variance); None without a
    query. `small_sample` (None: for P@k, the figure validated with it): lam cross-fitted and
    the variance floored by one pseudo-disagreement (`PSEUDO_DISAGREEMENTS`)."""
    if not population:
        return None
    if small_sample is None:
        small_sample = form.name == "P"
    if small_sample and lam is None:
        estimate, variance, lam = _crossfit(population, form)
    else:
        if lam is None:
            lam = _best_lam(_fit(population, form, 1.0)[1])
        estimate, terms = _fit(population, form, lam)
        variance = _variance(terms, lam)
    if small_sample:
        variance += PSEUDO_DISAGREEMENTS * _disagreement_floor(population, form, lam)
    se = math.sqrt(variance)
    human, human_terms = _fit(population, form, 0.0)
    human_se = math.sqrt(_variance(human_terms, 0.0))
    judge_only = sum(
        form.value(tuple(_judge_totals(units, form))) for units in population.values()
    ) / len(population)
    every = [u for units in population.values() for u in units if _counts(u, form)]
    labeled = sum(1 for u in every if u.drawn)
    # P@k, R@k and nDCG@k lie in [0, 1]: an interval reaching past it is cut there (the truth
    # is never cut off, so coverage is unchanged; a point past it moves toward any truth)
    return DesignEstimate(
        _unit(estimate), _unit(estimate - z * se), _unit(estimate + z * se), labeled,
        len(every) - labeled, judge_only, _unit(human), _unit(human - z * human_se),
        _unit(human + z * human_se), variance, lam, small_sample,
    )  # fmt: skip


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def _best_lam(terms: Sequence[tuple[float, float, float]]) -> float:
    """The lam in [0, 1] minimising sum w (a - lam b)^2."""
    cross = sum(w * a * b for w, a, b in terms)
    square = sum(w * b * b for w, _, b in terms)
    return min(1.0, max(0.0, cross / square)) if square > 0 else 0.0


def fold_of(query_id: str, doc_id: str) -> int:
    """The cross-fitting fold (0 or 1) of an item: a hash of its key, so the split is the same
    on every reading and independent of the grades."""
    return zlib.crc32(f"{query_id}\t{doc_id}".encode()) % 2


def _crossfit(
    population: Mapping[str, Sequence[Unit]], form: MeasureForm
) -> tuple[float, float, float]:
    """The mean, its variance and the mean lam with lam cross-fitted: the drawn items split in
    two folds (each, as the hash is independent of the draw, a Poisson sample at pi / 2; an
    item drawn for certain in both), each fold corrected with the lam fitted on the other, the
    two estimates averaged (lam is then no function of the residuals it weighs)."""
    folds = [
        {q: [replace(u, prob=u.prob if u.prob >= 1 else u.prob / 2,
                     drawn=u.drawn and (u.prob >= 1 or fold_of(q, u.doc_id) == f))
             for u in units] for q, units in population.items()}
        for f in (0, 1)
    ]  # fmt: skip
    lams = [_best_lam(_fit(folds[1 - f], form, 1.0)[1]) for f in (0, 1)]
    estimate = variance = 0.0
    for fold, lam in zip(folds, lams, strict=True):
        mean, terms = _fit(fold, form, lam)
        estimate += mean / 2
        variance += _variance(terms, lam) / 4
    return estimate, variance, sum(lams) / 2


def _disagreement_floor(
    population: Mapping[str, Sequence[Unit]], form: MeasureForm, lam: float
) -> float:
    """The variance one more drawn disagreement would add: the mean over drawn items of
    (1 - pi) / pi^2 f^2, f the linearised change were the human grade the opposite (0 for a
    relevant one, 1 for a not relevant one)."""
    count = len(population)
    total, drawn = 0.0, 0
    for units in population.values():
        grad = _gradient(form, _totals(units, form, lam))
        for u in units:
            if not u.drawn or u.prob >= 1:
                continue
            grade = u.human or 0
            now = form.contribution(grade, u.rank)
            flipped = form.contribution(0 if grade > 0 else 1, u.rank)
            f = sum(g * (y - x) for g, x, y in zip(grad, now, flipped, strict=True)) / count
            total += (1 - u.prob) / (u.prob * u.prob) * f * f
            drawn += 1
    return total / drawn if drawn else 0.0


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
