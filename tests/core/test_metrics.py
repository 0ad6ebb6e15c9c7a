"""The measures on the DESIGN.md seed example and on small hand-checked cases."""

from __future__ import annotations

import math

import pytest
from seed_example import SEED_QRELS, SEED_RANKINGS

from workbench.core.measures.metrics import (
    MEASURES,
    Measure,
    capped_recall_at,
    evaluate,
    query_view,
    register,
    score_query,
)

QIDS = ["q_faw", "q_store", "q_milk", "q_broad"]


def approx3(value: float) -> object:
    """DESIGN.md prints three decimals."""
    return pytest.approx(value, abs=5e-4)


def figures(*args, **kw) -> dict:
    """`score_query`'s figures by key, with |Rel| as `rel`."""
    scores = score_query(*args, **kw)
    return {**scores.values, "rel": scores.rel}


@pytest.fixture(scope="module")
def seed():
    return evaluate(SEED_QRELS, SEED_RANKINGS, [5, 10])


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("P@5", [0.4, 0.4, 0.4, 0.8]),
        ("R@5", [0.667, 0.667, 0.667, 0.5]),
        ("MRR", [1.0, 0.5, 1.0, 1.0]),
        ("nDCG@5", [0.735, 0.536, 0.811, 0.880]),
        ("R@10", [1.0, 1.0, 1.0, 1.0]),
        ("ceiling@5", [1.0, 1.0, 1.0, 0.625]),
    ],
)
def test_seed_per_query(seed, key, expected):
    assert [seed.per_query[q].values[key] for q in QIDS] == [approx3(v) for v in expected]


def test_seed_means(seed):
    assert seed.mean.values["R@5"] == approx3(0.625)
    assert seed.mean.values["P@5"] == approx3(0.5)
    assert seed.mean.values["nDCG@5"] == approx3(0.741)
    assert seed.mean.values["R@10"] == 1.0
    assert seed.mean.queries == 4 and seed.mean.rel == 4.25
    assert seed.in_mean == QIDS


def test_seed_capped_recall_is_the_bug():
    """The min(|Rel|, k) denominator: .667 .667 .667 .800, mean .700 instead of .625."""
    capped = [capped_recall_at(query_view(SEED_RANKINGS[q], SEED_QRELS[q]), 5) for q in QIDS]
    assert capped == [approx3(v) for v in (0.667, 0.667, 0.667, 0.8)]
    assert sum(capped) / 4 == approx3(0.700)


def test_seed_broad_against_the_truly_relevant_set():
    truly = {d: 1 for d in "m1 m2 m3 m4 m5 m6 s1 s2 s3 s4 x1 x2".split()}
    row = figures(SEED_RANKINGS["q_broad"], truly, [5])
    assert row["R@5"] == approx3(0.417)


def test_seed_broad_ceiling_share(seed):
    row = seed.per_query["q_broad"].values
    assert row["ceiling@5"] == 0.625
    assert row["pct_of_ceiling@5"] == pytest.approx(0.8)


def test_order_moves_mrr_and_ndcg_not_p_or_r():
    judged = SEED_QRELS["q_milk"]
    before = figures("d1 s2 x1 d2 x3".split(), judged, [5])
    # DESIGN.md's figures (MRR .333, nDCG@5 .481) are those of d1 demoted to rank 4 below d2.
    after = figures("s2 x1 d2 d1 x3".split(), judged, [5])
    assert (before["P@5"], before["R@5"]) == (after["P@5"], after["R@5"])
    assert after["P@5"] == approx3(0.4) and after["R@5"] == approx3(0.667)
    assert before["MRR"] == 1.0 and after["MRR"] == approx3(0.333)
    assert before["nDCG@5"] == approx3(0.811) and after["nDCG@5"] == approx3(0.481)
    # d1 at rank 5 itself: the same P and R, MRR .333, nDCG@5 .454.
    last = figures("s2 x1 d2 x3 d1".split(), judged, [5])
    assert (last["P@5"], last["R@5"], last["MRR"]) == (after["P@5"], after["R@5"], after["MRR"])
    assert last["nDCG@5"] == approx3(0.454)


def test_duplicate_counts_once():
    row = figures("d1 d1 x3 d2 x1".split(), SEED_QRELS["q_milk"], [5])
    assert row["R@5"] == approx3(0.667)
    assert row["P@5"] == approx3(0.4)
    # the duplicate keeps its slot: d2 is at rank 4, not 3
    assert row["nDCG@5"] == pytest.approx((3 + 2 / math.log2(5)) / (3 + 2 / math.log2(3) + 0.5))


def test_precision_ceiling_when_rel_below_k():
    judged = SEED_QRELS["q_milk"]
    best = figures("d1 d2 d3 x1 x2".split(), judged, [5])
    assert best["P@5"] == pytest.approx(0.6)
    assert best["R@5"] == 1.0 and best["nDCG@5"] == pytest.approx(1.0)


# --- fixture cases ------------------------------------------------------------------------

JUDGED = {"a": 2, "b": 1, "c": 3, "n1": 0, "n2": 0}


def row_for(ranking: str, k: int = 3, judged=JUDGED, **kw):
    return figures(ranking.split(), judged, [k], **kw)


def test_all_relevant_retrieved():
    row = row_for("c a b n1 z")
    assert row["P@3"] == 1.0 and row["R@3"] == 1.0 and row["nDCG@3"] == pytest.approx(1.0)
    assert row["MRR"] == 1.0 and row["bpref"] == 1.0 and row["judged@3"] == 1.0


def test_none_retrieved():
    row = row_for("x y z w")
    assert row["P@3"] == 0.0 and row["R@3"] == 0.0 and row["nDCG@3"] == 0.0
    assert row["MRR"] == 0.0 and row["bpref"] == 0.0 and row["judged@3"] == 0.0
    assert row["ceiling@3"] == 1.0


def test_one_of_three():
    row = row_for("x a y")
    assert row["P@3"] == pytest.approx(1 / 3) and row["R@3"] == pytest.approx(1 / 3)
    assert row["MRR"] == 0.5
    assert row["nDCG@3"] == pytest.approx((2 / math.log2(3)) / (3 + 2 / math.log2(3) + 0.5))


def test_hit_just_below_the_cutoff():
    row = row_for("x y z c", k=3)
    assert row["P@3"] == 0.0 and row["R@3"] == 0.0 and row["nDCG@3"] == 0.0
    assert row["MRR"] == 0.25  # MRR looks at the whole ranking, as trec_eval's recip_rank
    assert row["bpref"] == pytest.approx(1 / 3)


def test_fewer_results_than_k():
    row = row_for("c a", k=5)
    assert row["P@5"] == pytest.approx(2 / 5)  # divided by k, not by the ranking length
    assert row["R@5"] == pytest.approx(2 / 3)
    assert row["judged@5"] == 1.0  # 2 judged of min(5, 2) slots


def test_empty_relevant_set_is_undefined_not_zero():
    row = row_for("a b", judged={"a": 0, "b": 0})
    assert row["R@3"] is None and row["nDCG@3"] is None and row["bpref"] is None
    assert row["ceiling@3"] is None and row["pct_of_ceiling@3"] is None
    assert row["P@3"] == 0.0 and row["rel"] == 0


def test_empty_ranking():
    row = row_for("", k=3)
    assert row["P@3"] == 0.0 and row["R@3"] == 0.0 and row["judged@3"] is None


def test_rel_threshold_and_exponential_gain():
    row = row_for("b a c", rel_threshold=2)
    assert row["rel"] == 2 and row["R@3"] == 1.0 and row["P@3"] == pytest.approx(2 / 3)
    assert row["MRR"] == 0.5
    exp = row_for("a c", gain="exponential")
    assert exp["nDCG@3"] == pytest.approx((3 + 7 / math.log2(3)) / (7 + 3 / math.log2(3) + 1 / 2))
    with pytest.raises(ValueError):
        row_for("a", gain="cubic")


def test_bpref_follows_trec_eval():
    # R = 3, N = 2: c above every non-relevant scores 1; a below one scores 1 - 1/2;
    # b below both scores 1 - 2/2; unjudged docs are skipped; negative grades are unjudged.
    judged = {**JUDGED, "u": -1}
    row = row_for("c u n1 a x n2 b", judged=judged)
    assert row["bpref"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert row["judged@3"] == pytest.approx(2 / 3)


def test_judged_counts_grade_zero_and_not_negative():
    row = row_for("n1 u a", judged={**JUDGED, "u": -1})
    assert row["judged@3"] == pytest.approx(2 / 3)


# --- means -----------------------------------------------------------------------------------


def test_mean_follows_trec_eval_c():
    qrels = {
        "1": {"a": 1, "b": 1},
        "2": {"c": 1},  # absent from the run: scores 0, stays in the mean
        "3": {"d": 0},  # no relevant doc: left out of every mean
        "4": {"e": 0},  # no relevant and not ranked: no row
    }
    rankings = {"1": ["a", "x"], "3": ["d"], "9": ["a"]}
    result = evaluate(qrels, rankings, 2)
    assert result.in_mean == ["1", "2"]
    assert result.missing_from_run == ["2"]
    assert result.no_relevant == ["3", "4"]
    assert result.not_in_qrels == ["9"]
    assert list(result.per_query) == ["1", "2", "3"]
    assert result.per_query["2"].values["R@2"] == 0.0 and result.per_query["2"].values["MRR"] == 0.0
    assert result.mean.values["R@2"] == pytest.approx(0.25)
    assert result.mean.values["P@2"] == pytest.approx(0.25)
    assert result.mean.queries == 2
    # judged@k of an unranked query is undefined: out of that mean, and named
    assert result.undefined == {"judged@2": ["2"]}
    assert result.mean.values["judged@2"] == pytest.approx(0.5)


def test_no_scorable_query_gives_undefined_means():
    result = evaluate({"1": {"a": 0}}, {"1": ["a"]}, 5)
    assert result.mean.values["R@5"] is None and result.mean.queries == 0
    assert result.mean.rel is None


def test_several_ks():
    row = row_for("c x a b", k=1)
    multi = figures("c x a b".split(), JUDGED, [3, 1])
    assert multi["P@1"] == row["P@1"] and list(multi)[:2] == ["P@3", "P@1"]
    with pytest.raises(ValueError):
        evaluate({}, {}, [0])


def test_registry_is_declarative():
    assert {"P", "R", "MRR", "nDCG", "bpref", "judged", "ceiling"} <= set(MEASURES)
    assert MEASURES["MRR"].key(5) == "MRR" and MEASURES["P"].key(5) == "P@5"
    extra = Measure(
        "hits",
        "relevant docs in the top k",
        lambda v, k: float(sum(1 for i, g in v.hits if i < k and g >= v.rel_threshold)),
    )
    assert register(extra) is extra
    try:
        row = figures("c x a".split(), JUDGED, [3], measures=["hits", "R"])
        assert row == {"hits@3": 2.0, "R@3": pytest.approx(2 / 3), "rel": 3}
        assert "hits@3" in score_query("c x a".split(), JUDGED, [3]).values  # all, by default
    finally:
        del MEASURES["hits"]
    assert "hits@3" not in score_query("c x a".split(), JUDGED, [3]).values


def test_measures_carry_their_display():
    assert MEASURES["ceiling"].heading(5) == "ceil@5" and MEASURES["P"].heading(5) == "P@5"
    assert MEASURES["pct_of_ceiling"].heading(5) == "of ceil"
    assert MEASURES["judged"].percent and not MEASURES["nDCG"].percent
