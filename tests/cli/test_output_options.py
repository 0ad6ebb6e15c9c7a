"""How a command prints is declared once (`commands.add_output_options`) and read once
(`commands.output_format`): every command that prints a report takes --json, the ones with more
formats take --format, and --json beside another --format is refused by name."""

from __future__ import annotations

import argparse
import importlib

import pytest

from workbench.cli import COMMANDS, main

PRINTING = ("agree", "assign", "compare", "coverage", "eval", "import-labels", "judge-model",
            "pool", "position-bias")  # fmt: skip
FORMATS = ("agree", "compare", "coverage", "eval")


def options_of(command: str) -> set[str]:
    parser = argparse.ArgumentParser()
    importlib.import_module("workbench.commands." + command.replace("-", "_")).configure(parser)
    return {option for action in parser._actions for option in action.option_strings}


@pytest.mark.parametrize("command", PRINTING)
def test_every_printing_command_takes_json(command: str) -> None:
    assert command in COMMANDS
    options = options_of(command)
    assert "--json" in options
    assert ("--wide" in options) == (command in FORMATS)
    if command in FORMATS:
        assert "--format" in options


def test_json_beside_another_format_is_refused(tmp_path, capsys) -> None:
    qrels = tmp_path / "q.tsv"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "r.tsv"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    args = ["eval", "--qrels", str(qrels), "--run", str(run)]
    assert main([*args, "--json", "--format", "markdown"]) == 2
    assert "--json and --format markdown: give one of them" in capsys.readouterr().err
    assert main([*args, "--json", "--format", "json"]) == 0
    assert capsys.readouterr().out.startswith("{")
