"""The coverage gate of `workbench eval`: recall under the estimated |Rel| from a judgments
store or a golden.yaml's coverage summary, the incomplete/unmeasured markers, --strict.

The seed example's output is compared byte for byte with stored files (the JSON never changes;
the text and Markdown follow the renderer): regenerate the two text files only on purpose,
WORKBENCH_REGENERATE=1 pytest tests/flows/test_eval_coverage.py
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from pathlib import Path

import pytest
from coverage_fixtures import RUN, build_store

from workbench.cli import main
from workbench.core.audit.audit_coverage import (
    coverage_gate,
    judged_hits,
    recall_interval,
)
from workbench.core.audit.judged_coverage import coverage_from_summary
from workbench.core.model import Status
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "eval_data"
ROW_KEYS = {"P@5", "R@5", "MRR", "nDCG@5", "bpref", "judged@5", "rel", "ceiling", "pct_of_ceiling"}
GATE_KEYS = {
    "R@5_low",
    "R@5_est",
    "R@5_high",
    "est_rel",
    "est_rel_low",
    "est_rel_high",
    "completeness",
    "completeness_low",
    "coverage_status",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")
    db = build_store(root / "study.db")
    golden = root / "study.yaml"
    assert main(["export", "--db", str(db), "--golden", str(golden)]) == 0
    run = root / "sys.run"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {r} {10 - r} sys\n"
            for q, docs in RUN.items()
            for r, d in enumerate(docs, 1)
        )
    )
    return {"db": db, "golden": golden, "run": run}


def evaluate(capsys, *argv: object) -> tuple[int, str, str]:
    code = main(["eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def eval_json(capsys, qrels: Path, run: Path, *extra: object) -> tuple[int, dict]:
    code, out, _ = evaluate(capsys, "--qrels", qrels, "--run", run, "-k", "5", "--json", *extra)
    return code, json.loads(out)


# --- the pure part, hand-computed ------------------------------------------------------------


def test_recall_interval_hand_cases():
    assert recall_interval(2, 4, 5.0, 10.0) == (0.2, 0.4)
    # |Rel| is never below the judged relevant count: the high end is the judged-set recall
    assert recall_interval(2, 4, 3.0, 8.0) == (0.25, 0.5)
    assert recall_interval(0, 4, 4.0, 9.0) == (0.0, 0.0)
    assert recall_interval(0, 0, 0.0, 0.0) is None


def test_judged_hits_counts_an_alias_as_its_canonical_doc_once():
    judged = {"c": 2, "x": 0, "y": 1}
    assert judged_hits(["a", "c", "x", "y"], judged, 4, aliases={"a": "c"}) == 2
    assert judged_hits(["a", "x"], judged, 2, aliases={"a": "c"}) == 1
    assert judged_hits(["a", "c", "y"], judged, 3, rel_threshold=2, aliases={"a": "c"}) == 1
    assert judged_hits({"y": 3.0, "c": 2.0, "x": 1.0}, judged, 1) == 1  # scores, not a list


SUMMARY = {
    "queries": {
        "q1": {
            "relevant": 4,
            "est_rel": 8.0,
            "est_rel_low": 5.0,
            "est_rel_high": 10.0,
            "completeness": 0.5,
            "completeness_low": 0.4,
            "status": "incomplete",
        },
        "q2": {
            "relevant": 2,
            "est_rel": 2.0,
            "est_rel_low": 2.0,
            "est_rel_high": 2.5,
            "completeness": 1.0,
            "completeness_low": 0.8,
            "status": "complete",
        },
        "q3": {
            "relevant": 9,
            "est_rel": 9.0,
            "est_rel_low": 9.0,
            "est_rel_high": 9.0,
            "completeness": 1.0,
            "completeness_low": 1.0,
            "status": "complete",
        },
        "q4": {
            "relevant": 1,
            "est_rel": None,
            "est_rel_low": None,
            "est_rel_high": None,
            "completeness": None,
            "completeness_low": None,
            "status": "unmeasured",
        },
    },
    "thresholds": {"complete_at": 0.8, "min_samples": 1, "level": 0.95},
}
JUDGED = {
    "q1": {"a": 3, "b": 1, "c": 1, "d": 2, "z": 0},
    "q2": {"e": 1, "f": 2},
    "q3": {"g": 1},  # the summary counted 9: stale
    "q4": {"h": 1},
    "q5": {"i": 1},  # not in the summary
}


def test_coverage_gate_by_hand():
    coverage, problems = coverage_from_summary(SUMMARY, JUDGED, source="hand")
    assert problems == []
    status = {q: c.status for q, c in coverage.queries.items()}
    assert status == {
        "q1": "incomplete",
        "q2": "complete",
        "q3": "stale",
        "q4": "unmeasured",
        "q5": "unmeasured",
    }
    rankings = {"q1": ["a", "x", "b", "z", "y"], "q2": ["f"], "q3": ["g"], "q4": ["h"]}
    scored = list(JUDGED)
    gate = coverage_gate(coverage, rankings, [5], scored)
    rows, mean, found = gate.rows, gate.mean, gate.problems
    # q1: 2 hits, est |Rel| 8 [5, 10] -> recall in [2/10, 2/5], point 2/8
    q1 = rows["q1"].recall[5]
    assert (q1.low, q1.estimate, q1.high) == (0.2, 0.25, 0.4)
    # q2: 1 hit, est 2 [2, 2.5] -> [0.4, 0.5]
    assert (rows["q2"].recall[5].low, rows["q2"].recall[5].high) == (0.4, 0.5)
    assert rows["q3"].recall[5].low is None and rows["q5"].recall[5].high is None
    assert mean.recall[5].low == pytest.approx(0.3)
    assert mean.recall[5].high == pytest.approx(0.45)
    assert mean.completeness == pytest.approx(0.75)
    assert mean.statuses == {
        Status.COMPLETE: 1,
        Status.INCOMPLETE: 1,
        Status.UNMEASURED: 2,
        Status.STALE: 1,
    }
    assert mean.measured == 2
    codes = [(p.qid, p.code, p.level) for p in found]
    assert codes == [
        ("q1", "incomplete_judgments", "warning"),
        ("q3", "coverage_mismatch", "warning"),
        ("q4", "unmeasured_coverage", "warning"),
        ("q5", "unmeasured_coverage", "warning"),
    ]
    message = found[0].message
    assert "0.500" in message and "lower bound 0.400 < 0.8" in message
    assert "0.200-0.400" in message and "--strict" in message and "upper bound" in message
    assert "not in the coverage summary" in found[3].message
    assert all("an error under --strict" in p.message for p in found)
    # --strict: every query whose denominator is not measured is an error too (a gate never
    # passes with less evidence than one that fails); only scored queries are gated
    strict = coverage_gate(coverage, rankings, [5], scored, strict=True).problems
    assert [(p.qid, p.code, p.level) for p in strict] == [
        (qid, code, "error") for qid, code, _ in codes
    ]
    assert "export the golden.yaml again" in strict[3].message  # q5: not in the summary
    assert "judge more of q4" in strict[2].message  # a summary that does not say more
    assert "at this --rel-threshold" in strict[1].message  # q3: stale
    unscored = coverage_gate(coverage, rankings, [5], ["q2"], strict=True).problems
    assert unscored == []


@pytest.mark.parametrize(
    ("policy", "figures", "says"),
    [
        ("static", {"sampled": 0, "to_estimate": None}, "pool with --sample N"),
        ("static", {"sampled": 20, "to_estimate": 3}, "judge ≈ 3 more of q4: its queue reaches"),
        ("adaptive", {"sampled": 300, "to_estimate": 6}, "judge ≈ 6 more of q4: the adaptive"),
        ("adaptive", {"sampled": 300, "to_estimate": None}, "nothing left in the frame of q4"),
    ],
)
def test_an_unmeasured_query_fails_strict_saying_what_would_measure_it(policy, figures, says):
    row = {**SUMMARY["queries"]["q4"], **figures}
    summary = {**SUMMARY, "queries": {"q4": row}, "policy": policy}
    coverage, problems = coverage_from_summary(summary, {"q4": {"h": 1}}, source="hand")
    assert problems == [] and coverage.policy == policy
    assert coverage.queries["q4"].to_estimate == figures["to_estimate"]
    (warned,) = coverage_gate(coverage, {"q4": ["h"]}, [5], ["q4"]).problems
    (failed,) = coverage_gate(coverage, {"q4": ["h"]}, [5], ["q4"], strict=True).problems
    assert (warned.level, failed.level) == ("warning", "error")
    assert failed.code == warned.code == "unmeasured_coverage"
    assert says in failed.message and "--strict fails on it" in failed.message
    assert says in warned.message and "an error under --strict" in warned.message


def test_a_summarys_counts_are_checked():
    row = {**SUMMARY["queries"]["q4"], "to_estimate": -1, "sampled": 2.5}
    _, problems = coverage_from_summary({"queries": {"q4": row}}, JUDGED, source="hand")
    assert problems == [
        "coverage.queries.q4.sampled: expected a whole number >= 0 or null, found 2.5",
        "coverage.queries.q4.to_estimate: expected a whole number >= 0 or null, found -1",
    ]


def test_complete_at_redecides_the_status_and_bad_summaries_name_the_field():
    coverage, _ = coverage_from_summary(SUMMARY, JUDGED, source="hand", complete_at=0.4)
    assert coverage.queries["q1"].status == "complete" and coverage.complete_at == 0.4
    coverage, _ = coverage_from_summary(SUMMARY, JUDGED, source="hand", complete_at=0.9)
    assert coverage.queries["q2"].status == "incomplete"
    assert coverage.queries["q4"].status == "unmeasured"
    bad = {"queries": {"q1": {"est_rel": "many", "status": "done"}, "q2": []}}
    _, problems = coverage_from_summary(bad, JUDGED, source="hand")
    assert "coverage.queries.q1.est_rel: expected a number or null, found 'many'" in problems
    assert any(p.startswith("coverage.queries.q1.status:") for p in problems)
    assert "coverage.queries.q2: expected a mapping" in problems
    _, problems = coverage_from_summary({"queries": 3}, JUDGED, source="hand")
    assert problems == ["coverage.queries: expected a mapping of query id -> figures"]


# --- end to end: a store and its exported golden.yaml -----------------------------------------


def test_store_and_exported_golden_give_the_same_intervals(files, capsys):
    code_db, from_db = eval_json(capsys, files["db"], files["run"])
    code_golden, from_golden = eval_json(capsys, files["golden"], files["run"])
    assert code_db == code_golden == 0  # without --strict the gate only warns
    assert from_db["runs"] == from_golden["runs"]
    assert [(p["qid"], p["code"]) for p in from_db["problems"]] == [
        (p["qid"], p["code"]) for p in from_golden["problems"]
    ]
    assert from_db["coverage"]["status"] == from_golden["coverage"]["status"]

    from workbench.flows.coverage import summary_for_store

    with Store(files["db"]) as store:
        summary = summary_for_store(store)["queries"]
    rows = from_db["runs"]["sys"]["per_query"]
    hits = {"qa": 2, "qb": 3}  # qa: d000 d001 (pool); qb: d100 (pool), d106 d107 (sampled)
    for qid, row in rows.items():
        assert ROW_KEYS | GATE_KEYS <= set(row)  # the JSON contract's keys are all still there
        figures = summary[qid]
        assert row["rel"] == figures["relevant"]
        assert row["R@5"] == pytest.approx(hits[qid] / figures["relevant"])
        assert row["R@5_low"] == pytest.approx(hits[qid] / figures["est_rel_high"])
        assert row["R@5_high"] == pytest.approx(
            min(1.0, hits[qid] / max(figures["est_rel_low"], figures["relevant"]))
        )
        assert row["R@5_low"] <= row["R@5_est"] <= row["R@5_high"] <= row["R@5"]
        assert row["coverage_status"] == figures["status"]
        assert row["completeness_low"] == figures["completeness_low"]
    mean = from_db["runs"]["sys"]["mean"]
    assert mean["R@5_low"] == pytest.approx((rows["qa"]["R@5_low"] + rows["qb"]["R@5_low"]) / 2)
    assert {"P@5", "R@5", "nDCG@5", "queries"} <= set(mean)
    assert {"k", "runs", "problems"} <= set(from_db) and from_db["k"] == 5


def lows(report: dict) -> list[float]:
    return [row["completeness_low"] for row in report["runs"]["sys"]["per_query"].values()]


@pytest.mark.parametrize("source", ["db", "golden"])
def test_strict_fails_on_an_incomplete_scored_query_and_passes_when_complete(files, capsys, source):
    _, report = eval_json(capsys, files[source], files["run"])
    assert report["coverage"]["status"] == {"qa": "incomplete", "qb": "incomplete"}
    assert max(lows(report)) < 1.0
    code, strict = eval_json(capsys, files[source], files["run"], "--strict")
    assert code == 1
    errors = [p for p in strict["problems"] if p["level"] == "error"]
    assert {p["qid"] for p in errors} == {"qa", "qb"}
    assert all(p["code"] == "incomplete_judgments" and "--strict" in p["message"] for p in errors)
    # a threshold both lower bounds reach: both complete, the gate passes
    reachable = f"{math.floor(min(lows(report)) * 1e6) / 1e6:.6f}"
    code, passed = eval_json(
        capsys, files[source], files["run"], "--strict", "--complete-at", reachable
    )
    assert code == 0 and set(passed["coverage"]["status"].values()) == {"complete"}
    assert not [p for p in passed["problems"] if p["code"] == "incomplete_judgments"]
    # one complete, one not: still a failure, naming only the incomplete one
    between = f"{sum(lows(report)) / 2:.6f}"
    code, half = eval_json(
        capsys, files[source], files["run"], "--strict", "--complete-at", between
    )
    assert code == 1
    assert len({p["qid"] for p in half["problems"] if p["level"] == "error"}) == 1


def test_table_shows_the_interval_column_markers_and_legend(files, capsys):
    code, out, _ = evaluate(
        capsys, "--qrels", files["db"], "--run", files["run"], "-k", "5", "--wide"
    )
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("query"))
    assert "R@5 (est. |Rel|)" in header and "est. |Rel|" in header and "coverage" in header
    qa_line = next(line for line in out.splitlines() if line.startswith("qa "))
    assert "–" in qa_line and " !" in qa_line and "incomplete" in qa_line
    assert "against the judged set is an upper bound" in out
    assert "--strict fails on it" in out
    code, out, _ = evaluate(
        capsys,
        "--qrels",
        files["golden"],
        "--run",
        files["run"],
        "-k",
        "5,10",
        "--format",
        "markdown",
    )
    assert "| R@5 (est. \\|Rel\\|) |" in out and "upper bound" in out


def test_rel_threshold_another_than_the_summary_is_a_mismatch_not_an_interval(files, capsys):
    _, report = eval_json(capsys, files["golden"], files["run"], "--rel-threshold", "2")
    # qb's summary counted its grade-1 samples as relevant; at grade >= 2 it has 2
    assert report["coverage"]["status"]["qb"] == "stale"
    assert report["runs"]["sys"]["per_query"]["qb"]["R@5_low"] is None
    assert any(p["code"] == "coverage_mismatch" and p["qid"] == "qb" for p in report["problems"])
    # from the store the coverage is recomputed at that threshold: no mismatch
    _, report = eval_json(capsys, files["db"], files["run"], "--rel-threshold", "2")
    assert "stale" not in report["coverage"]["status"].values()


def unmeasured(report: dict) -> dict[str, tuple[str, str]]:
    return {
        p["qid"]: (p["level"], p["message"])
        for p in report["problems"]
        if p["code"] == "unmeasured_coverage"
    }


@pytest.mark.parametrize("source", ["db", "golden"])
def test_unmeasured_queries_fail_strict_saying_what_would_measure_them(tmp_path, files, capsys,
                                                                        source):  # fmt: skip
    """Its samples not judged yet: every query unmeasured, R@5 1.0 against the judged set. It
    used to pass --strict, while the same store judged further (incomplete) failed."""
    db = build_store(tmp_path / "pool-only.db", judge_samples=False)
    qrels = db
    if source == "golden":
        qrels = tmp_path / "pool-only.yaml"
        assert main(["export", "--db", str(db), "--golden", str(qrels)]) == 0
        capsys.readouterr()
    code, report = eval_json(capsys, qrels, files["run"], "--strict")
    assert code == 1
    assert set(report["coverage"]["status"].values()) == {"unmeasured"}
    said = unmeasured(report)
    assert set(said) == {"qa", "qb"} and {level for level, _ in said.values()} == {"error"}
    # the first unjudged passage of each query's queue is one of its samples
    assert "judge ≈ 1 more of qa: its queue reaches its sampled passages" in said["qa"][1]
    code, report = eval_json(capsys, qrels, files["run"])
    assert code == 0 and {level for level, _ in unmeasured(report).values()} == {"warning"}
    code, out, _ = evaluate(capsys, "--qrels", qrels, "--run", files["run"], "-k", "5")
    assert next(line for line in out.splitlines() if line.startswith("qa ")).count(" ?") == 1
    assert "--strict fails on it too" in " ".join(out.split())  # notes wrap to the width


def test_a_static_pool_without_a_sample_fails_strict_until_pooled_with_one(tmp_path, files,
                                                                           capsys):  # fmt: skip
    db = build_store(tmp_path / "no-sample.db", sampled=False)
    code, report = eval_json(capsys, db, files["run"], "--strict")
    assert code == 1
    said = unmeasured(report)
    assert set(said) == {"qa", "qb"}
    assert all("pool with --sample N" in message for _, message in said.values())
    assert all("a static pool without a sample outside it" in m for _, m in said.values())


def test_bad_stores_and_options_exit_2(tmp_path, files, capsys):
    foreign = tmp_path / "other.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    code, _, err = evaluate(capsys, "--qrels", foreign, "--run", files["run"])
    assert code == 2 and "not a workbench judgments store" in err
    qrels = tmp_path / "plain.qrels"
    qrels.write_text("qa 0 d000 1\n")
    code, _, err = evaluate(capsys, "--qrels", qrels, "--run", files["run"], "--complete-at", "0.5")
    assert code == 2 and "carries no coverage information" in err
    code, _, err = evaluate(
        capsys, "--qrels", files["db"], "--run", files["run"], "--complete-at", "1.5"
    )
    assert code == 2 and "--complete-at" in err


# --- without coverage nothing changes ---------------------------------------------------------

SEED_OUTPUTS = {
    "seed-example.eval-table.txt": ["-k", "5", "--wide"],  # the full table, as it always was
    "seed-example.eval-markdown.txt": ["-k", "5,10", "--format", "markdown"],
    "seed-example.eval-json.json": ["-k", "5", "--json"],
}


@pytest.mark.parametrize("name", list(SEED_OUTPUTS))
def test_seed_example_output_is_byte_identical(capsys, name):
    seed = ROOT / "golden" / "seed-example.yaml"
    run = ROOT / "golden" / "seed-example.run"
    code, out, _ = evaluate(capsys, "--qrels", seed, "--run", run, *SEED_OUTPUTS[name])
    assert code == 0
    expected = DATA / name
    if os.environ.get("WORKBENCH_REGENERATE") and name.endswith(".txt"):  # never the JSON
        expected.write_text(out)
    assert out == expected.read_text()
    assert "est. |Rel|" not in out and "R@5_low" not in out and "coverage_status" not in out
