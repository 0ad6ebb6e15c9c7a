"""Floors on a run's means: the pure rule (`workbench.core.evaluation.floors`), `workbench eval
--fail-under` and `assert_eval(min=...)`, which share it. With a coverage estimate a floor on
R@k must be cleared by the lower end of recall's interval under the estimated |Rel| too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from seed_example import Q_BROAD_COVERAGE, seed_golden_with_coverage

import workbench
from workbench.cli import main
from workbench.core.audit.judged_coverage import coverage_from_summary
from workbench.core.errors import InputError
from workbench.core.evaluation.eval_report import eval_report, exit_code, with_floors
from workbench.core.evaluation.floors import FloorCheck, floor_problems, parse_floor_specs

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden" / "seed-example.yaml"
RUN = ROOT / "golden" / "seed-example.run"
DEMO = ROOT / "golden" / "demo.yaml"


@pytest.fixture
def seed_covered(tmp_path: Path) -> Path:
    return seed_golden_with_coverage(
        GOLDEN.read_text(encoding="utf-8"), tmp_path / "seed.yaml", every_query=True
    )


def run_eval(capsys, *argv: object) -> tuple[int, str, str]:
    code = main(["eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


# --- the pure rule, by hand ------------------------------------------------------------------


def test_specs_repeat_or_comma_separate_and_malformed_ones_are_named():
    assert parse_floor_specs(["R@10=0.8,nDCG@10=.5", " MRR = 1 "]) == {
        "R@10": 0.8,
        "nDCG@10": 0.5,
        "MRR": 1.0,
    }
    for bad, said in [
        ("R@10", "expected MEASURE=FLOOR"),
        ("=0.3", "expected MEASURE=FLOOR"),
        ("R@10=abc", "'abc' is not a number"),
        ("R@10=nan", "'nan' is not a number"),
        ("R@10=1_0", "'1_0' is not a number"),
        ("R@10=٠.٥", "is not a number"),  # non-ASCII digits float() would take
        ("R@10=0.5,R@10=0.6", "R@10 is given a floor twice"),
        (",", "needs at least one MEASURE=FLOOR"),
    ]:
        with pytest.raises(ValueError, match=said) as raised:
            parse_floor_specs([bad])
        assert str(raised.value).startswith("--fail-under")


def test_floor_problems_name_unknown_measures_cutoffs_and_ranges():
    ok = {"R@5": 0.5, "nDCG@10": 0, "MRR": 1}
    assert floor_problems(ok, [5, 10]) == []
    found = floor_problems(
        {"X@5": 0.5, "R": 0.5, "MRR@5": 0.5, "R@20": 0.5, "P@5": 2.0, "bpref": True}, [5, 10]
    )
    assert found == [
        "--fail-under X@5=0.5: unknown measure 'X' (measures: P, R, MRR, nDCG, bpref, judged, "
        "ceiling, pct_of_ceiling)",
        "--fail-under R=0.5: R takes a cutoff: write R@K",
        "--fail-under MRR@5=0.5: MRR takes no cutoff: write MRR",
        "--fail-under R@20=0.5: k = 20 is not evaluated (k = 5, 10)",
        "--fail-under P@5=2: the floor must be in [0, 1] (every measure is a fraction)",
        "--fail-under bpref=True: the floor must be a number in [0, 1]",
    ]


def test_a_floor_check_fails_on_the_undefined_the_mean_or_the_interval_low():
    assert FloorCheck("r", "P@5", 0.5, 0.5).passed  # at the floor clears it
    assert FloorCheck("r", "P@5", 0.5, 0.4999).failed_on == "mean"
    assert FloorCheck("r", "P@5", 0.0, None).failed_on == "undefined"
    assert FloorCheck("r", "R@5", 0.5, 0.9, 0.4, 2).failed_on == "interval_low"
    assert FloorCheck("r", "R@5", 0.5, 0.4, 0.6, 1).failed_on == "mean"
    assert FloorCheck("r", "R@5", 0.5, 0.9, 0.6, 1).passed


def test_recall_under_an_estimate_must_clear_the_floor_at_its_interval_low():
    # 4 judged relevant, all in the top 10; |Rel| estimated 5 [4, 10]: R@10 = 1 against the
    # judged set, 0.8 at the point estimate, 0.4 (4/10) at the interval's lower end.
    qrels = {"q1": {"a": 1, "b": 1, "c": 2, "d": 3, "e": 0}}
    summary = {"queries": {"q1": {
        "relevant": 4, "est_rel": 5.0, "est_rel_low": 4.0, "est_rel_high": 10.0,
        "completeness": 0.8, "completeness_low": 0.4, "status": "incomplete",
    }}}  # fmt: skip
    coverage, problems = coverage_from_summary(summary, qrels, source="by hand")
    assert problems == []
    runs = {"r": {"q1": ["a", "b", "c", "d", "e"]}}
    report = eval_report(qrels, runs, [10], coverage=coverage)
    assert report.runs["r"].mean.values["R@10"] == 1.0
    assert report.runs["r"].gate.mean.recall[10].estimate == pytest.approx(0.8)

    cleared = with_floors(report, {"R@10": 0.4, "P@10": 0.4})
    assert [c.passed for c in cleared.floors] == [True, True]
    assert exit_code(cleared) == 0
    failed = with_floors(report, {"R@10": 0.7})  # the point estimate 0.8 clears it, 0.4 not
    (check,) = failed.floors
    assert (check.value, check.interval_low, check.measured) == (1.0, pytest.approx(0.4), 1)
    assert check.failed_on == "interval_low"
    assert "lower end of its interval under the estimated |Rel| is 0.4000" in check.message
    assert "the lower end must clear the floor" in check.message
    assert exit_code(failed) == 1
    without = eval_report(qrels, runs, [10])
    assert with_floors(without, {"R@10": 0.7}).floors[0].passed  # no estimate: the mean


COMPLETE_Q1 = {
    "relevant": 2, "est_rel": 2.0, "est_rel_low": 2.0, "est_rel_high": 2.0,
    "completeness": 1.0, "completeness_low": 1.0, "status": "complete",
}  # fmt: skip
"""q1 of the two tests below: both of its relevant documents found, |Rel| known to be 2."""


def test_an_unmeasured_query_fails_the_floor_whatever_the_measured_ones_say():
    # q1 is measured (all of its |Rel| = 2 found: interval 1.0-1.0); q2 is unmeasured: the
    # interval's mean over q1 clears 0.8, but a gate never passes with less evidence.
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    row = COMPLETE_Q1
    coverage, _ = coverage_from_summary({"queries": {"q1": row}}, qrels, source="by hand")
    report = eval_report(qrels, {"r": {"q1": ["a", "b"], "q2": ["c"]}}, [2], coverage=coverage)
    (check,) = with_floors(report, {"R@2": 0.8}).floors
    assert (check.value, check.failed_on, check.unmeasured) == (1.0, "unmeasured", ("q2",))
    assert "q2 has no estimate of |Rel| yet" in check.message


def test_the_mean_over_every_query_must_clear_too():
    # both measured; q2 finds nothing: the interval's low end clears nothing, the mean 0.5
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    row = COMPLETE_Q1
    other = {**row, "relevant": 1, "est_rel": 1.0, "est_rel_low": 1.0, "est_rel_high": 1.0}
    summary = {"queries": {"q1": row, "q2": other}}
    coverage, _ = coverage_from_summary(summary, qrels, source="by hand")
    report = eval_report(qrels, {"r": {"q1": ["a", "b"], "q2": ["x"]}}, [2], coverage=coverage)
    (check,) = with_floors(report, {"R@2": 0.4}).floors
    assert (check.value, check.interval_low, check.failed_on) == (0.5, 0.5, None)
    (check,) = with_floors(report, {"R@2": 0.8}).floors
    assert (check.value, check.interval_low, check.failed_on) == (0.5, 0.5, "interval_low")


# --- workbench eval --fail-under --------------------------------------------------------------


def test_fail_under_passes_and_fails_on_the_seed_example(capsys):
    # the seed golden.yaml has no coverage summary: the floors hold only with the assumption
    seed = ("--qrels", GOLDEN, "--run", RUN, "-k", "5", "--assume-complete")
    code, out, err = run_eval(capsys, *seed, "--fail-under", "R@5=0.6,nDCG@5=0.7")
    assert code == 0 and "floors: 0 of 2 not cleared" in out and err == ""
    code, out, err = run_eval(capsys, *seed[:-1], "--fail-under", "R@5=0.6,nDCG@5=0.7")
    assert code == 1 and "floors: 0 of 2 not cleared" in out and "error-level problems" in err
    code, out, err = run_eval(capsys, *seed, "--fail-under", "R@5=0.99")
    assert code == 1
    assert out.index("problems:") < out.index("floors: 1 of 1 not cleared")  # after the report
    assert "seed: R@5 = 0.6250, below the floor 0.99" in out
    assert "a floor not cleared" in err


def test_fail_under_in_json_repeated_equals_comma_separated(capsys):
    base = ["--qrels", GOLDEN, "--run", RUN, "-k", "5,10", "--json"]
    code, out, _ = run_eval(capsys, *base, "--fail-under", "R@5=0.9", "--fail-under", "MRR=0.5")
    repeated = json.loads(out)
    code_comma, out, _ = run_eval(capsys, *base, "--fail-under", "R@5=0.9,MRR=0.5")
    assert code == code_comma == 1
    assert json.loads(out) == repeated
    r5, mrr = repeated["fail_under"]
    mean = repeated["runs"]["seed"]["mean"]
    assert (r5["measure"], r5["value"], r5["floor"]) == ("R@5", mean["R@5"], 0.9)
    assert (r5["passed"], r5["failed_on"], r5["interval_low"]) == (False, "mean", None)
    assert (mrr["value"], mrr["passed"], mrr["failed_on"]) == (mean["MRR"], True, None)
    code, out, _ = run_eval(capsys, *base)
    assert code == 0 and "fail_under" not in json.loads(out)  # the contract's keys only


def test_the_estimate_fails_a_floor_the_judged_set_clears(capsys, seed_covered):
    floor = "R@10=0.9"  # R@10 = 1.000 clears it; the interval's mean low end (1+1+1+8/16)/4 not
    code, out, err = run_eval(
        capsys, "--qrels", GOLDEN, "--run", RUN, "--fail-under", floor, "--assume-complete"
    )
    assert code == 0
    code, out, err = run_eval(capsys, "--qrels", seed_covered, "--run", RUN, "--fail-under", floor)
    assert code == 1
    out = " ".join(out.split())  # notes wrap to the terminal's width
    assert (
        "seed: R@10 = 1.0000 against the judged set, but the lower end of its interval under "
        "the estimated |Rel| is 0.8750 (mean over 4 measured queries), below the floor 0.9: with "
        "a coverage estimate the lower end must clear the floor"
    ) in out
    code, out, _ = run_eval(
        capsys, "--qrels", seed_covered, "--run", RUN, "--json", "--fail-under", floor
    )
    report = json.loads(out)
    mean = report["runs"]["seed"]["mean"]
    assert mean["R@10"] == 1.0 and mean["R@10_low"] < 0.9
    assert mean["R@10_low"] == pytest.approx((3 + 8 / Q_BROAD_COVERAGE["est_rel_high"]) / 4)
    (check,) = report["fail_under"]
    assert (check["interval_low"], check["failed_on"]) == (mean["R@10_low"], "interval_low")


def test_the_demo_golden_set_a_perfect_ranking_of_its_judged_set_still_fails(capsys, tmp_path):
    # Ranking every judged relevant document of golden/demo.yaml first gives R@20 = 1 against
    # the judged set; its coverage estimate says the pool missed many, so the low end fails.
    from workbench.formats import read_golden

    golden = read_golden(DEMO)
    lines = []
    for qid, judged in golden.qrels.items():
        ranked = sorted(judged, key=lambda d: (-judged[d], d))
        lines += [f"{qid} Q0 {d} {r} {100 - r} oracle\n" for r, d in enumerate(ranked, 1)]
    run = tmp_path / "oracle.run"
    run.write_text("".join(lines), encoding="utf-8")
    code, out, _ = run_eval(
        capsys, "--qrels", DEMO, "--run", run, "-k", "20", "--json", "--fail-under", "R@20=0.9"
    )
    report = json.loads(out)
    (check,) = report["fail_under"]
    assert code == 1 and check["value"] == 1.0
    assert check["interval_low"] == report["runs"]["oracle"]["mean"]["R@20_low"] < 0.9
    assert check["measured_queries"] == len(golden.queries)


@pytest.mark.parametrize(
    "spec",
    ["R@10", "R@10=abc", "R@10=2", "R@10=-0.1", "X@10=0.5", "R@20=0.5", "MRR@10=0.5", "R=0.5",
     "R@10=0.5,R@10=0.6", ""],
)  # fmt: skip
def test_bad_specs_exit_2_naming_the_option(capsys, spec):
    code, out, err = run_eval(capsys, "--qrels", GOLDEN, "--run", RUN, "--fail-under", spec)
    assert code == 2 and out == ""
    assert err.startswith("error: --fail-under") and "Traceback" not in err


def test_fail_under_is_refused_with_judge(capsys):
    code, _, err = run_eval(
        capsys, "--qrels", GOLDEN, "--run", RUN, "--judge", "m", "--fail-under", "P@10=0.5"
    )
    assert code == 2 and "--fail-under: not with --judge" in err


# --- assert_eval(min=...) keeps the same rule ----------------------------------------------------


def test_assert_eval_holds_recall_to_the_interval_low(seed_covered):
    # no estimate, the assumption stated: 1.0 clears it
    workbench.assert_eval(GOLDEN, RUN, k=10, min={"R@10": 0.9}, assume_complete=True)
    with pytest.raises(AssertionError) as failed:
        workbench.assert_eval(seed_covered, RUN, k=10, min={"R@10": 0.9})
    message = str(failed.value)
    assert message.startswith("seed: R@10 = 1.0000 against the judged set, but the lower end")
    assert "R@10 (est. |Rel|)" in message  # then the audit, with the interval column
    report = workbench.assert_eval(seed_covered, RUN, k=10, min={"R@10": 0.8})
    assert report.floors[0].interval_low == pytest.approx(0.875) and report.floors[0].passed


def test_assert_eval_refuses_a_floor_it_cannot_check():
    with pytest.raises(InputError) as raised:
        workbench.assert_eval(GOLDEN, RUN, k=5, min={"R@50": 0.1, "P@5": 1.5})
    assert raised.value.problems == [
        "min['R@50'] = 0.1: k = 50 is not evaluated (k = 5)",
        "min['P@5'] = 1.5: the floor must be in [0, 1] (every measure is a fraction)",
    ]


def test_a_measure_is_read_as_compare_reads_it_whatever_its_case_or_leading_zeros(capsys):
    code, out, _ = run_eval(capsys, "--qrels", GOLDEN, "--run", RUN, "-k", "5",
                            "--fail-under", "r@005=0.99,ndcg@5=0.1")  # fmt: skip
    assert code == 1  # R@5 0.625 is held to the floor, not called undefined
    assert "seed: R@5 = 0.6250, below the floor 0.99" in out and "undefined" not in out
    code, _, err = run_eval(capsys, "--qrels", GOLDEN, "--run", RUN, "-k", "5",
                            "--fail-under", "R@5=0.5,r@05=0.6")  # fmt: skip
    assert code == 2 and "R@5 is given a floor twice" in err
    with pytest.raises(AssertionError) as failed:
        workbench.assert_eval(GOLDEN, RUN, k=5, min={"nDCG@005": 0.99})
    assert str(failed.value).startswith("seed: nDCG@5 = 0.7")
