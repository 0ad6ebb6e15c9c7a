"""Properties every ranking must satisfy, over generated rankings and judgments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.measures import metrics
from workbench.core.measures.metrics import evaluate, top_k
from workbench.core.model import order_pairs

DOCS = [f"d{i}" for i in range(14)]
KEYS_IN_UNIT = ("P", "R", "MRR", "nDCG", "bpref", "judged", "ceiling", "pct_of_ceiling")

judgments = st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), max_size=10)
rankings = st.lists(st.sampled_from(DOCS), max_size=16)
distinct_rankings = st.lists(st.sampled_from(DOCS), max_size=14, unique=True)
cutoffs = st.integers(1, 12)
thresholds = st.integers(1, 3)
gains = st.sampled_from(["linear", "exponential"])

EPS = 1e-12


def score_query(*args, **kw) -> dict:
    """The figures of `metrics.score_query` by key."""
    return dict(metrics.score_query(*args, **kw).values)


def rel_count(judged: dict[str, int], threshold: int) -> int:
    return sum(1 for g in judged.values() if g >= threshold)


@settings(max_examples=300, deadline=None)
@given(rankings, judgments, cutoffs, thresholds, gains)
def test_every_measure_is_between_0_and_1(ranking, judged, k, threshold, gain):
    row = score_query(ranking, judged, [k], threshold, gain)
    for key, value in row.items():
        if key.split("@")[0] in KEYS_IN_UNIT and value is not None:
            assert -EPS <= value <= 1 + EPS, (key, value)


@settings(max_examples=300, deadline=None)
@given(rankings, judgments, cutoffs, thresholds)
def test_recall_never_beats_its_ceiling_nor_precision_rel_over_k(ranking, judged, k, threshold):
    row = score_query(ranking, judged, [k], threshold)
    rel = rel_count(judged, threshold)
    if rel:
        assert row[f"R@{k}"] <= row[f"ceiling@{k}"] + EPS
        assert row[f"ceiling@{k}"] == min(1.0, k / rel)
    else:
        assert row[f"R@{k}"] is None
    assert row[f"P@{k}"] <= rel / k + EPS


@settings(max_examples=200, deadline=None)
@given(distinct_rankings, judgments, cutoffs, st.randoms(use_true_random=False))
def test_precision_and_recall_ignore_order_within_the_top_k(ranking, judged, k, rnd):
    top = ranking[:k]
    rnd.shuffle(top)
    shuffled = top + ranking[k:]
    a = score_query(ranking, judged, [k])
    b = score_query(shuffled, judged, [k])
    assert a[f"P@{k}"] == b[f"P@{k}"] and a[f"R@{k}"] == b[f"R@{k}"]
    assert a[f"judged@{k}"] == b[f"judged@{k}"]


@settings(max_examples=200, deadline=None)
@given(judgments, cutoffs, thresholds, gains, distinct_rankings)
def test_ndcg_is_1_for_the_ideal_ranking(judged, k, threshold, gain, noise):
    if not rel_count(judged, threshold):
        return
    ideal = sorted((d for d, g in judged.items() if g > 0), key=lambda d: -judged[d])
    rest = [d for d in noise if d not in judged or judged[d] <= 0]
    row = score_query(ideal + rest, judged, [k], threshold, gain)
    assert row[f"nDCG@{k}"] == pytest.approx(1.0)


@settings(max_examples=300, deadline=None)
@given(rankings, judgments, cutoffs, thresholds, st.data())
def test_a_duplicate_never_raises_any_score(ranking, judged, k, threshold, data):
    if not ranking:
        return
    copy_of = data.draw(st.integers(0, len(ranking) - 1))
    at = data.draw(st.integers(copy_of + 1, len(ranking)))
    with_dupe = ranking[:at] + [ranking[copy_of]] + ranking[at:]
    before = score_query(ranking, judged, [k], threshold)
    after = score_query(with_dupe, judged, [k], threshold)
    for key, value in after.items():
        if value is not None and before[key] is not None:
            assert value <= before[key] + EPS, (key, before[key], value)
    # and the duplicate slot scores exactly as an unjudged document in that slot would
    filler = ranking[:at] + ["never-judged"] + ranking[at:]
    assert after == score_query(filler, judged, [k], threshold)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), judgments, min_size=1),
    st.dictionaries(st.sampled_from(["q1", "q2", "q4"]), distinct_rankings),
    cutoffs,
)
def test_means_average_the_queries_with_a_relevant_document(qrels, runs, k):
    result = evaluate(qrels, runs, [k])
    expected = [q for q, judged in qrels.items() if rel_count(judged, 1)]
    assert result.in_mean == expected and result.mean.queries == len(expected)
    if expected:
        recall = sum(result.per_query[q].values[f"R@{k}"] for q in expected) / len(expected)
        assert result.mean.values[f"R@{k}"] == pytest.approx(recall)
    else:
        assert result.mean.values[f"R@{k}"] is None


scored_runs = st.dictionaries(
    st.sampled_from(DOCS), st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.5]), max_size=14
)


@settings(max_examples=300, deadline=None)
@given(scored_runs, judgments, cutoffs, thresholds)
def test_scores_rank_exactly_as_the_ordering_rule(scores, judged, k, threshold):
    """A {doc: score} ranking (heavy ties here) scores as its `order_pairs` list does."""
    ranking = order_pairs(scores.items())
    assert score_query(scores, judged, [k], threshold) == score_query(
        ranking, judged, [k], threshold
    )
    assert top_k(scores, k) == ranking[:k]
