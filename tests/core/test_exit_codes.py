"""The exit statuses are named once (`ExitCode`) and every error maps to one (`exit_code_for`)."""

from __future__ import annotations

import errno
import subprocess
import sys

import pytest

from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode, exit_code_for


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InputError(["x.tsv:3: bad grade"]), ExitCode.USAGE),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED),
        (BrokenPipeError(errno.EPIPE, "Broken pipe"), ExitCode.BROKEN_PIPE),
        (OSError(errno.ENOSPC, "No space left on device"), ExitCode.USAGE),
        (OSError(errno.ENOSPC, "No space left on device", "out.tsv"), ExitCode.INTERNAL),
        (ValueError("a bug"), ExitCode.INTERNAL),
    ],
)
def test_each_error_has_one_status(error: BaseException, code: ExitCode) -> None:
    assert exit_code_for(error) is code


def test_the_statuses_are_the_documented_numbers() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 70, 130, 141]


def test_a_full_stdout_is_the_users_environment_not_a_bug(tmp_path) -> None:
    qrels = tmp_path / "q.tsv"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "r.tsv"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "eval", "--qrels", str(qrels)]
            + ["--run", str(run)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == ExitCode.USAGE
    assert "stdout: cannot write" in done.stderr
    assert "Traceback" not in done.stderr
