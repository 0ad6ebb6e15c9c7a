"""The README is the newcomer's page and the docs site holds the rest: the README stays short
and its links resolve, CI runs the README's test command, and the command reference is written
from the real parsers (every command, every option)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from workbench.cli import COMMANDS
from workbench.docs_reference import _command_parsers, command_page

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_the_readme_is_at_most_30_kb():
    assert len(README.read_bytes()) <= 30_000


def test_every_relative_link_of_the_readme_names_a_file_of_the_repository():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local, "the README links into docs/"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert missing == []


def test_ci_runs_the_readmes_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in ci.splitlines() if line and not line.startswith(("#", " "))]
    assert commands[-1] == "make test"
    assert "make test" in README.read_text(encoding="utf-8")


def test_the_command_reference_has_every_command_and_every_option():
    page = command_page()
    for name in COMMANDS:
        assert f"\n## workbench {name}\n" in page
    entries = [line.split("`")[1] for line in page.splitlines() if line.startswith("- `")]
    listed = {word.strip(",") for entry in entries for word in entry.split()}
    for _, _, parser in _command_parsers():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.help is argparse.SUPPRESS:
                continue  # an old spelling kept working, hidden on purpose (`--as`)
            for option in action.option_strings:
                assert option in listed, option


def test_the_reference_gives_a_default_with_its_help():
    page = command_page()
    line = next(x for x in page.splitlines() if x.startswith("- `--rel-threshold G`"))
    assert "(default: the study's" in line and "else 1)" in line


def test_the_mkdocs_config_runs_the_reference_hook_and_lists_every_page():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "- workbench/docs_reference.py" in config
    for page in sorted((ROOT / "docs").rglob("*.md")):
        relative = page.relative_to(ROOT / "docs").as_posix()
        if relative != "reference/commands.md":  # generated, never a file in git
            assert f": {relative}\n" in config, relative
    assert ": reference/commands.md\n" in config
