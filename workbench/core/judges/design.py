"""The human sample a model judge's correction rests on (pure): a Poisson draw of pooled items,
each with a known inclusion probability, recorded before anyone judges them.

Each item is in the sample independently with probability pi = clip(scale x weight, floor, 1):
weight 2 where the judge calls the item relevant or has no label for it (where a correction is
likeliest), 1 where it calls it not relevant; `scale` is solved so the expected sample size is
the share asked for (of all pooled items, or per query). The floor keeps every item's pi away
from 0, so the Horvitz-Thompson weights (1 / pi) stay bounded. The draw is reproducible from
the seed: one uniform number per item, in the frame's sorted order, from `Random(seed/batch)`.
A later batch (items pooled after the first draw) uses the recorded scale, never a new one, so
no recorded probability changes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.core.random_streams import design_random

Key = tuple[str, str]

POSITIVE_WEIGHT = 2.0
"""The weight of an item the judge calls relevant, or did not label, against 1 for the rest."""


@dataclass(frozen=True, slots=True)
class DesignPlan:
    """How a design draws: `share` of all items, or `per_query` items of each query (expected
    sizes), every probability at least `floor`."""

    share: float | None = None
    per_query: float | None = None
    floor: float | None = None
    """None: half the mean probability (share, or per_query over the query's items)."""
    min_per_query: float | None = None
    """Under --share: a query whose expected draw falls below this many items (or all its
    items, if fewer) gets its own scale to reach it (its ratios, R@k and nDCG@k, need a
    sample of their own)."""

    def to_json(self) -> dict:
        return {"share": self.share, "per_query": self.per_query, "floor": self.floor,
                "min_per_query": self.min_per_query}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DesignItem:
    query_id: str
    doc_id: str
    prob: float
    """The item's inclusion probability, fixed when it was drawn."""
    drawn: bool
    batch: int
    """0 for the first draw; 1, 2, ... for items pooled later (same scale, a seed of their own)."""

    @property
    def key(self) -> Key:
        return (self.query_id, self.doc_id)


@dataclass(frozen=True, slots=True)
class Design:
    """A recorded design: its id, the judge whose labels shaped the probabilities (and its
    versions then), the seed, the plan, the scale (one, or one per query), and every item of
    its frame, drawn or not."""

    design_id: int
    judge: str
    judge_version: str
    seed: int
    plan: DesignPlan
    groups: Mapping[str, tuple[float, float]]
    """Query id ('' for one group of every query, under --share) -> the (scale, floor) its
    probabilities used."""
    items: tuple[DesignItem, ...]

    def probs(self) -> dict[Key, float]:
        return {i.key: i.prob for i in self.items}

    def drawn(self) -> list[DesignItem]:
        return [i for i in self.items if i.drawn]

    def group_of(self, query_id: str) -> tuple[float, float] | None:
        return self.groups.get(query_id, self.groups.get(""))


def weight(judge_grade: int | None, rel_threshold: int = 1) -> float:
    """An item's weight: POSITIVE_WEIGHT unless the judge calls it not relevant."""
    return 1.0 if judge_grade is not None and judge_grade < rel_threshold else POSITIVE_WEIGHT


def clip(value: float, floor: float) -> float:
    return min(1.0, max(floor, value))


def solve_scale(weights: Sequence[float], expected: float, floor: float) -> float:
    """The scale c with sum(clip(c w, floor, 1)) = expected (bisection; the sum rises with c)."""
    if not weights:
        return 0.0
    if expected >= len(weights):
        return 1.0 / min(weights)
    low, high = 0.0, 1.0 / min(weights)
    for _ in range(100):
        mid = (low + high) / 2
        if sum(clip(mid * w, floor) for w in weights) < expected:
            low = mid
        else:
            high = mid
    return high


def plan_problems(plan: DesignPlan) -> list[str]:
    """What is wrong with a plan, each naming its option."""
    problems = []
    if (plan.share is None) == (plan.per_query is None):
        problems.append("give one of --share or --per-query")
    if plan.share is not None and not 0 < plan.share <= 1:
        problems.append(f"--share {plan.share}: a share of the items, above 0 and at most 1")
    if plan.per_query is not None and not plan.per_query > 0:
        problems.append(f"--per-query {plan.per_query}: an expected number of items above 0")
    if plan.floor is not None and not 0 < plan.floor <= 1:
        problems.append(f"--floor {plan.floor}: a probability above 0 and at most 1")
    if plan.floor is not None and plan.share is not None and plan.floor > plan.share:
        problems.append(f"--floor {plan.floor}: at most --share ({plan.share})")
    if plan.min_per_query is not None:
        if plan.share is None:
            problems.append("--min-per-query: only with --share (--per-query sets each query's)")
        elif not plan.min_per_query > 0:
            problems.append(f"--min-per-query {plan.min_per_query}: a number of items above 0")
    return problems


def _targets(
    plan: DesignPlan, frame: Mapping[str, Sequence[str]]
) -> dict[str, tuple[list[str], float, float]]:
    """Group -> (its query ids, the expected sample size, the floor): one group ('') under
    --share, one per query under --per-query."""
    if plan.share is not None:
        size = sum(len(d) for d in frame.values())
        floor = plan.floor if plan.floor is not None else plan.share / 2
        return {"": (sorted(frame), plan.share * size, floor)}
    assert plan.per_query is not None
    groups = {}
    for qid, docs in frame.items():
        if not docs:
            continue
        expected = min(float(len(docs)), plan.per_query)
        mean = expected / len(docs)
        floor = plan.floor if plan.floor is not None else mean / 2
        groups[qid] = ([qid], expected, min(floor, mean))
    return groups


def first_probs(
    plan: DesignPlan,
    frame: Mapping[str, Sequence[str]],
    judge: Mapping[Key, int],
    rel_threshold: int = 1,
) -> tuple[dict[Key, float], dict[str, tuple[float, float]]]:
    """Every frame item's inclusion probability and the (scale, floor) of each group."""
    probs: dict[Key, float] = {}
    scales: dict[str, tuple[float, float]] = {}
    for group, (queries, expected, floor) in _targets(plan, frame).items():
        keys = [(q, d) for q in queries for d in frame[q]]
        weights = [weight(judge.get(k), rel_threshold) for k in keys]
        scale = solve_scale(weights, expected, floor)
        scales[group] = (scale, floor)
        for key, w in zip(keys, weights, strict=True):
            probs[key] = clip(scale * w, floor)
    if plan.min_per_query:
        scales.update(_raise_small(plan.min_per_query, frame, judge, probs, scales, rel_threshold))
    return probs, scales


def _raise_small(
    least: float,
    frame: Mapping[str, Sequence[str]],
    judge: Mapping[Key, int],
    probs: dict[Key, float],
    scales: Mapping[str, tuple[float, float]],
    rel_threshold: int,
) -> dict[str, tuple[float, float]]:
    """Each query whose expected draw is under `least` (or its size) raised to it by a scale
    of its own (the same floor, probabilities only raised), updating `probs`; its groups."""
    groups = {}
    for qid, docs in frame.items():
        keys = [(qid, d) for d in docs]
        target = min(float(len(keys)), least)
        if not keys or sum(probs[k] for k in keys) >= target - 1e-9:
            continue
        scale, floor = scales.get(qid, scales[""])
        weights = [weight(judge.get(k), rel_threshold) for k in keys]
        own = max(scale, solve_scale(weights, target, floor))
        groups[qid] = (own, floor)
        for key, w in zip(keys, weights, strict=True):
            probs[key] = clip(own * w, floor)
    return groups


def poisson_draw(probs: Mapping[Key, float], seed: int, batch: int = 0) -> list[DesignItem]:
    """Each item in or out independently with its probability, in sorted key order, from the
    seed and batch alone (the same arguments, the same draw)."""
    rng = design_random(seed, batch)
    return [
        DesignItem(q, d, probs[(q, d)], rng.random() < probs[(q, d)], batch)
        for q, d in sorted(probs)
    ]


def draw_first(
    plan: DesignPlan,
    frame: Mapping[str, Sequence[str]],
    judge: Mapping[Key, int],
    seed: int,
    rel_threshold: int = 1,
) -> tuple[list[DesignItem], dict[str, tuple[float, float]]]:
    """The first batch of a design over `frame` (query id -> its pooled doc ids) and the scale
    it used."""
    probs, scales = first_probs(plan, frame, judge, rel_threshold)
    return poisson_draw(probs, seed, 0), scales


def draw_more(
    design: Design,
    frame: Mapping[str, Sequence[str]],
    judge: Mapping[Key, int],
    rel_threshold: int = 1,
) -> tuple[list[DesignItem], dict[str, tuple[float, float]]]:
    """A later batch: the frame's items the design lacks, at the recorded scale (a query new
        to a per-query design gets its own scale, as the first batch would have given it, returned
    with the batch)."""
    have = {i.key for i in design.items}
    new = {q: [d for d in docs if (q, d) not in have] for q, docs in frame.items()}
    new = {q: docs for q, docs in new.items() if docs}
    if not new:
        return [], {}
    probs: dict[Key, float] = {}
    fresh = {q: docs for q, docs in new.items() if design.group_of(q) is None}
    groups: dict[str, tuple[float, float]] = {}
    if fresh:
        fresh_probs, groups = first_probs(design.plan, fresh, judge, rel_threshold)
        probs.update(fresh_probs)
    for qid, docs in new.items():
        group = design.group_of(qid)
        if group is None:
            continue
        scale, floor = group
        for doc in docs:
            probs[(qid, doc)] = clip(scale * weight(judge.get((qid, doc)), rel_threshold), floor)
    batch = max((i.batch for i in design.items), default=-1) + 1
    return poisson_draw(probs, design.seed, batch), groups


def design_first(order: Sequence[Key], drawn: set[Key]) -> list[int]:
    """Positions of `order` with the drawn items first (each group in its own order): the
    annotators' queue judges the sample before anything else."""
    first = [n for n, key in enumerate(order) if key in drawn]
    rest = [n for n, key in enumerate(order) if key not in drawn]
    return first + rest
