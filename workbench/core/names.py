"""The one rule for annotator names, checked where a name enters (every `--annotator`/`--as`),
so every name in a store survives golden.yaml, TREC files and the screens unchanged."""

from __future__ import annotations

import argparse
import re

NAME_RULE = (
    "1-64 characters: letters, digits, '_', and '.', '-', '@', '+' after the first character"
)
_NAME = re.compile(r"\w[\w.@+\-]{0,63}")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be an annotator's name, or None when it can."""
    if not name:
        return "a name is required (an empty name would read as every annotator)"
    if not _NAME.fullmatch(name):  # \w holds no control character
        from workbench.core.display import visible

        return f"{visible(name, one_line=True)!r} is not a valid name ({NAME_RULE})"
    return None


def annotator_name(value: str) -> str:
    """argparse `type=` for every option that takes an annotator's name (exit 2 on a bad one)."""
    problem = name_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


JUDGE_TEXT_RULE = "1-200 characters on one line, without control characters or outer spaces"


def judge_text(value: str) -> str:
    """argparse `type=` for a judge's model or prompt named by hand (`import-labels
    --judge-model`): text that reads back from golden.yaml and shows as it was written."""
    from workbench.core.display import CONTROL_CLASS, visible

    if (
        not value
        or len(value) > 200
        or value != value.strip()
        or re.search(f"[{CONTROL_CLASS}]", value)
    ):
        shown = visible(value[:60], one_line=True)
        raise argparse.ArgumentTypeError(f"{shown!r}: expected {JUDGE_TEXT_RULE}")
    return value
