"""The adaptive queue through the commands and the app, on a generated corpus with run files:
`pool --policy adaptive` stores frames the session rebuilds exactly, `simulate --policy adaptive`
judges and records draws and resumes, `coverage` estimates with the adaptive estimator, and the
app serves the policy's picks and saves each draw with its grade."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from adaptive_fixtures import CORPUS, QUERIES, make_study, pool
from tui_fixtures import run_async, settle

from workbench.cli import main
from workbench.core.adaptive import FAIR_DEPTH, build_frame
from workbench.flows.adaptive import session_from_store
from workbench.store import Store


@pytest.fixture
def study(tmp_path: Path) -> dict:
    return make_study(tmp_path)


def test_the_stored_frames_are_the_frames_the_policy_builds(study, capsys):
    assert pool(study, "--seed", "3") == 0
    out = capsys.readouterr().out
    assert "Frames: " in out and "may draw from" in out and "Judging queue" not in out
    from workbench.formats import read_run

    rankings = {p.stem: read_run(p).rankings() for p in study["runs"]}
    corpus_ids = [f"d{i}" for i in range(CORPUS)]
    with Store(study["db"]) as store:
        session = session_from_store(store)
        assert store.get_meta("policy") == "adaptive"
    for qid, q in session.queries.items():
        built = build_frame(qid, {s: r[qid] for s, r in rankings.items()}, corpus_ids, 3)
        assert q.frame.doc_ids == built.doc_ids
        assert q.frame.fair_order == built.fair_order
        assert q.frame.rest_size == built.rest_size
        assert list(q.frame.weight) == pytest.approx(list(built.weight))


def test_simulate_adaptive_judges_records_draws_and_resumes(study, capsys):
    assert pool(study) == 0
    args = ["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"])]
    assert main([*args, "--per-query", "30", "--no-stop"]) == 0
    out = capsys.readouterr().out
    assert "by the adaptive policy" in out and "against the oracle" in out
    with Store(study["db"]) as store:
        rows = store.judgments("oracle")
        draws = store.draws()
    assert len(rows) == QUERIES * 30
    assert draws and all(0 < d.prob <= 1 for d in draws)
    judged = {(j.query_id, j.doc_id) for j in rows}
    assert {(d.query_id, d.doc_id) for d in draws} <= judged
    # Every system's top 5 is judged (the fair start).
    from workbench.formats import read_run

    for path in study["runs"]:
        for qid, ranking in read_run(path).rankings().items():
            assert {(qid, d) for d in ranking[:FAIR_DEPTH]} <= judged
    # A second run continues from the store: nothing judged twice, the cap holds per query.
    assert main([*args, "--per-query", "40", "--no-stop"]) == 0
    with Store(study["db"]) as store:
        again = store.judgments("oracle")
    assert len(again) == QUERIES * 40
    assert len({(j.query_id, j.doc_id) for j in again}) == len(again)


def test_simulate_budget_caps_the_adaptive_walk_in_all(study, capsys):
    """--budget is the judgments in all, spread over the queries in turn, as on a static
    store (it was ignored: the adaptive walk judged every query up to its cap)."""
    assert pool(study) == 0
    args = ["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"]), "--no-stop"]
    assert main([*args, "--budget", "17"]) == 0
    with Store(study["db"]) as store:
        rows = store.judgments("oracle")
    assert len(rows) == 17
    assert "17 judgments by oracle" in capsys.readouterr().out
    assert main([*args, "--budget", "5", "--per-query", "30"]) == 0
    with Store(study["db"]) as store:
        assert len(store.judgments("oracle")) == 22


def test_one_annotators_walk_restores_only_its_own_draws(study, capsys):
    """simulate's session holds the oracle's grades only, so another annotator's draws (made on
    theirs) are not its own: it used to serve one of them, past its cap, and count it with the
    oracle's grade. It also says that the store holds others' grades."""
    assert pool(study) == 0
    args = ["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"]), "--no-stop"]
    assert main([*args, "--annotator", "alice", "--per-query", "25"]) == 0
    capsys.readouterr()
    for _ in range(2):  # past the fair start (every system's top 10): draws
        assert main([*args, "--per-query", "22"]) == 0
        assert "already holds grades by alice (" in capsys.readouterr().err
    with Store(study["db"]) as store:
        rows = store.judgments("oracle")
        mine = store.draws("oracle")
        assert len(store.draws()) == len(mine) + len(store.draws("alice"))
    assert len(rows) == QUERIES * 22
    judged = {(j.query_id, j.doc_id) for j in rows}
    assert mine and {(d.query_id, d.doc_id) for d in mine} <= judged


def test_coverage_of_an_adaptive_store_uses_its_estimator(study, capsys):
    assert pool(study) == 0
    main(["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"]),
          "--per-query", "40"])  # fmt: skip
    capsys.readouterr()
    assert main(["coverage", "--db", str(study["db"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["policy"] == "adaptive"
    for row in report["queries"].values():
        assert "more_to_certify" in row
        assert row["to_estimate"] == 0 and row["frame_left"] > 0
        assert row["est_rel"] is not None
        assert row["est_rel_low"] <= row["est_rel"] <= row["est_rel_high"]
        assert row["est_rel_low"] >= row["relevant"]
    assert main(["coverage", "--db", str(study["db"])]) == 0
    out = capsys.readouterr().out
    assert "to go" in out
    # the share of the relevant outside the candidates, the session's
    with Store(study["db"]) as store:
        share = session_from_store(store).rest_model().outside
    assert 0 <= share < 1 and report["outside_candidates"] == pytest.approx(share)
    said = f"an estimated {int(share * 100)}%" if share else "cannot be told from none"
    assert said in " ".join(out.split())


def test_policies_and_stores_that_do_not_match_exit_2(study, tmp_path, capsys):
    static = tmp_path / "static.db"
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--systems", "", "--run", str(study["runs"][0])]  # fmt: skip
    assert main([*args, "--db", str(static), "--policy", "static"]) == 0
    assert main([*args, "--db", str(static), "--policy", "adaptive"]) == 2
    assert "new store" in capsys.readouterr().err
    assert main(["simulate", "--db", str(static), "--oracle", str(study["qrels"]),
                 "--policy", "adaptive"]) == 2  # fmt: skip
    assert "pool --policy adaptive" in capsys.readouterr().err
    assert pool(study) == 0
    assert main([*args, "--db", str(study["db"])]) == 2
    assert main([*args, "--db", str(tmp_path / "x.db"), "--policy", "adaptive",
                 "--sample", "5"]) == 2  # fmt: skip


def test_pool_is_adaptive_by_default_and_static_where_only_static_fits(study, tmp_path, capsys):
    base = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--systems", "", "--run", str(study["runs"][0])]  # fmt: skip

    def policy(db: Path) -> str | None:
        store = Store(db)
        try:
            return store.get_meta("policy") or "static"
        finally:
            store.close()

    default = tmp_path / "default.db"
    assert main([*base, "--db", str(default)]) == 0
    assert policy(default) == "adaptive"
    assert "static policy" not in capsys.readouterr().err
    # A second system into the adaptive store: refused, saying how to pool every system at once.
    assert main([*base[:-1], str(study["runs"][1]), "--db", str(default)]) == 2
    err = capsys.readouterr().err
    assert "--run" in err and "new store" in err
    assert "Pooling" not in err  # said before any input is read
    assert main([*base[:-1], str(study["runs"][1]), "--db", str(default), "--policy",
                 "static"]) == 2  # fmt: skip
    assert "new store" in capsys.readouterr().err
    # The static pool's own options mean static, and say so.
    sampled = tmp_path / "sampled.db"
    assert main([*base, "--db", str(sampled), "--sample", "5"]) == 0
    assert policy(sampled) == "static"
    assert "--sample implies the static policy" in capsys.readouterr().err
    # A store that holds a static pool takes another system, without --policy.
    assert main([*base[:-1], str(study["runs"][1]), "--db", str(sampled)]) == 0
    assert "already holds a static pool" in capsys.readouterr().err
    store = Store(sampled)
    assert len(store.poolings()) == 2
    store.close()
    # Asking for adaptive with a static option is refused, naming the option.
    for option in (["--depth", "10"], ["--strategy", "random"]):
        assert main([*base, "--db", str(tmp_path / "x.db"), "--policy", "adaptive",
                     *option]) == 2  # fmt: skip
        assert f"{option[0]}: belongs to --policy static" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()


def test_a_query_no_system_ranked_anything_for_keeps_the_studys_columns(study, tmp_path, capsys):
    """The first query has no candidates (no run ranks anything for it): the session rebuilt
    from the store must still give every query the same system columns (it crashed with a
    feature-count mismatch; a query ranked by one system of two as well)."""
    runs = []
    for n, path in enumerate(study["runs"]):
        lines = path.read_text().splitlines(keepends=True)
        keep = [line for line in lines if not line.startswith("q0 ")]
        if n == 1:  # the second system ranks nothing for q1 either
            keep = [line for line in keep if not line.startswith("q1 ")]
        runs.append(tmp_path / f"part-{path.name}")
        runs[-1].write_text("".join(keep))
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--db", str(study["db"]), "--systems", ""]  # fmt: skip
    for run in runs:
        args += ["--run", str(run)]
    assert main(args) == 0
    store = Store(study["db"])
    try:
        session = session_from_store(store)
    finally:
        store.close()
    columns = {tuple(q.frame.systems) for q in session.queries.values()}
    assert columns == {("bm25", "dense")}
    q1 = session.queries["q1"].frame
    assert (q1.ranks[: q1.candidates, 1] == 0).all() and (q1.ranks[: q1.candidates, 0] > 0).all()
    assert main(["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"]),
                 "--per-query", "20"]) == 0  # fmt: skip
    assert main(["coverage", "--db", str(study["db"])]) == 0


def test_overlap_on_an_adaptive_store_is_stored_with_the_study(study, capsys):
    """`pool --overlap` keeps the adaptive queue (it used to make the pool static and lose the
    study's figures) and `assign` sets it on an adaptive store: the share is stored, no item
    marked; more than two judges a passage is refused."""
    assert pool(study, "--overlap", "0.25") == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "one passage in 4 that the app serves is one another annotator judged" in said
    store = Store(study["db"])
    assert store.get_meta("policy") == "adaptive" and store.get_meta("overlap") == "0.25"
    assert store.required_judges() == {}
    store.close()
    assert main(["assign", "--db", str(study["db"]), "--overlap", "0.2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["adaptive"] and summary["every"] == 5
    assert main(["assign", "--db", str(study["db"]), "--overlap", "0.2", "--judges", "3"]) == 2
    assert "2 judges" in capsys.readouterr().err


@run_async
async def test_the_app_serves_the_policy_and_saves_each_draw_with_its_grade(study) -> None:
    from workbench.tui.app import JudgeApp

    assert pool(study) == 0
    store = Store(study["db"])
    try:
        expected = session_from_store(store)
        first = expected.next_pick("q0")
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            assert app.screen._shown_key == ("q0", first.doc_id)
            for _ in range(60):
                await pilot.press("0")
                await settle(pilot, app)
            from workbench.tui.status_lines import StatusLine

            status = str(app.screen.query_one(StatusLine).render())
            # each query's fair start and a batch served, the queue moves between queries (the
            # study's ranking decides once every fair start is judged): no query took all 60
            found = re.search(r"query [1-4]/4: (\d+)", status)
            assert found and int(found[1]) < 60, status
            assert any(w in status for w in ("certif", "to an estimate", "judged"))
            assert "out of reach" not in status
            # No count of the frame the queue may draw from (4 queries x 100 frame passages).
            assert "/400" not in status
            assert re.search(r"you:? 60", status) and re.search(r"all:? 60", status), status
            graded = [(j.query_id, j.doc_id) for j in store.judgments("ann")]
            assert len(graded) == 60 and len(set(graded)) == 60
            draws = store.draws()
            assert draws and {(d.query_id, d.doc_id) for d in draws} <= set(graded)
            # Undo brings back the last graded passage; regrading it keeps the queue going.
            await pilot.press("u")
            await settle(pilot, app)
            assert app.screen._shown_key == graded[-1]
            await pilot.press("1")
            await settle(pilot, app)
            assert len(store.current_judgments("ann")) == 60
            # k/j: back through the annotator's own grades, forward to the queue's pick, and no
            # further (the next passage in frame order used to be shown, and could be graded).
            pick = app.screen._shown_key
            assert pick not in graded
            await pilot.press("k")
            await settle(pilot, app)
            assert app.screen._shown_key == graded[-1]
            await pilot.press("k")
            await settle(pilot, app)
            assert app.screen._shown_key == graded[-2]
            for _ in range(3):
                await pilot.press("j")
                await settle(pilot, app)
            assert app.screen._shown_key == pick
            from workbench.tui.status_lines import MessageLine

            assert "the queue's pick" in app.screen.query_one(MessageLine).message
            # The jump list counts what was judged, not the frame the queue may draw from.
            await pilot.press("g")
            await settle(pilot, app)
            from workbench.tui.pickers import QueryPicker

            picker = app.screen
            assert isinstance(picker, QueryPicker)
            cells = picker._cells(next(r for r in picker.rows if r.query_id == "q0"))
            assert cells[1] == str(sum(1 for q, _ in graded if q == "q0"))
    finally:
        store.close()


def test_pool_defaults_to_adaptive_into_an_empty_postgres_store(study, pg_url, capsys):
    """A database with no store yet is where pool creates one (the policy check must not take
    it for an error); the adaptive queue then runs there as on SQLite."""
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--systems", "", "--run", str(study["runs"][0]), "--db", pg_url]  # fmt: skip
    assert main(args) == 0
    from workbench.store import open_store

    with open_store(pg_url) as store:
        assert store.get_meta("policy") == "adaptive"
    assert main(["simulate", "--db", pg_url, "--oracle", str(study["qrels"]),
                 "--per-query", "15"]) == 0  # fmt: skip
    assert main(["coverage", "--db", pg_url]) == 0
    capsys.readouterr()
    assert main(args) == 2
    assert "new store" in capsys.readouterr().err


def test_an_explicit_zero_static_option_still_means_static(study, tmp_path, capsys):
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--systems", "", "--run", str(study["runs"][0])]  # fmt: skip
    assert main([*args, "--db", str(tmp_path / "z.db"), "--sample", "0"]) == 0
    assert "--sample implies the static policy" in capsys.readouterr().err
    store = Store(tmp_path / "z.db")
    assert store.get_meta("policy") in (None, "static")
    store.close()


def test_a_store_that_cannot_be_opened_is_refused_before_any_system_runs(study, tmp_path, capsys):
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--systems", "", "--run", str(study["runs"][0])]  # fmt: skip
    notes = tmp_path / "notes.db"
    notes.write_text("not a store", encoding="utf-8")
    for db in (str(notes), "postgresql://nobody@127.0.0.1:1/none"):
        assert main([*args, "--db", db, "--runs-dir", str(tmp_path / "runs")]) == 2
        err = capsys.readouterr().err
        assert "Pooling" not in err and not (tmp_path / "runs").exists()
    assert notes.read_text(encoding="utf-8") == "not a store"


def test_a_candidate_depth_is_stored_and_the_session_rebuilds_it(study, capsys):
    """`pool --candidate-depth 40`: each system's top 40 are the candidates, the reserve's rank
    bands start at 41, and the session rebuilt from the store weighs candidates by rank / 40
    (as the frame built directly does)."""
    assert pool(study, "--seed", "3", "--candidate-depth", "40") == 0
    assert "each system's top 40" in capsys.readouterr().out
    from workbench.formats import read_run

    rankings = {p.stem: read_run(p).rankings() for p in study["runs"]}
    corpus_ids = [f"d{i}" for i in range(CORPUS)]
    with Store(study["db"]) as store:
        session = session_from_store(store)
        [pooling] = store.poolings()
        strata = {e.stratum for e in store.pool()}
    assert pooling["depth"] == 40 and pooling["params"]["candidate_depth"] == 40
    assert "reserve:rank:41-50" in strata
    for qid, q in session.queries.items():
        built = build_frame(qid, {s: r[qid] for s, r in rankings.items()}, corpus_ids, 3, depth=40)
        assert q.frame.doc_ids == built.doc_ids
        assert q.frame.depth == built.depth == 40
        assert list(q.frame.candidate_depth) == pytest.approx(list(built.candidate_depth))
        top = {d for r in rankings.values() for d in r[qid][:40]}
        assert set(q.frame.doc_ids[: q.frame.candidates]) == top


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--candidate-depth", "5"), "--candidate-depth: must be from 10 to 1000, not 5"),
        (("--candidate-depth", "100000"), "--candidate-depth: must be from 10 to 1000, not 100000"),
        (("--candidate-depth", "50", "--depth", "10"), "--candidate-depth: the adaptive queue's"),
    ],
)
def test_a_bad_candidate_depth_exits_2(study, capsys, extra, message):
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--db", str(study["db"]), "--systems", "", "--run", str(study["runs"][0]),
            *extra]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Pooling" not in err  # said before any input is read
    assert not study["db"].exists()


def test_a_registered_systems_adaptive_pool_searches_as_deep_as_the_reserves_bands(
    study, tmp_path, capsys
):
    """The reserve is drawn by rank band (101-300, 301-1000, rest) as in the benchmark, which
    pools from 1000-deep run files: a registered system must search that deep too (it searched
    100 deep, and every reserve passage came from one band, the whole rest)."""
    db = tmp_path / "bm25.db"
    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--db", str(db), "--systems", "bm25",
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    with Store(db) as store:
        strata = {e.stratum for e in store.pool()}
    assert any(s.startswith("reserve:rank:101-") for s in strata), strata


@run_async
async def test_the_app_serves_a_second_annotator_one_passage_in_every_that_another_judged(
    study,
) -> None:
    """Overlap on an adaptive study, in the app: alice judges in hers, then bob's app serves
    one passage in 4 that alice judged (blind), the rest the policy's picks; `agree` then has
    pairs, and the study counts each passage once (its judged count is alice's and bob's
    distinct passages)."""
    from workbench.tui.app import JudgeApp

    assert pool(study, "--overlap", "0.25") == 0
    store = Store(study["db"])
    try:
        for name, grades in (("alice", 24), ("bob", 20)):
            app = JudgeApp(store, name)
            async with app.run_test(size=(100, 30)) as pilot:
                await settle(pilot, app)
                for n in range(grades):
                    await pilot.press("2" if n % 3 else "0")
                    await settle(pilot, app)
        alices = {(j.query_id, j.doc_id) for j in store.judgments("alice")}
        bobs = [(j.query_id, j.doc_id) for j in store.judgments("bob")]
        assert len(alices) == 24 and len(bobs) == 20 == len(set(bobs))
        assert len([key for key in bobs if key in alices]) == 20 // 4
        session = session_from_store(store)
        assert sum(session.judged(q) for q in session.queries) == len(alices | set(bobs))
    finally:
        store.close()
    assert main(["agree", "--db", str(study["db"]), "--json"]) == 0
