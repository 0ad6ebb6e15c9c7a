"""The pytest plugin (workbench/pytest_plugin.py, entry point pytest11 `workbench`), driven
through pytester as a user's own test session: the `workbench_golden` fixture, its `.check`
failing with the audit, broken or missing golden.yaml files, and a session that never asks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from seed_example import seed_golden_with_coverage

import workbench.api  # noqa: F401
import workbench.formats  # noqa: F401
import workbench.formats.golden  # noqa: F401  (its reader and PyYAML's C parser, see below)
import workbench.pytest_plugin  # noqa: F401

# workbench (and PyYAML) imported above, before any in-process run: pytester drops the modules
# a run imported, and PyYAML's C parser, imported a second time, no longer knows its events.
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden" / "seed-example.yaml"
RUN = ROOT / "golden" / "seed-example.run"
OTHERS_OFF = ("-p", "no:textual-snapshot")
"""The suite's own snapshot plugin, left out of the sessions these tests start: it imports
textual as it loads, and its session-wide temporary folder is removed by the first inner
session to finish. A user's session has the plugins they installed; workbench's is measured."""

USER_TESTS = """
def test_the_retriever_keeps_its_floors(workbench_golden):
    workbench_golden.check("seed.run", k=5, min={"R@5": 0.6, "nDCG@5": 0.7},
                           require_complete=True, assume_complete=True)

def test_it_reaches_a_floor_it_cannot(workbench_golden):
    workbench_golden.check("seed.run", k=5, min={"R@5": 0.99}, assume_complete=True)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user's project: the seed golden set and run beside the tests, the ini naming it."""
    shutil.copy(GOLDEN, pytester.path / "golden.yaml")
    shutil.copy(RUN, pytester.path / "seed.run")
    pytester.makeini("[pytest]\nworkbench_golden = golden.yaml\n")
    return pytester


def test_a_floor_passes_and_one_fails_with_the_audit(project: pytest.Pytester):
    project.makepyfile(test_retrieval=USER_TESTS)
    result = project.runpytest(*OTHERS_OFF)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "workbench golden: *golden.yaml (workbench_golden in *)",
        ">       workbench_golden.check(\"seed.run\", k=5, min={\"R@5\": 0.99}, "
        "assume_complete=True)",
        "E       AssertionError: seed: R@5 = 0.6250, below the floor 0.99",
        "E       query       |Rel|    P@5    R@5  ceil@5  of ceil  nDCG@5 *",
        "E       mean (4 q)   4.25  0.500  0.625   0.906      70%   0.741 *",
        "E       problems: 0 error(s), 4 warning(s)",
        "E         warning ?unjudged_in_top_k? q_faw: 3 of the top 5 unjudged (x3 p1 d2)*",
    ])  # fmt: skip
    output = result.stdout.str()
    assert "workbench/api.py" not in output  # the user's line, not our frames
    assert "GoldenSet('" in output and "Golden(name=" not in output  # a short repr


def test_a_floor_never_passes_on_a_golden_set_nothing_measured(project: pytest.Pytester):
    """The seed golden.yaml has no coverage summary: a floor it clears passed (where its
    store fails); it fails now, saying what would measure it, until the assumption is stated."""
    project.makepyfile(
        test_unmeasured="""
        def test_floor(workbench_golden):
            workbench_golden.check("seed.run", k=5, min={"R@5": 0.6})
        """
    )
    result = project.runpytest(*OTHERS_OFF)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: all runs: the judgments: these judgments carry no "
        "completeness measure*--qrels study.db*--assume-complete*",
    ])  # fmt: skip


def test_the_interval_low_fails_a_floor_in_a_users_test(project: pytest.Pytester):
    seed_golden_with_coverage(
        GOLDEN.read_text(encoding="utf-8"), project.path / "golden.yaml", every_query=True
    )
    project.makepyfile(
        test_recall="""
        def test_recall(workbench_golden):
            workbench_golden.check("seed.run", k=10, min={"R@10": 0.9})
        """
    )
    result = project.runpytest(*OTHERS_OFF)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: seed: R@10 = 1.0000 against the judged set, but the lower end "
        "of its interval under the estimated |Rel| is 0.8750 (mean over 4 measured queries), "
        "below the floor 0.9: with a coverage estimate the lower end must clear the floor",
    ])  # fmt: skip


def test_require_complete_fails_where_no_query_is_measured(project: pytest.Pytester):
    """A golden.yaml whose coverage summary (as a static pool without `--sample` exports it)
    measures no query: `require_complete` fails, saying what would measure each; a check
    without it passes."""
    golden = GOLDEN.read_text(encoding="utf-8")
    rows = "".join(
        f"    {qid}: {{relevant: {n}, sampled: 0, to_estimate: null, status: unmeasured}}\n"
        for qid, n in (("q_faw", 3), ("q_store", 3), ("q_milk", 3), ("q_broad", 8))
    )
    summary = f"coverage:\n  policy: static\n  queries:\n{rows}  thresholds: {{complete_at: 0.8}}\n"
    assert "\ncoverage: null\n" in golden
    (project.path / "golden.yaml").write_text(
        golden.replace("\ncoverage: null\n", "\n" + summary), encoding="utf-8"
    )
    project.makepyfile(
        test_complete="""
        def test_complete(workbench_golden):
            workbench_golden.check("seed.run", k=5, require_complete=True)

        def test_floor_only(workbench_golden):
            workbench_golden.check("seed.run", k=5, min={"nDCG@5": 0.7})
        """
    )
    result = project.runpytest(*OTHERS_OFF)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: seed: 4 errors ?unmeasured_coverage? (require_complete): q_*; "
        "the first (q_*): completeness unmeasured (a static pool without a sample outside it)*"
        "pool with --sample N*",
    ])  # fmt: skip


def test_the_golden_set_is_read_once_per_session(project: pytest.Pytester):
    project.makepyfile(
        test_once="""
        seen = []

        def test_first(workbench_golden):
            seen.append(workbench_golden)
            assert [q.query_id for q in workbench_golden.queries] == [
                "q_faw", "q_store", "q_milk", "q_broad"]

        def test_second(workbench_golden):
            assert workbench_golden is seen[0]
            report = workbench_golden.evaluate({"q_faw": {"m1": 2.0, "m2": 1.0}}, k=2)
            assert report.runs["run"].per_query["q_faw"].values["P@2"] == 1.0
        """
    )
    project.runpytest(*OTHERS_OFF).assert_outcomes(passed=2)


def test_the_option_overrides_the_ini_from_where_pytest_runs(project: pytest.Pytester):
    project.makepyfile(test_retrieval=USER_TESTS)
    (project.path / "elsewhere").mkdir()
    shutil.copy(GOLDEN, project.path / "elsewhere" / "other.yaml")
    (project.path / "golden.yaml").unlink()  # the ini's path is gone: the option must win
    chosen = ("--workbench-golden", "elsewhere/other.yaml", "-k", "keeps")
    result = project.runpytest(*OTHERS_OFF, *chosen)
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["workbench golden: *other.yaml (--workbench-golden)"])


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "*golden.yaml: no such file"),
        ("schema: workbench-golden\nversion: 1\nname: x\nbogus: 1\n", "*golden.yaml:4: bogus*"),
        ("q1 0 d1 1\n", "*golden.yaml*"),  # TREC qrels under the golden name
    ],
)
def test_a_missing_or_broken_golden_set_is_a_clear_error(
    project: pytest.Pytester, content: str | None, problem: str
):
    path = project.path / "golden.yaml"
    if content is None:
        path.unlink()
    else:
        path.write_text(content, encoding="utf-8")
    project.makepyfile(test_retrieval=USER_TESTS)
    result = project.runpytest(*OTHERS_OFF)
    result.assert_outcomes(errors=2)  # both tests, from one attempt at the session fixture
    result.stdout.fnmatch_lines([
        "workbench_golden: *golden.yaml (from workbench_golden in *) is unusable:",
        f"  {problem}",
    ])  # fmt: skip
    output = result.stdout.str()
    assert "Traceback" not in output and "During handling" not in output
    assert "pytest_plugin.py" not in output


def test_without_a_setting_the_plugin_stays_out_of_the_way(pytester: pytest.Pytester):
    pytester.makepyfile(
        test_other="""
        import sys

        def test_unrelated():
            loaded = {m for m in sys.modules if m.split(".")[0] == "workbench"}
            assert loaded == {"workbench", "workbench.pytest_plugin"}, loaded
            heavy = {"yaml", "numpy", "textual", "rich", "torch", "psycopg", "sqlite3"}
            assert not heavy & set(sys.modules), heavy & set(sys.modules)
        """,
        test_asks="""
        def test_asks(workbench_golden):
            pass
        """,
    )
    # A fresh interpreter: what this session imported cannot hide what the plugin would.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *OTHERS_OFF)
    result.assert_outcomes(passed=1, errors=1)
    assert "workbench golden:" not in result.stdout.str()
    result.stdout.fnmatch_lines([
        "workbench_golden: no golden.yaml given: pass --workbench-golden PATH, or set "
        "`workbench_golden = PATH` in the ini file*",
    ])  # fmt: skip
    assert "Traceback" not in result.stdout.str()
    disabled = pytester.runpytest_subprocess(
        "-p", "no:workbench", *OTHERS_OFF, "test_other.py"
    )
    disabled.assert_outcomes(failed=1)  # the plugin is what loads its module: it is active
