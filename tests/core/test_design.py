"""The human sample's design (core.design) and the Horvitz-Thompson difference estimator that
eval --judge corrects a judge by (core.design_estimate)."""

from __future__ import annotations

import math
import random

import pytest

from workbench.core.judges.design import (
    Design,
    DesignPlan,
    draw_first,
    draw_more,
    first_probs,
    plan_problems,
)
from workbench.core.judges.design_estimate import (
    Unit,
    design_mean,
    fold_of,
    ndcg_form,
    precision_form,
    recall_form,
)
from workbench.core.measures.metrics import score_query

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
                        precision_form(5), lam=1.0, small_sample=False)  # fmt: skip
        assert e is not None
        estimates.append(e.estimate)
        variances.append(e.variance)
    mean = sum(estimates) / len(estimates)
    spread = sum((x - mean) ** 2 for x in estimates) / (len(estimates) - 1)
    assert mean == pytest.approx(true_p, abs=3 * math.sqrt(spread / len(estimates)))
    assert sum(variances) / len(variances) == pytest.approx(spread, rel=0.2)


def test_min_per_query_raises_only_the_queries_below_it_and_extends_at_their_own_scale():
    frame = {"big": [f"b{i}" for i in range(40)], "small": ["s0", "s1", "s2", "s3"],
             "tiny": ["t0"]}  # fmt: skip
    judge = {("big", d): 0 for d in frame["big"]} | {("small", d): 0 for d in frame["small"]}
    judge[("small", "s0")] = 1
    plain, _ = first_probs(DesignPlan(share=0.1), frame, judge)
    probs, groups = first_probs(DesignPlan(share=0.1, min_per_query=2), frame, judge)
    assert sum(p for (q, _), p in probs.items() if q == "small") == pytest.approx(2)
    assert probs[("tiny", "t0")] == 1.0  # all its items, fewer than 2
    assert all(probs[k] == plain[k] for k in plain if k[0] == "big")  # not below: untouched
    assert all(probs[k] >= plain[k] for k in plain)
    assert set(groups) == {"", "small", "tiny"}
    assert probs[("small", "s0")] == pytest.approx(2 * probs[("small", "s1")])  # weights kept
    items, _ = draw_first(DesignPlan(share=0.1, min_per_query=2), frame, judge, seed=1)
    design = Design(1, "llm", "v", 1, DesignPlan(share=0.1, min_per_query=2), groups,
                    tuple(items))  # fmt: skip
    more, _ = draw_more(design, {**frame, "small": [*frame["small"], "s9"]}, judge)
    assert [i.prob for i in more] == [pytest.approx(probs[("small", "s1")] * 2)]  # unlabelled


def test_min_per_query_is_refused_without_share_or_below_one_item():
    assert any(
        "--min-per-query" in p for p in plan_problems(DesignPlan(per_query=3, min_per_query=2))
    )
    assert any(
        "--min-per-query" in p for p in plan_problems(DesignPlan(share=0.1, min_per_query=0))
    )
    assert plan_problems(DesignPlan(share=0.1, min_per_query=2)) == []


def test_the_small_sample_rules_keep_p_at_k_unbiased_and_never_narrow_it():
    """P@k's cross-fitted lam leaves the estimate unbiased over draws; the pseudo-disagreement
    floor makes every interval at least as wide as the plain one, and wide even when the draw
    holds no disagreement at all (a perfect-looking judge on this draw)."""
    truth, rankings = seeded_truth(4)
    judge = {key: (2 if truth[key] == 0 else 0) if n % 5 == 0 else truth[key]
             for n, key in enumerate(sorted(JUDGE))}  # fmt: skip
    true_p = sum(1 for q, r in rankings.items() for d in r[:5] if truth[(q, d)] >= 1) / 50
    probs, _ = first_probs(DesignPlan(share=0.2), FRAME, judge)
    estimates = []
    for seed in range(400):
        rng = random.Random(seed)
        drawn = {key for key in sorted(probs) if rng.random() < probs[key]}
        units = population(rankings, truth, judge, probs, drawn, 5, False)
        e = design_mean(units, precision_form(5))
        plain = design_mean(units, precision_form(5), small_sample=False)
        assert e is not None and plain is not None
        assert e.variance >= plain.variance - 1e-15
        estimates.append(e.estimate)
    mean = sum(estimates) / len(estimates)
    spread = sum((x - mean) ** 2 for x in estimates) / (len(estimates) - 1)
    assert mean == pytest.approx(true_p, abs=3 * math.sqrt(spread / len(estimates)))
    agreeing = {key: truth[key] for key in JUDGE}
    drawn = {key for key in sorted(probs) if random.Random(9).random() < 0.5}
    units = population(rankings, truth, agreeing, probs, drawn, 5, False)
    plain = design_mean(units, precision_form(5), small_sample=False)
    e = design_mean(units, precision_form(5))
    assert plain is not None and e is not None
    assert plain.high - plain.low == pytest.approx(0, abs=1e-12)
    assert e.high - e.low > 0.01


def test_cross_fitting_splits_by_key_alone():
    assert {fold_of("q1", f"d{i}") for i in range(20)} == {0, 1}
    assert fold_of("q1", "d3") == fold_of("q1", "d3")


def test_a_figure_past_its_range_is_cut_at_it():
    """P@k lies in [0, 1]: one relevant passage drawn at probability 0.05 where the judge saw
    none weighs 20 slots, a raw estimate of 2.0 over 10 slots; the point and the interval are
    cut at 1 and 0 (the truth is never outside them, so no coverage is lost)."""
    from workbench.core.judges.design_estimate import Unit

    units = {
        q: [Unit(f"d{r}", r, 0.05 if (q, r) == ("q1", 1) else 1.0, (q, r) == ("q1", 1), 0,
                 1 if (q, r) == ("q1", 1) else None) for r in range(1, 6)]
        for q in ("q1", "q2")
    }  # fmt: skip
    e = design_mean(units, precision_form(5), small_sample=False)
    assert e is not None
    assert e.estimate == 1.0 and e.high == 1.0 and 0.0 <= e.low <= 1.0
    assert 0.0 <= e.human_low <= e.human_only <= e.human_high <= 1.0  # type: ignore[operator]
