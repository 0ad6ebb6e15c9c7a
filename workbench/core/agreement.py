"""Agreement between annotators, and between model judges and humans (pure: no files, no db).

Cohen's kappa (unweighted, quadratic-weighted, and binary at the relevance threshold), Fleiss'
kappa, confusion matrices, per-query agreement and the disagreement list that the adjudication
screen works through. Conventions:

- Categories are the store's grade scale, not the grades that happen to occur, so an annotator
  who used one grade only is handled: kappa is 0 when chance agreement p_e < 1, and *undefined*
  (None; sklearn returns nan) when p_e = 1, i.e. both annotators used the same single grade.
- Weighted kappa uses quadratic agreement weights 1 - (g_i - g_j)^2 / (g_max - g_min)^2 on the
  grade values; for the scale 0..3 this equals sklearn's ``weights="quadratic"`` with
  ``labels=[0, 1, 2, 3]``.
- The 95% CI of Cohen's kappa is analytic: the large-sample variance of Fleiss, Cohen & Everitt
  (1969), valid away from kappa = 0, then a Wald interval kappa +/- 1.96 SE clipped to [-1, 1].
  It is optimistic for small n (it is [1, 1] at perfect agreement), hence n beside every figure.
- Fleiss' kappa gets a seeded percentile bootstrap over items (1000 resamples, seed 0).
- The field's bar is kappa >= 0.6 (``KAPPA_BAR``); ``meets_bar`` is judged on unweighted kappa.
- `agreement_report` gives no kappa on fewer than ``MIN_SHARED_ITEMS`` shared items: the figure is
  None and ``reasons`` (``reason`` for Fleiss) says why. `compare` applies a minimum only when
  asked (``min_items``), so judge calibration keeps its own rules.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.model import Judgment, Role

KAPPA_BAR = 0.6
MIN_SHARED_ITEMS = 10
"""No kappa on fewer shared items: below this one changed grade swings kappa by more than the
bar's width and the analytic CI collapses (one item gives 0.000 [0.00, 0.00])."""
ONE_GRADE = "undefined (one grade only: chance agreement is 1)"
Z_95 = 1.959963984540054
CI_METHOD = "analytic large-sample SE (Fleiss, Cohen & Everitt 1969), Wald 95%"
FLEISS_CI_METHOD = "percentile bootstrap over items, 1000 resamples, numpy seed 0"
PAIR_ROLES = (Role.HUMAN,)
"""Roles whose pairs form inter-annotator agreement; adjudicators resolve, models are judged."""

Item = tuple[str, str]
"""(query_id, doc_id)"""


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
    rows = []
    for a in categories:
        row = []
        for b in categories:
            if a == b:
                row.append(1.0)
            elif weights is None or span == 0:
                row.append(0.0)
            elif weights == "linear":
                row.append(1.0 - abs(a - b) / span)
            elif weights == "quadratic":
                row.append(1.0 - (a - b) ** 2 / span**2)
            else:
                raise ValueError(f"unknown weights {weights!r}")
        rows.append(row)
    return rows


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
    rng = np.random.default_rng(seed)
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
        values[int(0.025 * (len(values) - 1))],
        values[int(math.ceil(0.975 * (len(values) - 1)))],
    )


# -- grades per annotator ------------------------------------------------------------------------


def grades_by_annotator(judgments: Iterable[Judgment]) -> dict[str, dict[Item, int]]:
    """annotator -> (qid, docid) -> grade, the last judgment given winning (pass current ones)."""
    out: dict[str, dict[Item, int]] = {}
    for j in judgments:
        if j.grade is not None:
            out.setdefault(j.annotator, {})[(j.query_id, j.doc_id)] = j.grade
    return out


def roles_of(judgments: Iterable[Judgment]) -> dict[str, str]:
    roles: dict[str, str] = {}
    for j in judgments:
        roles[j.annotator] = j.role
    return roles


def consensus_grades(
    grades: Mapping[str, Mapping[Item, int]], roles: Mapping[str, str]
) -> tuple[dict[Item, int], list[Item]]:
    """The resolved human grade per item where the humans settled it: export's rule
    (`workbench.core.resolve.consensus_grade`: an adjudicator decides, else the grade every human
    agrees on) *without* its median tie-break. Items whose humans disagree without
    adjudication are returned as unresolved: a judge measured against a tie-break would be
    credited for matching an arithmetic choice, not a human."""
    from workbench.core.resolve import consensus_grade

    graders = sorted(a for a, r in roles.items() if r in PAIR_ROLES or r == Role.ADJUDICATOR)
    by_item: dict[Item, dict[str, tuple[int, str]]] = {}
    for a in graders:
        for item, grade in grades.get(a, {}).items():
            by_item.setdefault(item, {})[a] = (grade, roles[a])
    resolved: dict[Item, int] = {}
    unresolved: list[Item] = []
    for item in sorted(by_item):
        consensus = consensus_grade(by_item[item])
        if consensus is None:
            unresolved.append(item)
        else:
            resolved[item] = consensus[0]
    return resolved, unresolved


def disagreements(
    grades: Mapping[str, Mapping[Item, int]],
    annotators: Sequence[str],
    adjudicated: Mapping[Item, int],
) -> list[dict[str, Any]]:
    """Items judged by two or more of `annotators` with different grades, widest spread first."""
    out: list[dict[str, Any]] = []
    items = sorted({item for a in annotators for item in grades.get(a, {})})
    for item in items:
        given = {a: grades[a][item] for a in annotators if item in grades.get(a, {})}
        if len(given) >= 2 and len(set(given.values())) > 1:
            out.append(
                {
                    "qid": item[0],
                    "docid": item[1],
                    "grades": given,
                    "spread": max(given.values()) - min(given.values()),
                    "adjudicated": adjudicated.get(item),
                }
            )
    out.sort(key=lambda d: (-d["spread"], d["qid"], d["docid"]))
    return out


# -- reports -------------------------------------------------------------------------------------


def _ci(k: Kappa) -> list[float] | None:
    return list(k.ci) if k.ci is not None else None


def _why_undefined(kappa: Kappa, min_items: int) -> str | None:
    if kappa.n == 0:
        return "no shared items"
    if kappa.n < min_items:
        return f"too few shared items (n < {min_items})"
    return ONE_GRADE if kappa.kappa is None else None


def _withheld(kappa: Kappa, min_items: int) -> Kappa:
    """`kappa`, or an undefined one when it rests on fewer than `min_items` items."""
    return Kappa(None, kappa.n) if kappa.n < min_items else kappa


def compare(
    first: Mapping[Item, int],
    second: Mapping[Item, int],
    grade_scale: Iterable[int],
    rel_threshold: int = 1,
    min_items: int = 0,
) -> dict:
    """Every pairwise figure for two annotators on the items both graded. With fewer than
    `min_items` shared items (overall, or in a query for its per-query figures) every kappa is
    None; `reasons` maps each None kappa to why (too few items, one grade only, none shared)."""
    categories = sorted(grade_scale)
    shared = sorted(set(first) & set(second))
    pairs = [(first[i], second[i]) for i in shared]
    plain = _withheld(cohen_kappa(pairs, categories), min_items)
    weighted = _withheld(cohen_kappa(pairs, categories, "quadratic"), min_items)
    binary = _withheld(binary_kappa(pairs, rel_threshold), min_items)
    below = [
        name
        for name, k in (("kappa", plain), ("weighted_kappa", weighted), ("binary_kappa", binary))
        if not k.meets_bar
    ]
    by_query: dict[str, list[tuple[int, int]]] = {}
    for item, pair in zip(shared, pairs, strict=True):
        by_query.setdefault(item[0], []).append(pair)
    per_query: dict[str, dict] = {}
    for qid, q_pairs in sorted(by_query.items()):
        per_query[qid] = {
            "n": len(q_pairs),
            "agreement": sum(a == b for a, b in q_pairs) / len(q_pairs),
            "kappa": _withheld(cohen_kappa(q_pairs, categories), min_items).kappa,
            "weighted_kappa": _withheld(
                cohen_kappa(q_pairs, categories, "quadratic"), min_items
            ).kappa,
        }
    return {
        "n": len(pairs),
        "agreement": (sum(a == b for a, b in pairs) / len(pairs)) if pairs else None,
        "kappa": plain.kappa,
        "kappa_ci": _ci(plain),
        "weighted_kappa": weighted.kappa,
        "weighted_kappa_ci": _ci(weighted),
        "binary_kappa": binary.kappa,
        "binary_kappa_ci": _ci(binary),
        "confusion": confusion_matrix(pairs, categories),
        "meets_bar": plain.meets_bar,
        "below_bar": below,
        "reasons": {
            name: why
            for name, k in (
                ("kappa", plain),
                ("weighted_kappa", weighted),
                ("binary_kappa", binary),
            )
            if (why := _why_undefined(k, min_items)) is not None
        },
        "per_query": per_query,
    }


def fleiss_report(
    grades: Mapping[str, Mapping[Item, int]],
    annotators: Sequence[str],
    grade_scale: Iterable[int],
    min_items: int = 0,
) -> dict | None:
    """Fleiss' kappa over the items that every one of three or more annotators graded; None
    (with a `reason`) on fewer than `min_items` such items or when chance agreement is 1."""
    if len(annotators) < 3:
        return None
    common = set.intersection(*(set(grades.get(a, {})) for a in annotators))
    if not common:
        return None
    categories = sorted(grade_scale)
    table = []
    for item in sorted(common):
        counts = Counter(grades[a][item] for a in annotators)
        table.append([counts.get(c, 0) for c in categories])
    too_few = len(table) < min_items
    kappa = None if too_few else fleiss_kappa_from_counts(table)
    return {
        "annotators": list(annotators),
        "n": len(table),
        "raters_per_item": len(annotators),
        "kappa": kappa,
        "reason": f"too few shared items (n < {min_items})"
        if too_few
        else (ONE_GRADE if kappa is None else None),
        "kappa_ci": list(ci) if kappa is not None and (ci := fleiss_bootstrap_ci(table)) else None,
        "ci_method": FLEISS_CI_METHOD,
        "meets_bar": kappa is not None and kappa >= KAPPA_BAR,
    }


def agreement_report(
    judgments: list[Judgment], grade_scale: Iterable[int], rel_threshold: int = 1
) -> dict:
    """Pairwise human agreement, Fleiss when 3+ humans share items, the disagreement list, and
    each model judge against each human and against the resolved human grade.

    Pass current judgments (one per annotator, query, doc); later ones win if not. Grades
    outside `grade_scale` (a scale narrowed after grading) are added as categories."""
    grades = grades_by_annotator(judgments)
    seen = {g for by_item in grades.values() for g in by_item.values()}
    scale = sorted(set(grade_scale) | seen)
    roles = roles_of(judgments)
    humans = sorted(a for a, r in roles.items() if r in PAIR_ROLES)
    models = sorted(a for a, r in roles.items() if r == Role.MODEL)
    resolved, unresolved = consensus_grades(grades, roles)
    adjudicators = {a: r for a, r in roles.items() if r == Role.ADJUDICATOR}
    adjudicated, _ = consensus_grades(grades, adjudicators)
    pairs = []
    for i, first in enumerate(humans):
        for second in humans[i + 1 :]:
            figures = compare(
                grades.get(first, {}),
                grades.get(second, {}),
                scale,
                rel_threshold,
                MIN_SHARED_ITEMS,
            )
            if figures["n"]:
                pairs.append({"annotators": [first, second], **figures})
    judges = []
    for model in models:
        against = []
        for human in humans:
            figures = compare(
                grades.get(human, {}), grades.get(model, {}), scale, rel_threshold, MIN_SHARED_ITEMS
            )
            if figures["n"]:
                against.append(
                    {"annotator": human, "human_labels": len(grades.get(human, {})), **figures}
                )
        vs_resolved = compare(
            resolved, grades.get(model, {}), scale, rel_threshold, MIN_SHARED_ITEMS
        )
        judges.append(
            {
                "judge": model,
                "labels": len(grades.get(model, {})),
                "against": against,
                "resolved": {
                    "human_labels": len(resolved),
                    "unresolved": len(unresolved),
                    **vs_resolved,
                },
            }
        )
    return {
        "grade_scale": scale,
        "rel_threshold": rel_threshold,
        "bar": KAPPA_BAR,
        "min_shared_items": MIN_SHARED_ITEMS,
        "ci_method": CI_METHOD,
        "annotators": {a: roles[a] for a in sorted(roles)},
        "pairs": pairs,
        "fleiss": fleiss_report(grades, humans, scale, MIN_SHARED_ITEMS),
        "disagreements": disagreements(grades, humans, adjudicated),
        "unresolved": len(unresolved),
        "judges": judges,
    }


# -- judge calibration ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoreCuts:
    """Score cut points: grade = grade_scale[number of cuts <= score]."""

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
    """Choose score -> grade cut points maximizing quadratic weighted kappa against the human
    grades on the overlap.

    How: candidate cuts are midpoints between consecutive distinct scores (thinned to
    `max_candidates` evenly spaced quantiles, plus one cut above every score so a grade may go
    unused). Start from the cuts that reproduce the human grade distribution (quantile matching),
    then coordinate ascent: move one cut at a time to the candidate (between its neighbours)
    that maximizes weighted kappa, until a round changes nothing. Deterministic: a move is taken
    only when it strictly improves kappa, scanning candidates from low to high."""
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
