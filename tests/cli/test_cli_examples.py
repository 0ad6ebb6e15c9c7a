"""Every command's --help ends with an example (sqlite-utils' habit), in one place
(`workbench.cli.EXAMPLES`), and every example parses with its command's own parser; the command
reference shows them too. A person is `--annotator` everywhere: `--as` still works, unshown."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from workbench.cli import COMMANDS, EXAMPLES, _with_project_file, build_parser, main
from workbench.docs_reference import command_page

ROOT = Path(__file__).resolve().parents[2]


def command_parser(name: str) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    parser = build_parser(only=name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, sub.choices[name]


def test_every_command_has_examples_and_only_commands_do() -> None:
    assert set(EXAMPLES) == set(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_help_ends_with_the_examples(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([name, "--help"])
    out = capsys.readouterr().out
    assert "\nExample:\n" in out or "\nExamples:\n" in out
    for example in EXAMPLES[name]:
        assert f"  {example}\n" in out  # one a line, as written: never wrapped
    if name == "pool":  # its project file does not make its own options look optional
        assert "usage: workbench pool [-h] --corpus CORPUS" in out


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_example_parses_with_its_command(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # `pool --db study.db` takes the rest from ./workbench.toml
    (tmp_path / "workbench.toml").write_text(
        '[pool]\ncorpus = "corpora/demo/docs"\nqueries = "corpora/demo/queries.jsonl"\n'
    )
    for example in EXAMPLES[name]:
        words = shlex.split(example.split(" | ")[0], comments=True)
        assert words[:2] == ["workbench", name]
        parser, _ = command_parser(name)
        args = parser.parse_args(_with_project_file(parser, name, words[1:]))
        assert args.command == name


def test_the_reference_shows_every_example() -> None:
    page = command_page()
    for examples in EXAMPLES.values():
        for example in examples:
            assert f"\n{example}\n" in page


@pytest.mark.parametrize("name", ["import-labels", "judge-model", "judge-llm"])
def test_as_is_a_hidden_spelling_of_annotator(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, parser = command_parser(name)
    given = {"import-labels": ["labels.qrels"], "judge-model": [],
             "judge-llm": ["--endpoint", "http://x/v1", "--model", "m"]}[name]  # fmt: skip
    base = [*given, "--db", "s.db"]
    assert parser.parse_args([*base, "--as", "bob"]).name == "bob"
    assert parser.parse_args([*base, "--annotator", "bob"]).name == "bob"
    assert "--as" not in parser.format_help()
    assert "--annotator NAME" in parser.format_help()
    with pytest.raises(SystemExit):
        parser.parse_args(base)  # one of them is required
    assert "--annotator is required" in capsys.readouterr().err
