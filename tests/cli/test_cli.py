"""The dispatcher: every listed command loads and shows its help; eval stays light."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from workbench.cli import COMMANDS, build_parser, main
from workbench.commands import finite_number
from workbench.commands.eval import MAX_CUTOFF


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


def _options() -> list[tuple[list[str], argparse.Action]]:
    """Every option of every command (subcommands' too), as (the argv before it, it)."""
    found = []
    for command in sorted(COMMANDS):
        stack = [([command], build_parser(command)._subparsers._group_actions[0].choices[command])]
        while stack:
            prefix, parser = stack.pop()
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    stack += [([*prefix, name], sub) for name, sub in action.choices.items()]
                else:
                    found.append((prefix, action))
    return found


NUMBER_OPTIONS = [
    (prefix, action.option_strings[-1])
    for prefix, action in _options()
    if action.type is float or action.type is finite_number  # a number that is not a count
]


def test_rel_threshold_says_its_default_in_every_command() -> None:
    helps = {
        " ".join(prefix): action.help % {"default": action.default}
        for prefix, action in _options()
        if "--rel-threshold" in action.option_strings
    }
    assert {"eval", "compare", "coverage", "export", "report", "agree", "judge", "pool"} <= set(
        helps
    )
    ending = "(default: the study's, set by `pool --rel-threshold`; else 1)"
    assert all(text.endswith(ending) for text in helps.values()), helps


def test_the_number_options_are_found() -> None:
    flags = {flag for _, flag in NUMBER_OPTIONS}
    assert {"--complete-at", "--alpha", "--overlap", "--target-width", "--holdout"} <= flags


@pytest.mark.parametrize(("prefix", "flag"), NUMBER_OPTIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_every_number_option_refuses_nan_and_inf_alike(capsys, prefix, flag, value) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*prefix, f"{flag}={value}"])  # "=": -inf would read as an option
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: {value!r} is not a finite number" in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--qrels", "q.qrels", "--run", "r.run", "-k"],
        ["compare", "--qrels", "q.qrels", "--run", "r.run", "--run", "s.run", "-k"],
        ["report", "--db", "s.db", "-o", "x.html", "-k"],
        ["coverage", "--db", "s.db", "-k"],
        ["eval", "--qrels", "q.qrels", "--stage1", "r.run", "--stage2", "r.run", "--fetch-k"],
    ],
)
@pytest.mark.parametrize("depth", [MAX_CUTOFF + 1, 2**62 + 1, 2**63 - 1])
def test_a_cutoff_beyond_max_cutoff_is_refused_by_name(
    tmp_path, monkeypatch, capsys, argv, depth
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([*argv, str(depth)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {argv[-1]}") and str(depth) in err, err
    assert not list(tmp_path.iterdir()), "something was written"


def test_a_cutoff_of_max_cutoff_is_scored(tmp_path, capsys) -> None:
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d3 2 1.0 r\n", encoding="utf-8")
    argv = ["eval", "--qrels", str(tmp_path / "q.qrels"), "--run", str(tmp_path / "r.run")]
    assert main([*argv, "-k", str(MAX_CUTOFF), "--json"]) in (0, 1)
    assert '"R@1000000000"' in capsys.readouterr().out
