"""The pytest plugin (entry point `workbench` in pytest11; `-p no:workbench` turns it off): the
`workbench_golden` fixture, a golden.yaml read once per test session, whose
`.check(run, k=10, min={"R@10": 0.8})` fails a test with the audit as its message.

The golden.yaml comes from `--workbench-golden PATH` (relative to where pytest was started),
else the ini setting `workbench_golden = PATH` (relative to the ini file). Nothing of workbench
beyond this module is imported until a test asks for the fixture, so a session that never
does pays nothing and cannot be broken by it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from workbench.api import GoldenSet

OPTION = "--workbench-golden"
INI = "workbench_golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("workbench", "workbench: retrieval evaluation with an audit")
    group.addoption(
        OPTION,
        dest="workbench_golden",
        metavar="PATH",
        default=None,
        help=f"golden.yaml the workbench_golden fixture reads (overrides the ini's {INI})",
    )
    parser.addini(INI, help="golden.yaml the workbench_golden fixture reads (relative to the file)")


def golden_path(config: pytest.Config) -> tuple[Path, str] | None:
    """Where the golden.yaml is, and which setting said so; None when neither is set."""
    given = config.getoption("workbench_golden")
    if given:
        return config.invocation_params.dir / given, OPTION
    ini = str(config.getini(INI) or "").strip()
    if ini:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return base / ini, f"{INI} in {config.inipath or 'the ini file'}"
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    found = golden_path(config)
    return f"workbench golden: {found[0]} ({found[1]})" if found else None


@pytest.fixture(scope="session")
def workbench_golden(pytestconfig: pytest.Config) -> GoldenSet:
    """The golden.yaml of `--workbench-golden` or the `workbench_golden` ini setting, read once
    per session (per worker under xdist): `.check(run, k, min=..., require_complete=...,
    assume_complete=...)` (a golden.yaml without its coverage summary fails `min` and
    `require_complete` unless `assume_complete=True` states that it is complete),
    `.evaluate(run, k)`, `.queries`. A missing or broken file fails each test that asks for it
    with the file's problems, one per line."""
    found = golden_path(pytestconfig)
    if found is None:
        pytest.fail(
            f"workbench_golden: no golden.yaml given: pass {OPTION} PATH, or set "
            f"`{INI} = PATH` in the ini file ([pytest] in pytest.ini, or "
            "[tool.pytest.ini_options] in pyproject.toml)",
            pytrace=False,
        )
    path, source = found
    from workbench.api import load_golden
    from workbench.core.display import visible
    from workbench.core.errors import InputError

    try:
        return load_golden(path)
    except InputError as exc:
        problems = exc.problems
    # Failed after the `except`, so that pytest prints the problems, not a chained traceback.
    listed = "\n".join(f"  {problem}" for problem in problems)
    where = visible(f"{path} (from {source})", one_line=True)
    pytest.fail(f"workbench_golden: {where} is unusable:\n{listed}", pytrace=False)
