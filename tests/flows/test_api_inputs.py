"""The Python API's inputs get the CLI's rules (issue 42, item 5): one validation at its door,
`InputError` naming the argument (and the query and document), the CLI's bounds. Explicit cases
from the issue, then hypothesis over every public function's arguments: a report whose figures
are fractions, an AssertionError from a floor, or an InputError; never another exception."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import workbench
from workbench.api import GoldenSet, load_golden
from workbench.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden" / "seed-example.yaml"
RUN = ROOT / "golden" / "seed-example.run"
QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}}
SCORES = {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"d": 1.0}}


def refused(call, *args, **kwargs) -> str:
    """The InputError's lines of `call(*args, **kwargs)`, which must raise one."""
    with pytest.raises(InputError) as caught:
        call(*args, **kwargs)
    return "\n".join(caught.value.problems)


def test_a_nan_score_is_refused_naming_the_query_and_document() -> None:
    """It gave nDCG@2 1.140 and judged@2 1.5, and a floor of 1.0 passed."""
    run = {"q1": {"a": math.nan, "b": 2.0}, "q2": {"d": 1.0}}
    said = refused(workbench.evaluate, QRELS, run, k=2)
    assert "run" in said and "'q1'" in said and "'a'" in said and "nan" in said
    refused(workbench.assert_eval, QRELS, run, k=2, min={"nDCG@2": 1.0}, require_complete=True)


@pytest.mark.parametrize(
    ("argument", "value"),
    [("k", 2.5), ("k", None), ("k", "10"), ("k", 0), ("k", []), ("k", True), ("k", 10**30),
     ("k", [5, 0]), ("k", -1), ("rel_threshold", math.nan), ("rel_threshold", 0),
     ("rel_threshold", "1"), ("rel_threshold", True), ("complete_at", math.nan),
     ("complete_at", 1.5), ("complete_at", "0.9"), ("gain", "bogus"), ("gain", None)],
)  # fmt: skip
def test_an_option_outside_the_clis_rules_is_refused_by_name(argument: str, value) -> None:
    said = refused(workbench.evaluate, QRELS, SCORES, **{argument: value})
    assert said.startswith(argument), said


@pytest.mark.parametrize(
    ("qrels", "run", "names"),
    [(None, SCORES, "qrels"), (b"x.qrels", SCORES, "qrels"), (QRELS, 5, "run"),
     (QRELS, None, "run"), (QRELS, b"x.run", "run"), (QRELS, [b"x.run"], "run"),
     (QRELS, [], "run"), ({"q1": {"a": "2"}}, SCORES, "qrels['q1']['a']"),
     ({"q1": {"a": None}}, SCORES, "qrels['q1']['a']"), ({"q1": {"a": 1j}}, SCORES, "qrels"),
     ({"q1": {"a": 1.0}}, SCORES, "qrels['q1']['a']"), ({"q1": {"a": True}}, SCORES, "qrels"),
     ({"q1": [1]}, SCORES, "qrels['q1']"), ({1: {"a": 1}}, SCORES, "qrels"),
     ({"q1": {"a b": 1}}, SCORES, "qrels['q1']"), (QRELS, {"q1": {"a": "3"}}, "run['q1']['a']"),
     (QRELS, {"q1": {"a": None}}, "run['q1']['a']"), (QRELS, {"q1": {"a": 1j}}, "run"),
     (QRELS, {"q1": {"a": math.inf}}, "run['q1']['a']"), (QRELS, {"q1": {"a": 10**400}}, "run"),
     (QRELS, {"q1": {"a": True}}, "run['q1']['a']"), (QRELS, {"q1": 5}, "run['q1']"),
     (QRELS, {"": SCORES}, "run"), (QRELS, {"s": {"q1": {"a": math.nan}}}, "run['s']['q1']")],
)  # fmt: skip
def test_unusable_data_is_refused_naming_where(qrels, run, names: str) -> None:
    said = refused(workbench.evaluate, qrels, run, k=2)
    assert names in said, said


def test_assert_eval_refuses_what_it_cannot_take() -> None:
    assert "min" in refused(workbench.assert_eval, QRELS, SCORES, 2, min=5)
    assert "require_complete" in refused(
        workbench.assert_eval, QRELS, SCORES, 2, require_complete="yes"
    )
    assert "rel_treshold" in refused(workbench.assert_eval, QRELS, SCORES, 2, rel_treshold=2)
    assert "path" in refused(load_golden, b"golden.yaml")
    assert "path" in refused(load_golden, None)


def test_what_the_api_takes_still_works() -> None:
    """Numbers of other types that are whole or real (numpy's too) are taken as such."""
    np = pytest.importorskip("numpy")
    qrels = {"q1": {"a": np.int64(2), "b": 0}}
    run = {"q1": {"a": np.float32(0.5), "b": 1}}
    report = workbench.evaluate(qrels, run, k=(1, 2), rel_threshold=1, gain="exponential",
                                complete_at=0.9)  # fmt: skip
    assert report.runs["run"].mean.values["P@2"] == pytest.approx(0.5)
    assert workbench.evaluate(GOLDEN, [RUN, os.fspath(RUN)], k=[5, 5]).k == 5


FRACTIONS = ("P@", "R@", "nDCG@", "MRR", "bpref", "judged@", "ceiling", "pct_of_ceiling")
HOSTILE_NUMBERS = [
    0, 1, 2, 3, -1, 1.0, 2.5, math.nan, math.inf, -math.inf, True, False, None, "2", "", 1j,
    10**30, 10**400, -(10**30), b"1", [], {}, (1,), 1e308,
]  # fmt: skip
IDS = ["q1", "q2", "a", "b", "", "a b", "\x1b[2J", "#c", 5, None, "d\u200b", "e\u0301"]


def _report_is_sane(report) -> None:
    for run in report.runs.values():
        for figures in [run.mean.values, *(q.values for q in run.per_query.values())]:
            for key, value in figures.items():
                if value is not None and key.startswith(FRACTIONS):
                    assert 0 <= value <= 1 or key.startswith("pct_of"), (key, value)
                    assert math.isfinite(value), (key, value)


mappings = st.dictionaries(
    st.sampled_from(IDS),
    st.one_of(
        st.dictionaries(st.sampled_from(IDS), st.sampled_from(HOSTILE_NUMBERS), max_size=4),
        st.sampled_from(HOSTILE_NUMBERS),
    ),
    max_size=3,
)
qrels_values = st.one_of(
    mappings, st.sampled_from([QRELS, None, 5, b"x", str(GOLDEN), GOLDEN, "missing.qrels"])
)
run_values = st.one_of(
    mappings,
    st.dictionaries(st.sampled_from(["s", "t", ""]), mappings, max_size=2),
    st.sampled_from([SCORES, None, 5, b"x", str(RUN), RUN, [RUN], [], [b"x"], [5], "nope.run"]),
)
k_values = st.one_of(
    st.sampled_from([1, 2, 5, 10, 0, -1, True, 2.5, None, "10", 10**30, 10**9, 10**9 + 1, []]),
    st.lists(st.sampled_from([1, 3, 0, 2.5, True, "1"]), max_size=3),
)
options = st.fixed_dictionaries(
    {},
    optional={
        "rel_threshold": st.sampled_from([1, 2, 0, -1, math.nan, 1.5, True, "1", None, 10**30]),
        "gain": st.sampled_from(["linear", "exponential", "bogus", None, 5]),
        "complete_at": st.sampled_from([None, 0.9, 1, 0, 1.5, math.nan, math.inf, "0.9", True]),
    },
)
floors = st.one_of(
    st.none(), st.sampled_from([5, "R@5"]),
    st.dictionaries(st.sampled_from(["R@5", "nDCG@2", "P@1", "bogus", "MRR"]),
                    st.sampled_from([0.0, 0.5, 1.0, math.nan, 1.5, "0.5", None]), max_size=2),
)  # fmt: skip
GOLDEN_SET: list[GoldenSet] = []


@settings(max_examples=int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(
    function=st.sampled_from(["evaluate", "assert_eval", "golden.evaluate", "golden.check"]),
    qrels=qrels_values, run=run_values, k=k_values, options=options, floors=floors,
    complete=st.sampled_from([False, True, "yes", None]),
)  # fmt: skip
def test_every_public_function_takes_any_argument_or_says_why(
    function, qrels, run, k, options, floors, complete
) -> None:
    if not GOLDEN_SET:
        GOLDEN_SET.append(load_golden(GOLDEN))
    golden = GOLDEN_SET[0]
    calls = {
        "evaluate": lambda: workbench.evaluate(qrels, run, k, **options),
        "assert_eval": lambda: workbench.assert_eval(qrels, run, k, floors, complete, **options),
        "golden.evaluate": lambda: golden.evaluate(run, k, **options),
        "golden.check": lambda: golden.check(run, k, floors, complete, **options),
    }
    try:
        report = calls[function]()
    except InputError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        event("InputError")
        return
    except AssertionError as exc:
        assert function in ("assert_eval", "golden.check") and str(exc)
        event("AssertionError")
        return
    event("report")
    _report_is_sane(report)


@given(path=st.sampled_from([None, 5, b"golden.yaml", "", "missing.yaml", str(RUN), GOLDEN]))
def test_load_golden_takes_any_path_or_says_why(path) -> None:
    try:
        assert isinstance(load_golden(path), GoldenSet)
    except InputError as exc:
        assert exc.problems
