"""The study level: joint intervals of a run's mean and of two runs' difference under every
query's unjudged relevant passages at once (workbench.core.study), through the core, `eval
--json`, `compare --json` and `--fail-under`, on a generated collection judged by an oracle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from adaptive_fixtures import make_study, pool

from workbench.cli import main
from workbench.core.measures.metrics import evaluate
from workbench.core.study import QueryDraws, StudyDraws, study, study_delta, variance_shares

COUNT = 400


def _draws(missing: dict[str, float], p: dict[str, dict[str, float]] | None = None) -> StudyDraws:
    """Draws where each query misses exactly `missing[q]` relevant (no spread)."""
    return StudyDraws(
        COUNT,
        {
            q: QueryDraws(q, 0, 0, np.full(COUNT, m), np.zeros(COUNT), (p or {}).get(q, {}),
                          np.zeros(COUNT))
            for q, m in missing.items()
        },
    )  # fmt: skip


QRELS = {"a": {"d1": 2, "d2": 1, "d3": 0}, "b": {"e1": 3, "e2": 0}}
RUNS = {
    "one": {"a": ["d1", "d3", "x1", "d2"], "b": ["e2", "e1"]},
    "two": {"a": ["d2", "d1"], "b": ["e1"]},
}


def _scored(keys=("R@2", "P@2", "nDCG@2")):
    return {name: dict.fromkeys(keys, ["a", "b"]) for name in RUNS}


def test_with_nothing_missing_the_study_is_the_eval_mean_exactly():
    result = study(_draws({"a": 0, "b": 0}), QRELS, RUNS, [2], _scored())
    expected = evaluate(QRELS, RUNS["one"], [2]).mean.values
    for key in ("R@2", "P@2", "nDCG@2"):
        interval = result["one"].intervals[key]
        assert interval.low == pytest.approx(expected[key])
        assert interval.high == pytest.approx(expected[key])
        assert interval.estimate == pytest.approx(expected[key])
        assert interval.queries == 2


def test_missing_relevant_lower_recall_as_the_denominator_says():
    # a misses 2 relevant (|Rel| 4), b misses 1 (|Rel| 2): one's R@2 = (1/4 + 1/2) / 2
    result = study(_draws({"a": 2, "b": 1}), QRELS, RUNS, [2], _scored())
    assert result["one"].intervals["R@2"].estimate == pytest.approx((1 / 4 + 1 / 2) / 2)
    # precision does not move (nothing unjudged in the top 2)
    assert result["one"].intervals["P@2"].estimate == pytest.approx((1 / 2 + 1 / 2) / 2)
    # nDCG: the ideal DCG gains the missing passages' grades, so it falls
    judged = evaluate(QRELS, RUNS["one"], [2]).mean.values["nDCG@2"]
    assert result["one"].intervals["nDCG@2"].high < judged


def test_an_unjudged_passage_in_the_top_k_counts_at_its_probability():
    # x1 at rank 3 of run one's ranking for a, certainly relevant by the model
    draws = _draws({"a": 0, "b": 0}, {"a": {"x1": 1.0}})
    result = study(draws, QRELS, RUNS, [3], {"one": {"R@3": ["a"], "P@3": ["a"]}})
    # found 2 judged (d1) + x1: R@3 = 2 / 3 (|Rel| grows with x1), P@3 = 2 / 3
    assert result["one"].intervals["R@3"].estimate == pytest.approx(2 / 3)
    assert result["one"].intervals["P@3"].estimate == pytest.approx(2 / 3)


def test_the_delta_is_taken_draw_by_draw():
    spread = StudyDraws(
        COUNT,
        {
            "a": QueryDraws("a", 0, 0, np.arange(COUNT) % 5.0, np.zeros(COUNT), {},
                            np.zeros(COUNT)),
            "b": QueryDraws("b", 0, 0, np.zeros(COUNT), np.zeros(COUNT), {}, np.zeros(COUNT)),
        },
    )  # fmt: skip
    result = study(spread, QRELS, RUNS, [2], _scored(("R@2",)))
    delta = study_delta(result["two"], result["one"], "R@2")
    assert delta is not None and delta.low is not None
    one, two = result["one"].per_query["R@2"], result["two"].per_query["R@2"]
    draws = [(two[q] - one[q]) for q in ("a", "b")]
    assert delta.estimate == pytest.approx(float(np.median(np.mean(draws, axis=0))))
    # both runs' recall falls with the same |Rel|: the delta is narrower than either mean
    assert delta.width < result["two"].intervals["R@2"].width
    shares = variance_shares(result["one"], "R@2")
    assert shares["a"] > 0 and shares["b"] == 0


def test_a_query_without_an_estimate_leaves_the_mean_without_an_interval():
    draws = _draws({"a": 0})
    draws.queries["b"] = QueryDraws("b", 1, 3, None, None, {}, None)  # type: ignore[index]
    result = study(draws, QRELS, RUNS, [2], _scored(("R@2",)))
    interval = result["one"].intervals["R@2"]
    assert interval.low is None and interval.estimate is None and interval.unmeasured == ("b",)
    assert interval.to_json()["unmeasured"] == ["b"]


# --- through the commands, on a generated collection -----------------------------------------


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("study")
    made = make_study(tmp)
    assert pool(made) == 0
    args = ["simulate", "--db", str(made["db"]), "--oracle", str(made["qrels"])]
    assert main([*args, "--per-query", "60", "--no-stop"]) == 0
    return made


def _eval(made: dict, *extra: str, capsys) -> tuple[int, dict]:
    args = ["eval", "--qrels", str(made["db"]), "-k", "10", "--json"]
    for run in made["runs"]:
        args += ["--run", str(run)]
    code = main([*args, *extra])
    return code, json.loads(capsys.readouterr().out)


def test_eval_json_gives_each_run_its_study_intervals(judged, capsys):
    code, out = _eval(judged, capsys=capsys)
    assert code == 0
    truth = judged["truth"]
    from workbench.formats import read_run

    for path in judged["runs"]:
        run = out["runs"][path.stem]
        for key in ("R@10", "nDCG@10", "P@10"):
            interval = run["study"][key]
            assert interval["low"] <= interval["estimate"] <= interval["high"]
            assert interval["queries"] == run["mean"]["queries"]
        # every relevant passage of this small collection is found by 60 per query: the
        # interval holds the true mean (with the unjudged top-10 passages the model weighs)
        true = evaluate(truth, read_run(path).rankings(), [10]).mean.values["R@10"]
        assert run["study"]["R@10"]["low"] <= true <= run["study"]["R@10"]["high"]


def test_compare_json_gives_the_study_delta_beside_the_paired_test(judged, capsys):
    args = ["compare", "--qrels", str(judged["db"]), "-k", "10", "--json"]
    for run in judged["runs"]:
        args += ["--run", str(run)]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    by_measure = {c["measure"]: c for c in out["comparisons"]}
    delta = by_measure["R@10"]["study_delta"]
    assert delta["low"] <= delta["estimate"] <= delta["high"]
    assert "p_value" in by_measure["R@10"]  # the paired test stays, apart
    assert "study_delta" not in by_measure["MRR"]  # no unjudged relevant moves MRR's ... here


def test_a_floor_is_held_to_the_study_interval(judged, capsys):
    _, out = _eval(judged, capsys=capsys)
    first = judged["runs"][0].stem
    low = out["runs"][first]["study"]["R@10"]["low"]
    mean = out["runs"][first]["mean"]["R@10"]
    floor = round((low + mean) / 2, 4)
    assert low < floor < mean
    code, result = _eval(judged, "--fail-under", f"R@10={floor}", capsys=capsys)
    assert code == 1
    check = next(c for c in result["fail_under"] if c["run"] == first)
    assert check["failed_on"] == "interval_low" and check["interval"] == "study"
    assert check["interval_low"] == pytest.approx(low)


def test_unmeasured_queries_fail_a_floor_and_leave_no_study_interval(tmp_path, capsys):
    made = make_study(tmp_path)
    assert pool(made) == 0
    args = ["simulate", "--db", str(made["db"]), "--oracle", str(made["qrels"])]
    assert main([*args, "--per-query", "5", "--no-stop"]) == 0
    capsys.readouterr()
    code, out = _eval(made, "--fail-under", "R@10=0.01", capsys=capsys)
    assert code == 1
    run = out["runs"][made["runs"][0].stem]
    assert run["study"]["R@10"]["low"] is None and run["study"]["R@10"]["unmeasured"]
    assert all(c["failed_on"] == "unmeasured" for c in out["fail_under"])


def test_eval_text_shows_the_study_line(judged, capsys):
    args = ["eval", "--qrels", str(judged["db"]), "-k", "10"]
    for run in judged["runs"]:
        args += ["--run", str(run)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "study (the mean over" in out and "(study)" in out
    assert Path(judged["db"]).exists()


def test_the_app_moves_to_the_query_that_narrows_the_study_after_a_batch(judged):
    from workbench.core.adaptive.chooser import policy_chooser
    from workbench.flows.adaptive import session_from_store
    from workbench.store import Store

    with Store(judged["db"]) as store:
        session = session_from_store(store)
    order = list(session.queries)
    choose = policy_chooser(session, order, ranked=lambda: [order[-1]], batch=2)
    served = []
    current = order[0]
    for _ in range(3):
        pick = choose(current, frozenset())
        assert pick is not None
        served.append(pick[0])
        session.record(pick[0], pick[1], False)
        current = pick[0]
    assert served == [order[0], order[0], order[-1]]
    # without a ranking, the query is served until it has nothing left
    plain = policy_chooser(session, order)
    assert plain(order[0], frozenset())[0] == order[0]


def test_the_plan_reaches_a_wide_target_and_forecasts_a_narrow_one(judged):
    from workbench.core.coverage import grades_counted
    from workbench.core.study import parse_target, study_plan
    from workbench.core.study.walk import judged_grades, walk_to_target
    from workbench.flows.adaptive import session_from_store
    from workbench.store import Store

    with Store(judged["db"]) as store:
        session = session_from_store(store)
        grades = grades_counted(store.current_judgments())
        pool = store.pool()
    wide = study_plan(session, grades, pool, parse_target("R@10:1"), count=300)
    assert wide.reached and wide.to_target == 0
    narrow = study_plan(session, grades, pool, parse_target("R@10:0.001"), count=300)
    assert not narrow.reached
    assert narrow.to_target is None or narrow.to_target > 0
    assert narrow.to_json()["target"] == "R@10:0.001"
    # walking toward a reachable target judges, and stops when the plan says it is reached
    truth = judged["truth"]
    current = max(i.width for i in narrow.runs.values())
    target = parse_target(f"R@10:{round(current * 0.8, 4)}")
    steps, last = walk_to_target(
        session, lambda q, d: truth.get(q, {}).get(d, 0), judged_grades(session, grades), pool,
        target, count=300,
    )  # fmt: skip
    assert steps and (last.reached or all(session.next_pick(q) is None for q in session.queries))


@pytest.mark.parametrize("spec", ["R@10", "R@10:0", "R@10:1.5", "MRR@10:0.1", "R:0.1", "R@0:0.1"])
def test_a_malformed_target_is_refused(spec):
    from workbench.core.study import parse_target

    with pytest.raises(ValueError, match="--target"):
        parse_target(spec)


def test_pool_and_coverage_save_store_the_target_and_simulate_walks_to_it(tmp_path, capsys):
    from workbench.store import Store

    made = make_study(tmp_path)
    assert pool(made, "--target", "nDCG@10:0.4") == 0
    with Store(made["db"]) as store:
        assert store.get_meta("target") == "nDCG@10:0.4"
    args = ["simulate", "--db", str(made["db"]), "--oracle", str(made["qrels"])]
    assert main([*args, "--target", "nDCG@10:0.4", "--no-stop"]) == 0
    out = capsys.readouterr().out
    assert "simulate: target width 0.4: reached" in out
    assert main(["coverage", "--db", str(made["db"]), "--target", "R@10:0.3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[0] == "study" and data["study"]["target"] == "R@10:0.3"
    assert set(data["study"]) >= {"runs", "reached", "to_target", "next"}
    with Store(made["db"]) as store:  # a read's target holds for its run (issue 44)
        assert store.get_meta("target") == "nDCG@10:0.4"
    assert main(["coverage", "--db", str(made["db"]), "--target", "R@10:0.3", "--save"]) == 0
    assert "target R@10:0.3 stored with the study" in capsys.readouterr().err
    with Store(made["db"]) as store:
        assert store.get_meta("target") == "R@10:0.3"
    assert main(["coverage", "--db", str(made["db"])]) == 0
    text = capsys.readouterr().out
    assert text.index("study: R@10") < text.index("Summary")
    assert main(["coverage", "--db", str(made["db"]), "--target", "R@10"]) == 2
