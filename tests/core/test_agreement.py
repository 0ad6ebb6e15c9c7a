"""Agreement figures against sklearn and hand-computed cases; the report's shape and rules."""

from __future__ import annotations

import math
import random
import statistics
import warnings

import pytest

from workbench.core.agreement.agreement import agreement_report
from workbench.core.agreement.kappa import (
    Kappa,
    binary_kappa,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa_from_counts,
)
from workbench.core.judges.calibration import fit_thresholds
from workbench.core.judgments.resolve import (
    consensus_grades,
    grades_by_annotator,
    resolve,
    roles_of,
)
from workbench.core.model import Judgment, Role

SCALE = [0, 1, 2, 3]


def sk_kappa(a, b, weights=None):
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns where kappa is undefined; we test that
        value = cohen_kappa_score(
            a, b, labels=SCALE, weights=weights, replace_undefined_by=math.nan
        )
    return None if math.isnan(value) else value


def noisy_copy(rng, grades, keep):
    return [g if rng.random() < keep else rng.randint(0, 3) for g in grades]


@pytest.mark.parametrize("weights", [None, "quadratic", "linear"])
def test_random_cases_match_sklearn(weights):
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 40)
        first = [rng.choice([0, 0, 1, 2, 3]) for _ in range(n)]
        second = noisy_copy(rng, first, rng.random())
        ours = cohen_kappa(list(zip(first, second, strict=True)), SCALE, weights).kappa
        theirs = sk_kappa(first, second, weights)
        if theirs is None:
            assert ours is None
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)


def test_binary_kappa_matches_sklearn_on_thresholded_grades():
    rng = random.Random(3)
    first = [rng.randint(0, 3) for _ in range(200)]
    second = noisy_copy(rng, first, 0.6)
    pairs = list(zip(first, second, strict=True))
    for threshold in (1, 2, 3):
        from sklearn.metrics import cohen_kappa_score

        expected = cohen_kappa_score(
            [int(g >= threshold) for g in first], [int(g >= threshold) for g in second]
        )
        assert binary_kappa(pairs, threshold).kappa == pytest.approx(expected, abs=1e-12)


def test_hand_computed_unweighted():
    # Both marginals (1, 2, 2, 1)/6: p_o = 4/6, p_e = 10/36, kappa = (24 - 10) / (36 - 10) = 7/13.
    first = [0, 1, 2, 3, 1, 2]
    second = [0, 1, 2, 2, 1, 3]
    result = cohen_kappa(list(zip(first, second, strict=True)), SCALE)
    assert result.kappa == pytest.approx(7 / 13)
    assert result.n == 6
    assert sk_kappa(first, second) == pytest.approx(7 / 13)


def test_hand_computed_quadratic_total_reversal_is_minus_one():
    # 0 vs 3 and 3 vs 0: weighted p_o = 0, p_e = 0.25 * (1 + 0 + 0 + 1) = 0.5, kappa = -1.
    result = cohen_kappa([(0, 3), (3, 0)], SCALE, "quadratic")
    assert result.kappa == pytest.approx(-1.0)
    assert sk_kappa([0, 3], [3, 0], "quadratic") == pytest.approx(-1.0)


def test_one_annotator_used_a_single_grade_is_zero():
    first = [2, 2, 2, 2, 2]
    second = [0, 1, 2, 3, 2]
    for weights in (None, "quadratic"):
        result = cohen_kappa(list(zip(first, second, strict=True)), SCALE, weights)
        assert result.kappa == pytest.approx(0.0)
        assert sk_kappa(first, second, weights) == pytest.approx(0.0)


def test_both_used_the_same_single_grade_is_undefined():
    result = cohen_kappa([(2, 2)] * 4, SCALE)
    assert result == Kappa(None, 4)
    assert not result.meets_bar
    assert sk_kappa([2] * 4, [2] * 4) is None


def test_both_constant_but_different_is_zero():
    assert cohen_kappa([(1, 2)] * 3, SCALE).kappa == pytest.approx(0.0)
    assert sk_kappa([1] * 3, [2] * 3) == pytest.approx(0.0)


def test_perfect_agreement_and_no_overlap():
    perfect = cohen_kappa([(0, 0), (1, 1), (3, 3), (2, 2)], SCALE, "quadratic")
    assert perfect.kappa == pytest.approx(1.0)
    assert perfect.ci == pytest.approx((1.0, 1.0))
    assert perfect.meets_bar
    empty = cohen_kappa([], SCALE)
    assert empty == Kappa(None, 0)


def test_analytic_se_matches_bootstrap_spread():
    """The FCE-1969 large-sample SE should match the spread of kappa over resampled items."""
    rng = random.Random(11)
    first = [rng.choice([0, 0, 1, 1, 1, 2, 3]) for _ in range(1500)]
    pairs = list(zip(first, noisy_copy(rng, first, 0.6), strict=True))
    for weights in (None, "quadratic"):
        result = cohen_kappa(pairs, SCALE, weights)
        boots = [
            cohen_kappa([pairs[rng.randrange(len(pairs))] for _ in pairs], SCALE, weights).kappa
            for _ in range(150)
        ]
        assert result.se == pytest.approx(statistics.stdev(boots), rel=0.2)
        low, high = result.ci
        assert low < result.kappa < high
        assert high - low == pytest.approx(2 * 1.959964 * result.se)


def test_confusion_rows_are_first_annotator():
    assert confusion_matrix([(0, 1), (0, 1), (3, 2)], SCALE) == [
        [0, 2, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 1, 0],
    ]


def test_fleiss_wikipedia_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories; P = 0.378,
    # P_e = 0.213, kappa = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa_from_counts(table) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_degenerate_and_two_raters():
    assert fleiss_kappa_from_counts([[3, 0], [3, 0]]) is None
    assert fleiss_kappa_from_counts([[3, 0], [0, 3]]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fleiss_kappa_from_counts([[3, 0], [1, 1]])


def judgments_for(name, grades, role="human"):
    return [Judgment(name, qid, did, g, role=role) for (qid, did), g in grades.items()]


def test_report_pairs_fleiss_disagreements_and_judges():
    rng = random.Random(5)
    items = [(f"q{q}", f"d{i}") for q in range(4) for i in range(15)]
    truth = {item: rng.randint(0, 3) for item in items}
    ann = truth
    bob = {i: (g if rng.random() < 0.8 else rng.randint(0, 3)) for i, g in truth.items()}
    cat = {i: (g if rng.random() < 0.8 else rng.randint(0, 3)) for i, g in list(truth.items())[:40]}
    model = {i: (g if rng.random() < 0.5 else rng.randint(0, 3)) for i, g in truth.items()}
    judgments = (
        judgments_for("ann", ann)
        + judgments_for("bob", bob)
        + judgments_for("cat", cat)
        + judgments_for("llm", model, "model")
    )
    report = agreement_report(judgments, SCALE)
    assert [p.annotators for p in report.pairs] == [("ann", "bob"), ("ann", "cat"), ("bob", "cat")]
    ab = report.pairs[0].figures
    expected = sk_kappa([ann[i] for i in items], [bob[i] for i in items])
    assert ab.n == len(items)
    assert ab.kappa.kappa == pytest.approx(expected)
    assert ab.weighted_kappa.kappa == pytest.approx(
        sk_kappa([ann[i] for i in items], [bob[i] for i in items], "quadratic")
    )
    assert ab.kappa.ci[0] < ab.kappa.kappa < ab.kappa.ci[1]
    assert sum(map(sum, ab.confusion)) == len(items)
    assert ab.meets_bar == (expected >= 0.6)
    assert sum(q.n for q in ab.per_query.values()) == len(items)
    assert report.pairs[1].figures.n == 40

    fleiss = report.fleiss
    assert fleiss.kappa.n == 40 and fleiss.to_json()["raters_per_item"] == 3
    table = [[[ann[i], bob[i], cat[i]].count(c) for c in SCALE] for i in sorted(cat)]
    assert fleiss.kappa.kappa == pytest.approx(fleiss_kappa_from_counts(table))
    assert fleiss.kappa.ci[0] < fleiss.kappa.kappa < fleiss.kappa.ci[1]

    disagreeing = {i for i in items if len({g[i] for g in (ann, bob, cat) if i in g}) > 1}
    assert {(d.query_id, d.doc_id) for d in report.disagreements} == disagreeing
    spreads = [d.spread for d in report.disagreements]
    assert spreads == sorted(spreads, reverse=True)

    (judge,) = report.judges
    assert judge.judge == "llm" and judge.labels == len(items)
    assert [a.annotator for a in judge.against] == ["ann", "bob", "cat"]
    vs_ann = judge.against[0]
    assert vs_ann.human_labels == len(items)
    assert vs_ann.figures.kappa.kappa == pytest.approx(
        sk_kappa([ann[i] for i in items], [model[i] for i in items])
    )
    assert judge.resolved.unresolved == len(disagreeing)
    assert judge.resolved.figures.n == len(items) - len(disagreeing)
    # Models are judged, never paired with humans as annotators.
    assert all("llm" not in p.annotators for p in report.pairs)
    assert report.annotators == {
        "ann": Role.HUMAN,
        "bob": Role.HUMAN,
        "cat": Role.HUMAN,
        "llm": Role.MODEL,
    }

    # the JSON edge: the same figures under today's keys
    data = report.to_json()
    assert data["pairs"][0]["annotators"] == ["ann", "bob"]
    assert data["pairs"][0]["kappa"] == ab.kappa.kappa
    assert data["pairs"][0]["kappa_ci"] == list(ab.kappa.ci)
    assert data["fleiss"]["n"] == 40 and data["annotators"]["llm"] == "model"
    assert data["judges"][0]["resolved"]["unresolved"] == len(disagreeing)
    assert {(d["qid"], d["docid"]) for d in data["disagreements"]} == disagreeing


def test_adjudicator_resolves_and_is_not_a_pair():
    judgments = [
        Judgment("ann", "q", "d1", 1),
        Judgment("bob", "q", "d1", 3),
        Judgment("boss", "q", "d1", 2, role="adjudicator"),
        Judgment("ann", "q", "d2", 0),
        Judgment("bob", "q", "d2", 0),
        Judgment("ann", "q", "d3", 0),
        Judgment("bob", "q", "d3", 2),
    ]
    report = agreement_report(judgments, SCALE)
    assert [p.annotators for p in report.pairs] == [("ann", "bob")]
    assert report.fleiss is None
    by_item = {(d.query_id, d.doc_id): d for d in report.disagreements}
    assert by_item[("q", "d1")].adjudicated == 2
    assert by_item[("q", "d3")].adjudicated is None
    grades = {"ann": {("q", "d1"): 1}, "bob": {("q", "d1"): 3}, "boss": {("q", "d1"): 2}}
    roles = {"ann": "human", "bob": "human", "boss": "adjudicator"}
    assert consensus_grades(grades, roles) == ({("q", "d1"): 2}, [])


def test_no_overlap_report_is_empty_not_an_error():
    judgments = [Judgment("ann", "q", "d1", 1), Judgment("bob", "q", "d2", 2)]
    report = agreement_report(judgments, SCALE)
    assert report.pairs == () and report.fleiss is None and report.disagreements == ()
    assert not report.has_overlap


def test_fit_thresholds_separable_scores_reach_kappa_one():
    scores = [0.1, 0.2, 0.35, 0.4, 0.6, 0.65, 0.9, 0.95]
    human = [0, 0, 1, 1, 2, 2, 3, 3]
    fitted = fit_thresholds(scores, human, SCALE)
    assert fitted.weighted_kappa == pytest.approx(1.0)
    assert [fitted.grade(s) for s in scores] == human
    assert (
        0.2 < fitted.cuts[0] < 0.35 and 0.4 < fitted.cuts[1] < 0.6 and 0.65 < fitted.cuts[2] < 0.9
    )


def test_fit_thresholds_beats_the_true_cuts_on_noisy_scores():
    rng = random.Random(2)
    scores = [rng.random() for _ in range(1500)]
    human = [min(3, max(0, int(4 * s + rng.gauss(0, 0.4)))) for s in scores]
    fitted = fit_thresholds(scores, human, SCALE)
    true_cuts = [min(3, int(4 * s)) for s in scores]
    reference = cohen_kappa(list(zip(human, true_cuts, strict=True)), SCALE, "quadratic").kappa
    assert fitted.weighted_kappa >= reference - 1e-9
    predicted = [fitted.grade(s) for s in scores]
    assert fitted.weighted_kappa == pytest.approx(
        cohen_kappa(list(zip(human, predicted, strict=True)), SCALE, "quadratic").kappa
    )
    assert list(fitted.cuts) == sorted(fitted.cuts)


def test_agreement_module_stays_light():
    import subprocess
    import sys

    code = (
        "import sys, workbench.core.agreement.agreement, workbench.core.judges.position_bias,"
        " workbench.core.judges.calibration, workbench.reports.agreement;"
        "heavy = {'numpy', 'sklearn', 'scipy', 'torch', 'textual'} & set(sys.modules);"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_grades_outside_the_scale_become_categories_not_a_crash():
    judgments = [Judgment(a, "q", f"d{i}", 4) for i in range(5) for a in ("ann", "bob")]
    judgments += [Judgment(a, "q", f"e{i}", 0) for i in range(5) for a in ("ann", "bob")]
    report = agreement_report(judgments, SCALE)  # 10 shared items: MIN_SHARED_ITEMS
    assert report.grade_scale == (0, 1, 2, 3, 4)
    assert report.pairs[0].figures.kappa.kappa == pytest.approx(1.0)


def test_consensus_is_exports_rule_without_the_median_tie_break():
    judgments = [
        Judgment("ann", "q", "d1", 0),
        Judgment("bob", "q", "d1", 3),
        Judgment("boss", "q", "d1", 1, role="adjudicator"),
        Judgment("chief", "q", "d1", 3, role="adjudicator"),
        Judgment("ann", "q", "d2", 2),
        Judgment("bob", "q", "d2", 2),
        Judgment("ann", "q", "d3", 0),
        Judgment("bob", "q", "d3", 3),
        Judgment("llm", "q", "d3", 3, role="model"),
    ]
    grades = grades_by_annotator(judgments)
    resolved, unresolved = consensus_grades(grades, roles_of(judgments))
    assert resolved == {("q", "d1"): 2, ("q", "d2"): 2} and unresolved == [("q", "d3")]
    exported = resolve(judgments)[0]["q"]
    assert all(exported[doc] == grade for (_, doc), grade in resolved.items())
    assert exported["d3"] == 1  # export breaks the tie; agreement leaves it out
    report = agreement_report(judgments, SCALE)
    by_item = {d.doc_id: d.adjudicated for d in report.disagreements}
    assert by_item == {"d1": 2, "d3": None}
