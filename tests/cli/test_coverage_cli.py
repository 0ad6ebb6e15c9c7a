"""`workbench simulate` and `workbench coverage` on a real store file."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.model import Doc, PoolEntry, Provenance, Query
from workbench.core.pool.sampling import sample_outside_pool
from workbench.flows.coverage import summary_for_store
from workbench.store import Store

DOCS = [f"d{i:02d}" for i in range(60)]
RELEVANT = {"q1": {"d00": 3, "d01": 1, "d07": 2, "d30": 1}, "q2": {"d05": 1, "d44": 2}}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "judgments.db"
    rankings = {
        "bm25": {"q1": DOCS, "q2": DOCS[::-1]},
        "dense": {"q1": DOCS[1:] + DOCS[:1], "q2": DOCS[20:] + DOCS[:20]},
    }
    pool = {q: set(rankings["bm25"][q][:4]) | set(rankings["dense"][q][:4]) for q in ("q1", "q2")}
    with Store(path, create=True) as store:
        store.add_queries([Query("q1", "first"), Query("q2", "second")])
        store.add_docs(Doc(d, f"text {d}") for d in DOCS)
        entries = []
        for qid, members in pool.items():
            for position, doc_id in enumerate(sorted(members)):
                prov = tuple(
                    Provenance(s, rankings[s][qid].index(doc_id) + 1, 0.0)
                    for s in rankings
                    if doc_id in rankings[s][qid][:4]
                )
                entries.append(PoolEntry(qid, doc_id, position, provenance=prov))
        entries += sample_outside_pool(rankings, pool, DOCS, 10, seed=0, depth=4)
        store.add_pool_entries(entries)
        store.set_meta("corpus_size", str(len(DOCS)))
    return path


@pytest.fixture
def qrels(tmp_path):
    path = tmp_path / "qrels.tsv"
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in RELEVANT.items() for d, g in docs.items())
    )
    return path


def test_simulate_judges_the_queue_in_order_with_role_oracle(db, qrels, capsys):
    assert main(["simulate", "--db", str(db), "--oracle", str(qrels), "--budget", "5"]) == 0
    with Store(db) as store:
        queue = store.pool()
        rows = store.judgments()
        assert [(j.query_id, j.doc_id) for j in rows] == [(e.query_id, e.doc_id) for e in queue[:5]]
        assert {j.role for j in rows} == {"oracle"}
        assert all(j.grade == RELEVANT.get(j.query_id, {}).get(j.doc_id, 0) for j in rows)
        assert store.annotators() == {"oracle": "oracle"}
    # resuming judges only what is left
    assert main(["simulate", "--db", str(db), "--oracle", str(qrels)]) == 0
    with Store(db) as store:
        assert len(store.judgments()) == len(store.pool())
    assert "already judged" in capsys.readouterr().out


def test_coverage_json_counts_oracle_rows(db, qrels, capsys):
    main(["simulate", "--db", str(db), "--oracle", str(qrels)])
    capsys.readouterr()
    assert main(["coverage", "--db", str(db), "--format", "json", "-k", "5"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"queries", "summary"}
    q1 = report["queries"]["q1"]
    assert q1["status"] in ("complete", "incomplete")
    assert q1["judged"] == q1["pool"] + q1["sampled"]
    assert q1["relevant"] >= 2  # d00, d01 are in the pool
    assert q1["est_rel_low"] <= q1["est_rel"] <= q1["est_rel_high"]
    assert q1["est_rel_low"] >= q1["relevant"]
    assert set(q1["systems"]) == {"bm25", "dense"}
    assert set(q1["systems"]["bm25"]) >= {"judged@20", "relevant", "unique_relevant"}
    assert report["summary"]["queries"] == 2


def test_coverage_table_markdown_and_html(db, qrels, capsys):
    main(["simulate", "--db", str(db), "--oracle", str(qrels), "--per-query", "6"])
    capsys.readouterr()
    assert main(["coverage", "--db", str(db), "--json"]) == 0
    queries = json.loads(capsys.readouterr().out)["queries"]
    q1 = queries["q1"]
    assert main(["coverage", "--db", str(db), "--wide"]) == 0
    table = capsys.readouterr().out.splitlines()
    header = next(line for line in table if line.startswith("query "))
    # a static pool's "to go" column only while some query is unmeasured: what gives it one
    to_go = ["to", "go"] if any(r["status"] == "unmeasured" for r in queries.values()) else []
    assert header.split() == [
        "query", "pool", "judged", "rel", "est|Rel|", "complete", "low", "ceiling", "est.", "last¼",
        *to_go, "status",
    ]  # fmt: skip
    row = next(line for line in table if line.startswith("q1 ")).split()
    assert row[:4] == ["q1", str(q1["pool"]), str(q1["judged"]), str(q1["relevant"])]
    assert row[4] == f"{q1['est_rel']:.0f}" and row[-1] == q1["status"]
    assert f"{q1['completeness']:.2f}" in row and f"{q1['completeness_low']:.2f}" in row
    assert any("complete at 0.8" in line for line in table)
    assert "Columns" in table and "Per system" in table
    assert main(["coverage", "--db", str(db), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.count("<svg") == 2 and "| query |" in markdown
    header, rule = [line for line in markdown.splitlines() if line.startswith("|")][:2]
    unescaped = header.replace("\\|", "")  # every cell boundary, none inside a cell
    assert unescaped.count("|") == rule.count("|")
    assert main(["coverage", "--db", str(db), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
    assert "complete at 0.8" in page and "<script" not in page


def test_coverage_before_any_judgment_is_unmeasured(db, capsys):
    assert main(["coverage", "--db", str(db), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["status"] for row in report["queries"].values()} == {"unmeasured"}


def test_bad_options_and_unknown_annotator_exit_2(db, capsys):
    assert main(["coverage", "--db", str(db), "--complete-at", "1.5"]) == 2
    assert main(["coverage", "--db", str(db), "--annotator", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err


def test_summary_for_store_is_the_golden_slot(db, qrels):
    main(["simulate", "--db", str(db), "--oracle", str(qrels)])
    with Store(db) as store:
        slot = summary_for_store(store)
    assert set(slot) >= {"queries", "summary", "thresholds"}
    assert set(slot["queries"]["q2"]) >= {
        "est_rel",
        "est_rel_low",
        "est_rel_high",
        "completeness",
        "status",
    }
    assert slot["thresholds"]["complete_at"] == 0.8


def test_json_flag_is_format_json(db, capsys):
    assert main(["coverage", "--db", str(db), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) >= {"queries", "summary"}


def test_an_adaptive_store_with_5_judgments_per_query_fails_strict_saying_what_measures_it(
    tmp_path, capsys
):
    """Its fair start judged, no query has an estimate: `eval --strict` fails on every one of
    them (the measured ones used to fail while these passed), and each says how many judgments
    would give it one, the figure `coverage` gives; judging that many more gives it one, one
    fewer does not."""
    import shutil

    from adaptive_fixtures import make_study, pool

    study = make_study(tmp_path)
    assert pool(study) == 0
    db = study["db"]
    simulate = ["simulate", "--oracle", str(study["qrels"]), "--per-query"]
    assert main([*simulate, "5", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["coverage", "--db", str(db), "--json"]) == 0
    queries = json.loads(capsys.readouterr().out)["queries"]
    assert {row["status"] for row in queries.values()} == {"unmeasured"}
    to_estimate = {qid: row["to_estimate"] for qid, row in queries.items()}
    assert all(n and n > 0 for n in to_estimate.values()), to_estimate
    run = str(study["runs"][0])
    eval_args = ["eval", "--qrels", str(db), "--run", run, "-k", "10", "--json"]
    assert main(eval_args) == 0  # without --strict: warnings only
    capsys.readouterr()
    assert main([*eval_args, "--strict"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    said = {p["qid"]: p for p in problems if p["code"] == "unmeasured_coverage"}
    assert set(said) == set(queries) and {p["level"] for p in said.values()} == {"error"}
    for qid, n in to_estimate.items():
        assert f"judge ≈ {n} more of {qid}" in said[qid]["message"]
    assert main(["coverage", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    for qid, n in to_estimate.items():
        row = next(line for line in text.splitlines() if line.startswith(f"{qid} "))
        assert f"≈ {n} to estimate" in row
    # judged on from where it stands (one session, as the figure runs the queue ahead)
    statuses = {}
    for more in sorted({m for n in to_estimate.values() for m in (n - 1, n)}):
        copy = tmp_path / f"more-{more}.db"
        shutil.copy(db, copy)
        assert main([*simulate, str(5 + more), "--db", str(copy)]) == 0
        capsys.readouterr()
        assert main(["coverage", "--db", str(copy), "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)["queries"]
        statuses[more] = {qid: row["status"] for qid, row in rows.items()}
    for qid, n in to_estimate.items():
        assert statuses[n - 1][qid] == "unmeasured" != statuses[n][qid], (qid, n, statuses)


def test_simulate_says_its_completeness_error_takes_unmeasured_queries_as_complete() -> None:
    """With no interval yet, the error printed is that of calling every query complete (what a
    user reporting recall as is assumes): the line says so, and not once an interval exists."""
    from workbench.core.audit.truth import TruthRow, summarize_rows
    from workbench.reports.oracle import against_oracle

    unmeasured = TruthRow(true_rel=10, found=3, low=None, high=None, completeness=None,
                          certified=False)  # fmt: skip
    line = against_oracle(summarize_rows([unmeasured]))
    assert "completeness error 0.700" in line and "each counts as complete" in line
    measured = TruthRow(true_rel=10, found=3, low=4.0, high=12.0, completeness=0.4, certified=False)
    line = against_oracle(summarize_rows([measured]))
    assert "completeness error 0.100" in line and "counts as complete" not in line
