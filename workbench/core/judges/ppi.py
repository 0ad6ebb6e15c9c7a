"""Prediction-powered inference for a mean: a judge's labels on every item, corrected by human
labels on a random subset of them. With predictions f on the N items without a human label
and (Y, f) on the n with one,

    theta = mean_N(lam f) + mean_n(Y - lam f),   se^2 = var_N(lam f) / N + var_n(Y - lam f) / n

(population variances). lam = 1 is PPI (Angelopoulos et al. 2023); the default tunes it
(PPI++, Angelopoulos, Duchi and Zrnic 2023): lam = cov_n(Y, f) / ((1 + n/N) var(f)), clipped
to [0, 1], so a poor judge counts for less and the interval is never much wider than the
humans' alone (lam = 0). Both equal ppi-python's `ppi_mean_ci` (lam=1, lam=None). A good judge
makes the interval narrow; a bad one makes it wide, never biased, provided the human-labelled
items are a uniformly random subset of the items."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.interval_level import Z

if TYPE_CHECKING:
    from workbench.core.judges.design_estimate import DesignEstimate

Z95 = Z
MIN_LABELED_QUERIES = 20
"""No interval over queries from fewer human-judged queries: with 2-18 of them the 95%
intervals held the truth in only .63-.94 of simulated draws (bench/llm_judge_sim.py), the
normal approximation failing, from 20 on in >= .90."""


@dataclass(frozen=True, slots=True)
class PPIEstimate:
    estimate: float
    low: float
    high: float
    labeled: int
    unlabeled: int
    judge_only: float
    """The judge's labels alone, on every item (no correction)."""
    human_only: float | None
    human_low: float | None
    human_high: float | None
    """The human labels alone (the classical interval on the n labelled items)."""
    rectifier_var: float
    imputed_var: float
    lam: float = 1.0
    """How much the judge's labels count (1: PPI; tuned: PPI++; 0: the humans alone)."""

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
        }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _var(values: Sequence[float]) -> float:
    """Population variance (ddof 0)."""
    mean = _mean(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


def tuned_lam(
    human: Sequence[float], judge_on_human: Sequence[float], judge_elsewhere: Sequence[float]
) -> float:
    """PPI++'s lam for a mean: cov_n(Y, f) / ((1 + n/N) var(f over all items, ddof 1)),
    clipped to [0, 1]; 0 when the judge's labels do not vary."""
    n, big_n = len(human), len(judge_elsewhere)
    every = [*judge_on_human, *judge_elsewhere]
    if len(every) < 2:
        return 0.0
    mean_y, mean_f = _mean(human), _mean(judge_on_human)
    cov = sum((y - mean_y) * (f - mean_f) for y, f in zip(human, judge_on_human, strict=True)) / n
    var_all = _var(every) * len(every) / (len(every) - 1)
    if var_all <= 0:
        return 0.0
    return min(1.0, max(0.0, cov / ((1 + n / big_n) * var_all)))


def ppi_mean(
    human: Sequence[float],
    judge_on_human: Sequence[float],
    judge_elsewhere: Sequence[float],
    z: float = Z95,
    lam: float | None = None,
) -> PPIEstimate | None:
    """The estimate of the items' mean and its interval (`lam` None: tuned, PPI++; 1: PPI);
    None without a human label or without an item left to the judge alone."""
    n, big_n = len(human), len(judge_elsewhere)
    if n == 0 or big_n == 0 or len(judge_on_human) != n:
        return None
    if lam is None:
        lam = tuned_lam(human, judge_on_human, judge_elsewhere)
    residual = [y - lam * f for y, f in zip(human, judge_on_human, strict=True)]
    imputed_values = [lam * f for f in judge_elsewhere]
    estimate = _mean(imputed_values) + _mean(residual)
    rectifier, imputed = _var(residual), _var(imputed_values)
    se = math.sqrt(imputed / big_n + rectifier / n)
    human_mean = _mean(human)
    human_se = math.sqrt(_var(human) / n)
    return PPIEstimate(
        estimate,
        estimate - z * se,
        estimate + z * se,
        n,
        big_n,
        _mean([*judge_on_human, *judge_elsewhere]),
        human_mean,
        human_mean - z * human_se,
        human_mean + z * human_se,
        rectifier,
        imputed,
        lam,
    )


def humans_needed(estimate: PPIEstimate, width: float, z: float = Z95) -> int | None:
    """Human labels for a 95% interval `width` wide (both sides), at the judge's measured
    disagreement with the humans (the rectifier's variance) and the same number of items;
    None when no number of human labels reaches it."""
    half = width / 2 / z
    room = half * half - estimate.imputed_var / estimate.unlabeled
    if room <= 0:
        return None
    needed = estimate.rectifier_var / room
    if not math.isfinite(needed) or needed > 1e12:
        return None
    return max(2, math.ceil(needed))


@dataclass(frozen=True, slots=True)
class CorrectedMetric:
    """A run's mean `measure` at k, the estimate (PPI over items or queries; or
    Horvitz-Thompson over a recorded design's items) or why there is none."""

    run: str
    k: int
    queries: int
    estimate: PPIEstimate | DesignEstimate | None
    missing_judge: int
    """Top-k items the judge has no label for (grade them first: judge-llm)."""
    humans_for_width: int | None = None
    measure: str = "P"
    unit: str = "items"
    """What the human labels sample: 'items' (P@k), or 'queries' (R@k, nDCG@k: queries whose
    every pooled item humans judged)."""
    labeled_queries: int = 0
    """For 'queries': how many queries humans judged fully (no interval below
    MIN_LABELED_QUERIES)."""
    validated: bool = True
    """False where simulation found the interval's coverage below 95% (bench/design_sim.py:
    R@k and nDCG@k from a design's few drawn items per query)."""
    unavailable: str | None = None
    """Why there is no estimate, when the caller knows (no recorded design, drawn items not
    judged yet, items outside the design)."""

    def to_json(self) -> dict:
        return {
            "run": self.run,
            "measure": f"{self.measure}@{self.k}",
            "k": self.k,
            "queries": self.queries,
            "unit": self.unit,
            "estimate": self.estimate.to_json() if self.estimate else None,
            "missing_judge_labels": self.missing_judge,
            "humans_for_target_width": self.humans_for_width,
            "labeled_queries": self.labeled_queries if self.unit == "queries" else None,
            "unavailable": self.unavailable,
            "validated": self.validated,
        }


def corrected_precision(
    run: str,
    rankings: dict[str, list[str]],
    k: int,
    judge: dict[tuple[str, str], bool],
    human: dict[tuple[str, str], bool],
    queries: Sequence[str],
    target_width: float | None = None,
) -> CorrectedMetric:
    """P@k as the mean over every (query, rank <= k) slot of the run of 'relevant': the judge's
    label on each slot, corrected by the human label where there is one. A slot past the end
    of a short ranking is known not relevant (0 for both). Every query counts k slots, so the
    mean over slots is the mean P@k over `queries`."""
    human_y: list[float] = []
    judge_on_human: list[float] = []
    judge_elsewhere: list[float] = []
    missing = 0
    for qid in queries:
        ranked = rankings.get(qid, [])[:k]
        for doc in ranked:
            key = (qid, doc)
            if key not in judge:
                missing += 1
                continue
            if key in human:
                human_y.append(float(human[key]))
                judge_on_human.append(float(judge[key]))
            else:
                judge_elsewhere.append(float(judge[key]))
    # Slots past the end of a short ranking are known not relevant, for everyone: they are not
    # sampled (adding them to the human side would bias the estimate), they scale the mean
    # over the real slots down to the mean over k slots per query.
    real = len(human_y) + len(judge_elsewhere)
    estimate = None if missing else ppi_mean(human_y, judge_on_human, judge_elsewhere)
    if estimate is not None and queries:
        estimate = scaled(estimate, real / (k * len(queries)))
    needed = (
        humans_needed(estimate, target_width) if estimate and target_width is not None else None
    )
    return CorrectedMetric(run, k, len(queries), estimate, missing, needed)


def scaled(e: PPIEstimate, factor: float) -> PPIEstimate:
    """The estimate of `factor` times the mean (a known constant: the interval scales too)."""

    def times(v: float | None) -> float | None:
        return None if v is None else v * factor

    return PPIEstimate(
        e.estimate * factor, e.low * factor, e.high * factor, e.labeled, e.unlabeled,
        e.judge_only * factor, times(e.human_only), times(e.human_low), times(e.human_high),
        e.rectifier_var * factor**2, e.imputed_var * factor**2, e.lam,
    )  # fmt: skip
