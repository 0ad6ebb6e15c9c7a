"""Calibrating a scoring model (a cross-encoder or a bi-encoder) into a graded judge against human
labels (pure).

A model's raw scores become grades through cut points fitted by `agreement.fit_thresholds`.
Fitting and judging on the same labels flatters the judge (the cuts are tuned to them), so the
human labels are split: the cuts are fitted on a training share and the agreement figures that
decide whether the judge meets the bar are measured on the held-out rest. The split is
stratified by human grade (each grade keeps its share on both sides) and seeded."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping

from workbench.core.agreement import KAPPA_BAR, Item, ScoreCuts, compare, fit_thresholds

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
LOGIT_SCORE = "raw model output (logit), higher = more relevant"
"""What a cross-encoder's score is; other scorers pass their own description."""

SPLIT_METHOD = "stratified by human grade, seeded shuffle (Python random.Random(seed)) per grade"


def stratified_split(
    grades: Mapping[Item, int], holdout: float, seed: int = 0
) -> tuple[list[Item], list[Item]]:
    """(train, held_out) items: within each grade, round(count * holdout) items drawn at random
    are held out. Deterministic for a seed; both lists sorted."""
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be in [0, 1), got {holdout}")
    rng = random.Random(seed)
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


def grade_ranges(thresholds: ScoreCuts) -> list[dict]:
    """Each grade's score interval [low, high), None standing for minus/plus infinity. A grade
    whose interval is empty (two equal cuts, or a cut above every score) is never given: it is
    marked empty, with both bounds None."""
    bounds = [-math.inf, *thresholds.cuts, math.inf]
    out = []
    for index, grade in enumerate(thresholds.grades):
        low, high = bounds[index], bounds[index + 1]
        empty = not low < high
        out.append(
            {
                "grade": grade,
                "low": None if empty or math.isinf(low) else low,
                "high": None if empty or math.isinf(high) else high,
                "empty": empty,
            }
        )
    return out


def _cuts(thresholds: ScoreCuts) -> list[float | None]:
    """Cut points for JSON: a cut at +infinity (its grade never given) as None."""
    return [None if math.isinf(c) else c for c in thresholds.cuts]


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
) -> tuple[ScoreCuts, dict]:
    """Fit score -> grade cuts on a training share of the human labels that have a score, and
    measure the judge on the held-out share. Returns the thresholds and a report saying how they
    were chosen (method, cuts, n, `score_meaning`: what a score is) with train (in-sample) and
    held-out agreement figures.

    Raises ValueError when fewer than `min_labels` human labels overlap the scored items."""
    scale = sorted(grade_scale)
    overlap = {item: grade for item, grade in human.items() if item in scores}
    if len(overlap) < min_labels:
        raise ValueError(
            f"only {len(overlap)} human labels overlap the scored items; at least {min_labels} "
            "are needed to fit thresholds worth trusting"
        )
    train, held_out = stratified_split(overlap, holdout, seed)
    thresholds = fit_thresholds([scores[i] for i in train], [overlap[i] for i in train], scale)
    graded = {item: thresholds.grade(scores[item]) for item in overlap}
    train_figures = compare(
        {i: overlap[i] for i in train}, {i: graded[i] for i in train}, scale, rel_threshold
    )
    held_figures = (
        compare(
            {i: overlap[i] for i in held_out},
            {i: graded[i] for i in held_out},
            scale,
            rel_threshold,
        )
        if held_out
        else None
    )
    warnings = []
    if held_figures is None:
        warnings.append(
            "no held-out split (--holdout 0): every figure is in-sample and flatters the judge"
        )
    elif held_figures["n"] < SMALL_HOLDOUT:
        warnings.append(
            f"only {held_figures['n']} held-out labels: the confidence intervals are wide"
        )
    if len({overlap[i] for i in train}) < 2:
        warnings.append("the training labels use a single grade: the cuts carry no information")
    unused = [r["grade"] for r in grade_ranges(thresholds) if r["empty"]]
    if unused:
        warnings.append(f"grades {unused} are never given (their score interval is empty)")
    decisive = held_figures if held_figures is not None else train_figures
    report = {
        "method": METHOD,
        "score": score_meaning,
        "cuts": _cuts(thresholds),
        "grades": list(thresholds.grades),
        "grade_ranges": grade_ranges(thresholds),
        "human_labels": len(overlap),
        "split": {
            "method": SPLIT_METHOD,
            "holdout": holdout,
            "seed": seed,
            "train": len(train),
            "held_out": len(held_out),
        },
        "train": {"fit_weighted_kappa": thresholds.weighted_kappa, **train_figures},
        "held_out": held_figures,
        "rel_threshold": rel_threshold,
        "bar": KAPPA_BAR,
        "judged_on": "held-out" if held_figures is not None else "train (in-sample)",
        "meets_bar": bool(decisive["meets_bar"]),
        "below_bar": list(decisive["below_bar"]),
        "warnings": warnings,
    }
    return thresholds, report


def grade_counts(grades: Iterable[int], grade_scale: Iterable[int]) -> dict[int, int]:
    """How many items got each grade of the scale (zeros included)."""
    counts = {g: 0 for g in sorted(grade_scale)}
    for grade in grades:
        counts[grade] = counts.get(grade, 0) + 1
    return counts
