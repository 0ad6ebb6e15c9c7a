"""The dispatcher: every listed command loads and shows its help; eval stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.cli import COMMANDS, main


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert command in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_python_dash_m_runs_the_same_cli():
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("workbench ")
