"""The Python API a user's own tests call: workbench.evaluate and workbench.assert_eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import workbench
from workbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden" / "seed-example.yaml"
RUN = ROOT / "golden" / "seed-example.run"


def test_evaluate_gives_what_eval_json_prints(capsys):
    """The API gates as `eval --strict` does: the seed golden.yaml carries no coverage summary,
    an error there (and exit 1) as in Python."""
    report = workbench.evaluate(GOLDEN, RUN, k=5)
    argv = ["eval", "--qrels", str(GOLDEN), "--run", str(RUN), "-k", "5", "--json", "--strict"]
    assert main(argv) == 1
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(json.dumps(report.to_json())) == printed
    assert report.runs["seed"].mean.values["R@5"] == pytest.approx(0.625)  # the seed figure


def test_evaluate_takes_data_in_memory():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"d": 1.0}}
    report = workbench.evaluate(qrels, run, k=2)
    assert report.runs["run"].mean.values["P@2"] == pytest.approx((0.5 + 0.5) / 2)
    two = workbench.evaluate(qrels, {"a": run, "b": {"q1": {"c": 1.0}}}, k=[1, 2])
    assert set(two.runs) == {"a", "b"}


def test_assert_eval_fails_with_the_audit_as_its_message():
    floors = {"R@5": 0.6, "nDCG@5": 0.7}
    report = workbench.assert_eval(GOLDEN, RUN, k=5, min=floors, assume_complete=True)
    assert report.k == 5 and report.to_json()["assume_complete"] is True
    with pytest.raises(AssertionError) as failed:
        workbench.assert_eval(GOLDEN, RUN, k=5, min={"R@5": 0.99}, assume_complete=True)
    message = str(failed.value)
    assert "seed: R@5 = 0.6250, below the floor 0.99" in message
    assert "|Rel|" in message and "ceil@5" in message  # the audit follows the failing figure
    from workbench.core.errors import InputError

    with pytest.raises(InputError, match="k = 50 is not evaluated"):  # a typo, not a failure
        workbench.assert_eval(GOLDEN, RUN, k=5, min={"R@50": 0.1})


def test_a_floor_never_passes_on_judgments_nothing_measured():
    """The seed golden.yaml has no coverage summary (q_broad's relevant set is incomplete in
    truth): a floor it clears passed, where the same judgments with coverage fail; now it
    fails, saying what would measure it, until the assumption is stated."""
    with pytest.raises(AssertionError) as failed:
        workbench.assert_eval(GOLDEN, RUN, k=5, min={"R@5": 0.6})
    message = str(failed.value)
    assert "coverage_not_measured" in message and "--qrels study.db" in message
    qrels = {"q1": {"a": 1, "b": 0}}
    with pytest.raises(AssertionError, match="no completeness measure"):
        workbench.assert_eval(qrels, {"q1": {"a": 1.0}}, k=1, require_complete=True)
    workbench.assert_eval(qrels, {"q1": {"a": 1.0}}, k=1, require_complete=True,
                          assume_complete=True)  # fmt: skip


def test_require_complete_fails_on_an_error_of_the_audit():
    qrels = {"q1": {"a": 0, "b": 0}}
    run = {"q1": {"a": 1.0, "b": 0.5}}
    workbench.assert_eval(qrels, run, k=2)  # no floor, no completeness asked: passes
    with pytest.raises(AssertionError, match="q1"):
        workbench.assert_eval(qrels, run, k=2, require_complete=True, assume_complete=True)


def test_unusable_input_names_the_problem(tmp_path):
    from workbench.core.errors import InputError

    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 notagrade\n")
    with pytest.raises(InputError, match="bad.qrels"):
        workbench.evaluate(bad, RUN)


def test_many_failing_queries_read_as_one_line_naming_them():
    """Twelve incomplete queries are one line of the message (the audit below lists each)."""
    golden = ROOT / "golden" / "demo.yaml"
    with pytest.raises(AssertionError) as failed:
        workbench.assert_eval(golden, ROOT / "golden" / "demo-dense.run", k=10,
                              require_complete=True)
    head = str(failed.value).split("\n\n")[0].splitlines()
    assert len(head) == 1, head
    assert "12 errors [incomplete_judgments]" in head[0] and "and 2 more" in head[0]
    assert "the first (q01): judged relevant set incomplete" in head[0]


def test_require_complete_fails_on_a_denominator_not_measured(tmp_path):
    """A store whose queries have no estimate yet (their samples not judged): R@5 against the
    judged set is all it has, and `require_complete` does not pass on it."""
    from coverage_fixtures import RUN as SCORES
    from coverage_fixtures import build_store

    db = build_store(tmp_path / "unmeasured.db", judge_samples=False)
    run = {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in SCORES.items()}
    report = workbench.assert_eval(db, run, k=5)  # nothing asked: passes, with the errors
    assert {p.level for p in report.problems if p.code == "unmeasured_coverage"} == {"error"}
    with pytest.raises(AssertionError) as failed:
        workbench.assert_eval(db, run, k=5, require_complete=True)
    head = str(failed.value).split("\n\n")[0]
    assert "2 errors [unmeasured_coverage]" in head and "qa, qb" in head
    assert "judge ≈ 1 more of qa" in head
