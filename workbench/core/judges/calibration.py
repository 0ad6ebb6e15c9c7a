"""Calibrating a scoring model (a cross-encoder or a bi-encoder) into a graded judge against human
labels (pure).

A model's raw scores become grades through cut points (`ScoreCuts`) fitted by `fit_thresholds`.
Fitting and judging on the same labels flatters the judge (the cuts are tuned to them), so the
human labels are split: the cuts are fitted on a training share and the agreement figures that
decide whether the judge meets the bar are measured on the held-out rest. The split is
stratified by human grade (each grade keeps its share on both sides) and seeded. Kappas follow
`agree`'s minimum (agreement.MIN_SHARED_ITEMS): a held-out share under it gives no kappa."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.core.agreement.agreement import MIN_SHARED_ITEMS
from workbench.core.agreement.kappa import (
    KAPPA_BAR,
    Item,
    PairAgreement,
    compare,
    kappa_from_confusion,
    weight_matrix,
)
from workbench.core.random_streams import split_random

MIN_HUMAN_LABELS = 20
"""Below this many overlapping human labels the fitted cuts are not worth trusting."""

SMALL_HOLDOUT = 20
"""A held-out split smaller than this gets a warning: its confidence intervals are wide."""

METHOD = (
    "cut points between consecutive distinct model scores, chosen to maximize quadratic-"
    "weighted kappa against the human grades of the training split: start from the cuts that "
    "reproduce the human grade distribution (quantile matching), then coordinate ascent, one "
    "cut at a time (agreement.fit_thresholds)"
)
"""Frozen in judge-model's JSON (tests/golden_outputs): `fit_thresholds` now lives here."""
LOGIT_SCORE = "raw model output (logit), higher = more relevant"
"""What a cross-encoder's score is; other scorers pass their own description."""

SPLIT_METHOD = "stratified by human grade, seeded shuffle (Python random.Random(seed)) per grade"
RESOLVED = "resolved"
"""`--fit-on resolved`: the resolved human grade (agreement.consensus_grades)."""


@dataclass(frozen=True, slots=True)
class ScoreCuts:
    """Score cut points: grade = grades[number of cuts <= score]."""

    cuts: tuple[float, ...]
    grades: tuple[int, ...]
    weighted_kappa: float | None
    n: int

    def grade(self, score: float) -> int:
        return self.grades[sum(score >= c for c in self.cuts)]


def fit_thresholds(
    scores: Sequence[float],
    human_grades: Sequence[int],
    grade_scale: Iterable[int],
    max_candidates: int = 256,
    rounds: int = 10,
) -> ScoreCuts:
    """Cut points maximizing quadratic weighted kappa against the human grades.

    Candidates are midpoints between consecutive distinct scores (thinned to `max_candidates`
    quantiles, plus one cut above every score so a grade may go unused). Start from the cuts
    that reproduce the human grade distribution, then coordinate ascent: move one cut at a time
    to the candidate between its neighbours that maximizes kappa, until a round changes
    nothing. Deterministic: a move needs a strict gain, candidates scanned low to high."""
    import numpy as np

    grades = sorted(grade_scale)
    if len(scores) != len(human_grades):
        raise ValueError("scores and human_grades differ in length")
    if not scores:
        return ScoreCuts(tuple(math.inf for _ in grades[1:]), tuple(grades), None, 0)
    score_array = np.asarray(scores, dtype=float)
    human = np.asarray([grades.index(g) for g in human_grades])
    distinct = np.unique(score_array)
    mids = (distinct[:-1] + distinct[1:]) / 2.0
    if len(mids) > max_candidates:
        mids = np.unique(np.quantile(mids, np.linspace(0.0, 1.0, max_candidates)))
    candidates = np.concatenate(([distinct[0]], mids, [math.inf]))
    weights = weight_matrix(grades, "quadratic")

    def kappa_of(cut_values: list[float]) -> float:
        predicted = np.searchsorted(np.asarray(cut_values), score_array, side="right")
        matrix = np.zeros((len(grades), len(grades)), dtype=int)
        np.add.at(matrix, (human, predicted), 1)
        value = kappa_from_confusion(matrix.tolist(), weights).kappa
        return -math.inf if value is None else value

    shares = np.cumsum(np.bincount(human, minlength=len(grades)))[:-1] / len(scores)
    cuts = []
    for share in shares:
        target = np.quantile(score_array, share) if share < 1.0 else math.inf
        cuts.append(float(candidates[np.searchsorted(candidates, target)]))
    cuts.sort()
    best = kappa_of(cuts)
    for _ in range(rounds):
        changed = False
        for position in range(len(cuts)):
            low = cuts[position - 1] if position > 0 else -math.inf
            high = cuts[position + 1] if position + 1 < len(cuts) else math.inf
            for candidate in candidates[(candidates >= low) & (candidates <= high)]:
                trial = cuts[:position] + [float(candidate)] + cuts[position + 1 :]
                value = kappa_of(trial)
                if value > best + 1e-12:
                    best, cuts, changed = value, trial, True
        if not changed:
            break
    return ScoreCuts(tuple(cuts), tuple(grades), None if best == -math.inf else best, len(scores))


@dataclass(frozen=True, slots=True)
class GradeRange:
    """A grade's score interval [low, high); None stands for minus/plus infinity. An empty
    interval (two equal cuts, or a cut above every score) means the grade is never given."""

    grade: int
    low: float | None
    high: float | None
    empty: bool

    def to_json(self) -> dict:
        return {"grade": self.grade, "low": self.low, "high": self.high, "empty": self.empty}


def grade_ranges(score_cuts: ScoreCuts) -> list[GradeRange]:
    """Each grade's score interval (an empty one with both bounds None)."""
    bounds = [-math.inf, *score_cuts.cuts, math.inf]
    out = []
    for index, grade in enumerate(score_cuts.grades):
        low, high = bounds[index], bounds[index + 1]
        empty = not low < high
        out.append(
            GradeRange(
                grade,
                None if empty or math.isinf(low) else low,
                None if empty or math.isinf(high) else high,
                empty,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Split:
    holdout: float
    seed: int
    train: int
    held_out: int
    method: str = SPLIT_METHOD

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "holdout": self.holdout,
            "seed": self.seed,
            "train": self.train,
            "held_out": self.held_out,
        }


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    """Fitted cuts, how they were chosen, and the judge's agreement held out and in-sample."""

    score_cuts: ScoreCuts
    score: str
    """What a score is (`LOGIT_SCORE`, a cosine, ...)."""
    human_labels: int
    split: Split
    train: PairAgreement
    held_out: PairAgreement | None
    """None without a held-out share (`holdout` 0)."""
    rel_threshold: int
    warnings: tuple[str, ...]
    method: str = METHOD
    bar: float = KAPPA_BAR

    @property
    def decisive(self) -> PairAgreement:
        """The figures that decide: held-out when there are any."""
        return self.held_out if self.held_out is not None else self.train

    @property
    def judged_on(self) -> str:
        return "held-out" if self.held_out is not None else "train (in-sample)"

    def to_json(self) -> dict:
        cuts = self.score_cuts
        return {
            "method": self.method,
            "score": self.score,
            "cuts": [None if math.isinf(c) else c for c in cuts.cuts],
            "grades": list(cuts.grades),
            "grade_ranges": [r.to_json() for r in grade_ranges(cuts)],
            "human_labels": self.human_labels,
            "split": self.split.to_json(),
            "train": {"fit_weighted_kappa": cuts.weighted_kappa, **self.train.to_json()},
            "held_out": self.held_out.to_json() if self.held_out is not None else None,
            "rel_threshold": self.rel_threshold,
            "bar": self.bar,
            "judged_on": self.judged_on,
            "meets_bar": self.decisive.meets_bar,
            "below_bar": list(self.decisive.below_bar),
            "warnings": list(self.warnings),
        }


def stratified_split(
    grades: Mapping[Item, int], holdout: float, seed: int = 0
) -> tuple[list[Item], list[Item]]:
    """(train, held_out) items: within each grade, round(count * holdout) items drawn at random
    are held out. Deterministic for a seed; both lists sorted."""
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be in [0, 1), got {holdout}")
    rng = split_random(seed)
    by_grade: dict[int, list[Item]] = {}
    for item in sorted(grades):
        by_grade.setdefault(grades[item], []).append(item)
    train: list[Item] = []
    held_out: list[Item] = []
    for grade in sorted(by_grade):
        items = by_grade[grade]
        rng.shuffle(items)
        count = math.floor(len(items) * holdout + 0.5)
        held_out.extend(items[:count])
        train.extend(items[count:])
    return sorted(train), sorted(held_out)


def _warnings(held_out: PairAgreement | None, train_grades: set[int], cuts: ScoreCuts) -> list[str]:
    out = []
    if held_out is None:
        out.append(
            "no held-out split (--holdout 0): every figure is in-sample and flatters the judge"
        )
    elif held_out.n < MIN_SHARED_ITEMS:
        out.append(
            f"only {held_out.n} held-out labels: no kappa on fewer than {MIN_SHARED_ITEMS} "
            "(as in workbench agree); judge more items or raise --holdout"
        )
    elif held_out.n < SMALL_HOLDOUT:
        out.append(f"only {held_out.n} held-out labels: the confidence intervals are wide")
    if len(train_grades) < 2:
        out.append("the training labels use a single grade: the cuts carry no information")
    unused = [r.grade for r in grade_ranges(cuts) if r.empty]
    if unused:
        out.append(f"grades {unused} are never given (their score interval is empty)")
    return out


def calibrate(
    scores: Mapping[Item, float],
    human: Mapping[Item, int],
    grade_scale: Iterable[int],
    *,
    holdout: float = 0.3,
    seed: int = 0,
    rel_threshold: int = 1,
    min_labels: int = MIN_HUMAN_LABELS,
    score_meaning: str = LOGIT_SCORE,
) -> CalibrationReport:
    """Fit score -> grade cuts on a training share of the human labels that have a score, and
    measure the judge on the held-out share (and, flattering, on the training share).

    Kappas rest on at least MIN_SHARED_ITEMS labels, overall; per-query kappas are left as
    judge-model's JSON has always given them (the text report shows none). Raises ValueError
    when fewer than `min_labels` human labels overlap the scored items."""
    scale = sorted(grade_scale)
    overlap = {item: grade for item, grade in human.items() if item in scores}
    if len(overlap) < min_labels:
        raise ValueError(
            f"only {len(overlap)} human labels overlap the scored items; at least {min_labels} "
            "are needed to fit thresholds worth trusting"
        )
    train, held_out = stratified_split(overlap, holdout, seed)
    cuts = fit_thresholds([scores[i] for i in train], [overlap[i] for i in train], scale)

    def figures(items: list[Item]) -> PairAgreement:
        given = {i: cuts.grade(scores[i]) for i in items}
        return compare(
            {i: overlap[i] for i in items},
            given,
            scale,
            rel_threshold,
            MIN_SHARED_ITEMS,
            min_query_items=0,
        )

    held_figures = figures(held_out) if held_out else None
    return CalibrationReport(
        score_cuts=cuts,
        score=score_meaning,
        human_labels=len(overlap),
        split=Split(holdout, seed, len(train), len(held_out)),
        train=figures(train),
        held_out=held_figures,
        rel_threshold=rel_threshold,
        warnings=tuple(_warnings(held_figures, {overlap[i] for i in train}, cuts)),
    )


def grade_counts(grades: Iterable[int], grade_scale: Iterable[int]) -> dict[int, int]:
    """How many items got each grade of the scale (zeros included)."""
    counts = {g: 0 for g in sorted(grade_scale)}
    for grade in grades:
        counts[grade] = counts.get(grade, 0) + 1
    return counts
