"""`workbench draw-sample` as a user runs it: draw, judge the drawn items (import-labels of human
grades), `eval --judge`; the design recorded in the store (SQLite and PostgreSQL), extended but
never changed, the drawn items first in the judging queue, and hostile input refused (exit 2
naming the field)."""

from __future__ import annotations

import json
import random

import pytest
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.model import Judgment, PoolEntry, Role
from workbench.flows.design import sample_first
from workbench.store import open_store


def judged_store(location: str, queries: int = 8, per_query: int = 10) -> dict:
    store = build_store(location, queries=queries, per_query=per_query)
    rng = random.Random(3)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(queries) for i in range(per_query)]
    truth = {it: rng.choice([0, 0, 1, 2, 3]) for it in items}
    judge = {it: truth[it] if rng.random() < 0.8 else rng.choice([0, 2]) for it in items}
    store.add_judgments([Judgment("llm", q, d, judge[(q, d)], role=Role.MODEL) for q, d in items])
    store.close()
    return truth


def draw(location: str, *extra: str) -> int:
    """The exit code, argparse's own refusals (SystemExit 2) included."""
    try:
        return main(["draw-sample", "--db", location, "--judge", "llm", *extra])
    except SystemExit as exc:
        return int(exc.code or 0)


def test_draw_judge_and_eval_corrects_by_the_recorded_design(store_location, tmp_path, capsys):
    truth = judged_store(store_location)
    assert draw(store_location, "--share", "0.3", "--seed", "7", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["frame_items"] == 80 and summary["seed"] == 7 and summary["batch"] == 0
    assert summary["expected_new"] == pytest.approx(24)
    with open_store(store_location) as store:
        design = store.design()
    assert design is not None and design.judge == "llm" and design.seed == 7
    drawn = [i.key for i in design.drawn()]
    assert len(drawn) == summary["drawn"] > 0
    run = tmp_path / "r.run"
    run.write_text("".join(f"q{q} Q0 d{q}-{i:03d} {i + 1} {10 - i} s\n"
                           for q in range(8) for i in range(10)))  # fmt: skip
    argv = ["eval", "--qrels", store_location, "--judge", "llm", "--run", str(run), "-k", "5"]
    assert main([*argv, "--json"]) == 1  # drawn, not judged yet
    out = json.loads(capsys.readouterr().out)
    assert out["design"]["drawn_not_judged"] == len(drawn)
    assert all("not yet judged by a human" in r["unavailable"] for r in out["runs"])
    labels = tmp_path / "h.qrels"
    labels.write_text("".join(f"{q} 0 {d} {truth[(q, d)]}\n" for q, d in drawn))
    assert main(["import-labels", "--db", store_location, "--as", "ann", "--role", "human",
                 str(labels)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["measure"]: r for r in out["runs"]}
    assert out["design"]["drawn_not_judged"] == 0
    for measure in ("P@5", "R@5", "nDCG@5"):
        e = rows[measure]["estimate"]
        assert e is not None and e["estimator"] == "horvitz-thompson difference"
        assert e["ci"][0] <= e["estimate"] <= e["ci"][1]
    assert rows["P@5"]["validated"] and not rows["R@5"]["validated"]
    true_p = sum(truth[(f"q{q}", f"d{q}-{i:03d}")] >= 1 for q in range(8) for i in range(5)) / 40
    assert abs(rows["P@5"]["estimate"]["estimate"] - true_p) < 0.25
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert "Horvitz-Thompson" in shown and "not validated" in shown
    r_row = next(line for line in shown.splitlines() if " R@5 " in f" {line} ")
    assert "(n/v)" in r_row and "[" not in r_row  # no interval simulation did not bear out


def test_rerunning_extends_to_new_items_and_refuses_other_options(store_location, capsys):
    judged_store(store_location)
    assert draw(store_location, "--share", "0.3", "--seed", "7") == 0
    capsys.readouterr()
    with open_store(store_location) as store:
        before = store.design()
        store.add_pool_entries([PoolEntry("q0", "d1-000", 99)])
    assert before is not None
    assert draw(store_location, "--share", "0.3", "--json") == 0
    grown = json.loads(capsys.readouterr().out)
    assert grown["batch"] == 1 and grown["new_items"] == 1 and grown["frame_items"] == 81
    with open_store(store_location) as store:
        after = store.design()
    assert after is not None
    recorded = {i.key: (i.prob, i.drawn) for i in after.items}
    assert all(recorded[i.key] == (i.prob, i.drawn) for i in before.items)
    assert draw(store_location, "--share", "0.3") == 0
    assert "nothing new to draw" in capsys.readouterr().out
    for option, value in (("--share", "0.5"), ("--seed", "8")):
        extra = ["--share", "0.3", option, value] if option == "--seed" else [option, value]
        assert draw(store_location, *extra) == 2
        assert f"{option} {value}" in capsys.readouterr().err


def test_hostile_input_exits_2_naming_the_field(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    judged_store(db, queries=2, per_query=4)
    for extra, field in ((["--share", "0"], "--share"), (["--share", "2"], "--share"),
                         (["--share", "nan"], "--share"), (["--per-query", "-3"], "--per-query"),
                         (["--share", "0.2", "--floor", "0.5"], "--floor")):  # fmt: skip
        assert draw(db, *extra) == 2
        assert field in capsys.readouterr().err
    assert main(["draw-sample", "--db", db, "--judge", "nobody", "--share", "0.2"]) == 2
    assert "--judge nobody: graded nothing" in capsys.readouterr().err
    with open_store(db) as store:
        store.add_judgment(Judgment("ann", "q0", "d0-000", 1))
    assert main(["draw-sample", "--db", db, "--judge", "ann", "--share", "0.2"]) == 2
    assert "a model judge is needed" in capsys.readouterr().err
    assert main(["draw-sample", "--db", str(tmp_path / "none.db"), "--judge", "llm",
                 "--share", "0.2"]) == 2  # fmt: skip


def test_the_drawn_items_come_first_in_the_static_queue(tmp_path):
    db = str(tmp_path / "s.db")
    judged_store(db, queries=3, per_query=6)
    assert draw(db, "--share", "0.4", "--seed", "1") == 0
    with open_store(db) as store:
        pool = store.pool()
        ordered = sample_first(store, pool)
        design = store.design()
    assert design is not None
    drawn = {i.key for i in design.drawn()}
    keys = [(e.query_id, e.doc_id) for e in ordered]
    assert set(keys[: len(drawn)]) == drawn and sorted(keys) == sorted(
        (e.query_id, e.doc_id) for e in pool
    )


def test_min_per_query_raises_small_queries_and_is_recorded(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    judged_store(db, queries=4, per_query=10)  # share .1: one item a query expected
    assert draw(db, "--share", "0.1", "--min-per-query", "3", "--seed", "2", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    with open_store(db) as store:
        design = store.design()
    assert design is not None and design.plan.min_per_query == 3
    expected: dict[str, float] = {}
    for item in design.items:
        expected[item.query_id] = expected.get(item.query_id, 0.0) + item.prob
    assert all(expected[q] == pytest.approx(3) for q in ("q0", "q1", "q2", "q3"))
    assert summary["expected_new"] == pytest.approx(sum(expected.values()))
    assert draw(db, "--share", "0.1") == 2  # the recorded --min-per-query, not another
    assert "--min-per-query" in capsys.readouterr().err
    for extra in (["--per-query", "2", "--min-per-query", "1"],
                  ["--share", "0.1", "--min-per-query", "0"]):  # fmt: skip
        assert draw(str(tmp_path / "other.db"), *extra) == 2
        assert "--min-per-query" in capsys.readouterr().err


def test_simulate_judges_the_drawn_items_first_as_the_app_does(tmp_path, capsys):
    """An oracle with a budget the size of the sample judges exactly the drawn items."""
    db = str(tmp_path / "s.db")
    truth = judged_store(db, queries=3, per_query=6)
    assert draw(db, "--share", "0.4", "--seed", "2") == 0
    oracle = tmp_path / "oracle.qrels"
    oracle.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in truth.items()))
    with open_store(db) as store:
        drawn = {i.key for i in store.design().drawn()}
    budget = str(len(drawn))
    assert main(["simulate", "--db", db, "--oracle", str(oracle), "--budget", budget]) == 0
    with open_store(db) as store:
        assert {(j.query_id, j.doc_id) for j in store.judgments("oracle")} == drawn


def test_an_alias_in_a_run_is_its_canonical_item_and_a_second_copy_counts_nothing(tmp_path, capsys):
    """Every item drawn (share 1) and judged: the corrected P@k is the run's exact P@k, with an
    identical passage's alias folded into the item pooled, drawn and judged under its id."""
    import sqlite3

    db = str(tmp_path / "s.db")
    truth = judged_store(db, queries=2, per_query=6)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO aliases (alias_id, canonical_id) VALUES ('copy-of-d0', 'd0-000')")
    conn.commit()
    conn.close()
    assert draw(db, "--share", "1", "--seed", "1") == 0
    labels = tmp_path / "h.qrels"
    labels.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in truth.items()))
    assert main(["import-labels", "--db", db, "--as", "ann", "--role", "human", str(labels)]) == 0
    run = tmp_path / "r.run"
    ranked = {"q0": ["copy-of-d0", "d0-000", "d0-001", "d0-002", "d0-003"],
              "q1": [f"d1-{i:03d}" for i in range(5)]}  # fmt: skip
    run.write_text("".join(f"{q} Q0 {d} {n + 1} {9 - n} s\n" for q, ids in ranked.items()
                           for n, d in enumerate(ids)))  # fmt: skip
    capsys.readouterr()
    argv = ["eval", "--qrels", db, "--judge", "llm", "--run", str(run), "-k", "5", "--json"]
    assert main(argv) == 0
    rows = {r["measure"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    folded = {"q0": ["d0-000", "d0-001", "d0-002", "d0-003"], "q1": ranked["q1"]}
    exact = sum(truth[(q, d)] >= 1 for q, ids in folded.items() for d in ids) / 10
    assert rows["P@5"]["estimate"]["estimate"] == pytest.approx(exact)
