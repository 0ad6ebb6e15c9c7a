"""The denominator audit and the two-stage view."""

from __future__ import annotations

import pytest

from workbench.core.audit.audit import (
    UNDEFINED_CODES,
    Problem,
    audit,
    content_duplicates,
    normalized_passages,
)
from workbench.core.audit.audit_stages import two_stage
from workbench.core.measures.metrics import evaluate

QRELS = {
    "q_milk": {"d1": 3, "d2": 2, "d3": 1, "x9": 0},
    "q_broad": {"m1": 3, "m2": 3, "m3": 2, "m4": 2, "m5": 1, "m6": 1, "s1": 2, "s2": 1},
}


def codes(problems, qid=None):
    return sorted(p.code for p in problems if qid is None or p.qid == qid)


def test_rows_say_what_the_figures_rest_on():
    result = audit(QRELS, {"q_milk": "d1 s2 x9 d2 x3".split(), "q_broad": ["m1"] * 1}, 5)
    milk = result.rows["q_milk"]
    assert (milk.rel, milk.k, milk.depth, milk.ceiling) == (3, 5, 5, 1.0)
    assert milk.precision_ceiling == pytest.approx(0.6)  # |Rel| = 3 < k = 5
    assert not milk.recall_capped_by_k
    assert milk.judged == 4 and milk.coverage_basis == "ranking"
    assert milk.label_coverage == pytest.approx(3 / 5)
    assert milk.unjudged_in_top == ("s2", "x3")
    broad = result.rows["q_broad"]
    assert broad.ceiling == 0.625 and broad.recall_capped_by_k
    assert broad.precision_ceiling is None


def test_label_coverage_over_the_corpus_when_its_size_is_known():
    result = audit(QRELS, {"q_milk": ["d1"]}, 5, corpus_size=24)
    assert result.rows["q_milk"].label_coverage == pytest.approx(4 / 24)
    assert result.rows["q_milk"].coverage_basis == "corpus"


def test_duplicate_id_is_an_error_naming_its_ranks():
    result = audit(QRELS, {"q_milk": "d1 d1 x3 d2 x1".split(), "q_broad": ["m1"]}, 5)
    dupes = [p for p in result.problems if p.code == "duplicate_doc"]
    assert len(dupes) == 1 and dupes[0].level == "error" and dupes[0].qid == "q_milk"
    assert "d1 at ranks 1, 2" in dupes[0].message
    assert result.rows["q_milk"].duplicate_ids == ("d1",)


def test_content_duplicates_in_one_top_k_are_a_warning():
    texts = {
        "d1": "Milk fever: calcium drench.",
        "d1-copy": "milk  fever — CALCIUM drench",
        "d2": "Mastitis checks.",
        "d3": "",
    }
    passages = normalized_passages(texts)
    assert content_duplicates(["d1", "d2", "d1-copy", "d3"], passages) == [["d1", "d1-copy"]]
    ranking = {"q_milk": ["d1", "d2", "d1-copy", "d3"], "q_broad": ["m1"]}
    result = audit(QRELS, ranking, 5, passages=passages)
    found = [p for p in result.problems if p.code == "content_duplicate"]
    assert len(found) == 1 and found[0].level == "warning"
    assert result.rows["q_milk"].content_duplicates == (("d1", "d1-copy"),)
    # a copy outside the top k is not a top-k duplicate
    assert (
        codes(audit(QRELS, ranking, 2, passages=passages).problems).count("content_duplicate") == 0
    )


def test_queries_on_one_side_only_and_short_rankings():
    result = audit(QRELS, {"q_milk": ["d1", "d2"], "q_other": ["a"]}, 5)
    assert codes(result.problems, "q_broad") == ["missing_from_run"]
    assert "short_ranking" in codes(result.problems, "q_milk")
    extra = [p for p in result.problems if p.code == "not_in_qrels"]
    assert extra[0].qid is None and "q_other" in extra[0].message
    assert all(isinstance(p, Problem) and p.run is None for p in result.problems)
    assert all(p.level == "warning" for p in result.problems)


def test_no_relevant_document_is_an_undefined_figure():
    qrels = {**QRELS, "q_none": {"z": 0}, "q_unranked_none": {"y": 0}}
    result = audit(qrels, {"q_none": ["z"], "q_milk": ["d1"]}, 5)
    errors = [p for p in result.problems if p.level == "error"]
    assert [(p.qid, p.code) for p in errors] == [("q_none", "no_relevant")]
    assert "no_relevant" in UNDEFINED_CODES
    assert "q_unranked_none" not in result.rows


def test_nothing_scorable_is_an_error():
    result = audit(QRELS, {"q_other": ["a"]}, 5)
    assert "no_queries" in codes(result.problems)
    assert {p.level for p in result.problems if p.code == "no_queries"} == {"error"}


def test_a_clean_run_has_no_problem():
    ranking = {"q_milk": "d1 d2 d3 x9".split(), "q_broad": "m1 m2 m3 m4 m5 m6 s1 s2".split()}
    assert audit(QRELS, ranking, 4).problems == []


# --- two stages ------------------------------------------------------------------------------


def test_two_stage_logs_fetch_and_keep_recall_apart():
    stage1 = {"q_milk": "x1 d1 d2 x2 d3 x3".split(), "q_broad": "m1 m2 x1 m3".split()}
    stage2 = {"q_milk": "d1 x1 x2 d2 d3".split(), "q_broad": "m1 m2 m3".split()}
    result = two_stage(QRELS, stage1, stage2, keep_n=3)
    milk = result.rows["q_milk"]
    assert (milk.fetch_k, milk.fetch_recall, milk.keep_recall) == (6, 1.0, pytest.approx(1 / 3))
    assert milk.dropped == ("d2", "d3") and milk.never_fetched == ()
    broad = result.rows["q_broad"]
    assert broad.fetch_recall == pytest.approx(3 / 8) and broad.keep_recall == pytest.approx(3 / 8)
    assert broad.never_fetched == ("m4", "m5", "m6", "s1", "s2") and broad.dropped == ()
    assert codes(result.problems, "q_milk") == ["stage2_dropped"]
    assert codes(result.problems, "q_broad") == ["stage1_recall_low"]
    assert result.mean.queries == 2
    assert result.mean.fetch_recall == pytest.approx((1 + 3 / 8) / 2)


def test_stage1_bar_is_inclusive_and_fetch_k_cuts_stage1():
    qrels = {"q": {f"r{i}": 1 for i in range(20)}}
    found_19 = [f"r{i}" for i in range(19)] + ["x", "r19"]
    at_95 = two_stage(qrels, {"q": found_19}, {"q": found_19}, keep_n=5, fetch_k=19 + 1)
    assert at_95.rows["q"].fetch_recall == 0.95
    assert "stage1_recall_low" in codes(at_95.problems)
    full = two_stage(qrels, {"q": found_19}, {"q": found_19}, keep_n=5)
    assert full.rows["q"].fetch_recall == 1.0
    assert "stage1_recall_low" not in codes(full.problems)


def test_stage2_keeping_docs_stage1_never_fetched_is_flagged():
    result = two_stage(QRELS, {"q_milk": ["d1"]}, {"q_milk": ["d1", "zz"]}, keep_n=2)
    assert "stage2_not_from_stage1" in codes(result.problems, "q_milk")


def test_no_relevant_is_for_judged_queries_and_not_judged_yet_is_not_in_qrels():
    """A query listed without a judgment (golden.yaml and stores list every query of a study)
    is as absent as it is from TREC qrels: one judged set, one verdict, whatever the format."""
    qrels = {"q_judged": {"z": 0}, "q_empty": {}, "q_pooled": {"z": -1}}
    rankings = {"q_judged": ["z"], "q_empty": ["z"], "q_pooled": ["z"], "q_other": ["z"]}
    result = audit(qrels, rankings, 5)
    errors = [(p.qid, p.code) for p in result.problems if p.level == "error"]
    assert errors == [("q_judged", "no_relevant"), (None, "no_queries")]
    (no_rel,) = [p.message for p in result.problems if p.code == "no_relevant"]
    assert "1 judged" in no_rel
    (extra,) = [p for p in result.problems if p.code == "not_in_qrels"]
    assert extra.level == "warning" and "q_empty q_pooled q_other" in extra.message
    assert "not judged yet" in extra.message
    assert set(result.rows) == {"q_judged"}
    as_trec = audit({"q_judged": {"z": 0}}, rankings, 5)
    assert [(p.qid, p.code, p.level) for p in as_trec.problems] == [
        (p.qid, p.code, p.level) for p in result.problems
    ]
    scored = evaluate(qrels, rankings, 5)
    assert list(scored.per_query) == ["q_judged"] and scored.no_relevant == ["q_judged"]
    assert scored.not_in_qrels == ["q_empty", "q_pooled", "q_other"]
