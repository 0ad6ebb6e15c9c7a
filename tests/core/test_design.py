"""The human sample's design (core.design) and the Horvitz-Thompson difference estimator that
eval --judge corrects a judge by (core.design_estimate)."""

from __future__ import annotations

import math
import random

import pytest

from workbench.core.design import (
    Design,
    DesignPlan,
    draw_first,
    draw_more,
    first_probs,
    plan_problems,
)
from workbench.core.design_estimate import (
    Unit,
    design_mean,
    ndcg_form,
    precision_form,
    recall_form,
)
from workbench.core.metrics import score_query

FRAME = {f"q{q}": [f"d{q}-{i}" for i in range(20)] for q in range(10)}
JUDGE = {(q, d): (2 if i % 3 == 0 else 0) for q, docs in FRAME.items() for i, d in enumerate(docs)}


def test_probabilities_meet_the_share_the_floor_and_favour_judge_positives():
    probs, groups = first_probs(DesignPlan(share=0.2), FRAME, JUDGE)
    assert sum(probs.values()) == pytest.approx(0.2 * 200, rel=1e-6)
    assert min(probs.values()) >= 0.1 - 1e-12 and max(probs.values()) <= 1
    assert probs[("q0", "d0-0")] == pytest.approx(2 * probs[("q0", "d0-1")])
    per_query, _ = first_probs(DesignPlan(per_query=4), FRAME, JUDGE)
    for q in FRAME:
        assert sum(p for (qq, _), p in per_query.items() if qq == q) == pytest.approx(4)
    assert groups[""][1] == 0.1


def test_the_draw_is_reproducible_from_the_seed_and_extending_keeps_every_probability():
    items, groups = draw_first(DesignPlan(share=0.2), FRAME, JUDGE, seed=5)
    again, _ = draw_first(DesignPlan(share=0.2), FRAME, JUDGE, seed=5)
    assert items == again
    other, _ = draw_first(DesignPlan(share=0.2), FRAME, JUDGE, seed=6)
    assert [i.drawn for i in items] != [i.drawn for i in other]
    design = Design(1, "llm", "v", 5, DesignPlan(share=0.2), groups, tuple(items))
    grown = {q: [*docs, f"{q}-new"] for q, docs in FRAME.items()}
    more, new_groups = draw_more(design, grown, JUDGE)
    assert {i.key for i in more} == {(q, f"{q}-new") for q in FRAME} and new_groups == {}
    assert all(i.batch == 1 for i in more)
    scale, floor = groups[""]
    assert all(i.prob == pytest.approx(max(floor, scale * 2)) for i in more)  # unlabelled: x2
    assert draw_more(design, FRAME, JUDGE) == ([], {})


@pytest.mark.parametrize(
    ("plan", "field"),
    [(DesignPlan(share=0), "--share"), (DesignPlan(share=1.5), "--share"),
     (DesignPlan(per_query=-1), "--per-query"), (DesignPlan(), "--share or --per-query"),
     (DesignPlan(share=0.1, floor=0.5), "--floor")],
)  # fmt: skip
def test_bad_plans_name_their_option(plan, field):
    assert any(field in p for p in plan_problems(plan))


def population(rankings, truth, judge, probs, drawn, k, whole=True):
    out = {}
    for q, ranked in rankings.items():
        rank = {d: n for n, d in enumerate(ranked[:k])}
        docs = FRAME[q] if whole else ranked[:k]
        out[q] = [Unit(d, rank.get(d), probs[(q, d)], (q, d) in drawn, judge.get((q, d)),
                       truth.get((q, d), 0)) for d in docs]  # fmt: skip
    return out


def seeded_truth(seed: int = 1):
    rng = random.Random(seed)
    truth = {key: rng.choice([0, 0, 0, 1, 2, 3]) for key in JUDGE}
    rankings = {q: sorted(docs, key=lambda d: rng.random()) for q, docs in FRAME.items()}
    return truth, rankings


def test_with_every_item_drawn_the_estimate_is_the_truth_for_p_r_and_ndcg():
    truth, rankings = seeded_truth()
    probs = {key: 1.0 for key in JUDGE}
    for name, form, whole in (("P", precision_form(5), False), ("R", recall_form(5), True),
                              ("nDCG", ndcg_form(5, 3), True)):  # fmt: skip
        e = design_mean(population(rankings, truth, JUDGE, probs, set(JUDGE), 5, whole), form)
        expected = []
        for q, ranked in rankings.items():
            qrels = {d: truth[(q, d)] for d in FRAME[q]}
            value = score_query(ranked, qrels, [5], measures=[name]).values[f"{name}@5"]
            expected.append(value or 0.0)
        assert e is not None
        assert e.estimate == pytest.approx(sum(expected) / len(expected), abs=1e-9)
        assert e.high - e.low == pytest.approx(0, abs=1e-9)


def test_p_at_k_is_unbiased_over_draws_and_its_variance_estimate_matches():
    """The difference estimator (lam = 1) over many Poisson draws: its mean is the truth, the
    mean of its variance estimate the variance of its draws (a wrong judge on purpose)."""
    truth, rankings = seeded_truth(3)
    judge = {key: (2 if truth[key] == 0 else 0) if n % 4 == 0 else truth[key]
             for n, key in enumerate(sorted(JUDGE))}  # fmt: skip
    true_p = sum(1 for q, r in rankings.items() for d in r[:5] if truth[(q, d)] >= 1) / 50
    probs, _ = first_probs(DesignPlan(share=0.3), FRAME, judge)
    estimates, variances = [], []
    for seed in range(600):
        rng = random.Random(seed)
        drawn = {key for key in sorted(probs) if rng.random() < probs[key]}
        e = design_mean(population(rankings, truth, judge, probs, drawn, 5, False),
                        precision_form(5), lam=1.0)  # fmt: skip
        assert e is not None
        estimates.append(e.estimate)
        variances.append(e.variance)
    mean = sum(estimates) / len(estimates)
    spread = sum((x - mean) ** 2 for x in estimates) / (len(estimates) - 1)
    assert mean == pytest.approx(true_p, abs=3 * math.sqrt(spread / len(estimates)))
    assert sum(variances) / len(variances) == pytest.approx(spread, rel=0.2)
