"""`workbench.toml`'s table of a command's options (`[pool]`), put before the command line's
own: the command line always wins. Not a command: `workbench.cli` applies it before parsing.

A key is an option's long name without its dashes (`candidate-depth` or `candidate_depth`);
its value is typed as the option is: a string, an integer, a number, true/false for a flag, a
list of strings for a repeatable option. Anything else exits 2 naming the file, line and key.
Paths in it are read as on the command line (from the current directory)."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from workbench.commands import finite_number
from workbench.core.errors import InputError
from workbench.formats.project_file import PROJECT_FILE, read_project_table

NOT_IN_THE_FILE = ("--config", "--no-config", "--help")


def add_project_file_options(parser: argparse.ArgumentParser, table: str) -> None:
    """`--config FILE` and `--no-config`."""
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--config",
        metavar="FILE",
        help=f"the project file whose [{table}] table holds this command's options (default: "
        f"./{PROJECT_FILE} when there is one); an option on the command line overrides it",
    )
    chosen.add_argument(
        "--no-config", action="store_true", help=f"leave ./{PROJECT_FILE} unread"
    )


def with_project_file(parser: argparse.ArgumentParser, table: str, tokens: list[str]) -> list[str]:
    """`tokens` (the command's, after its name) with the project file's options before them,
    those the command line gives left out; InputError naming file, line and key."""
    given = given_options(parser, tokens)
    if given.get("no_config"):
        return tokens
    path = given.get("config")
    if path is None:
        if not Path(PROJECT_FILE).is_file():
            return tokens
        path = PROJECT_FILE
    found = read_project_table(str(path), table)
    added: list[str] = []
    problems: list[str] = []
    dests: dict[str, str] = {}
    for key, value in found.values.items():
        option = "--" + key.replace("_", "-")
        action = parser._option_string_actions.get(option)
        if action is None or option in NOT_IN_THE_FILE or action.help is argparse.SUPPRESS:
            problems.append(f"{found.where(key)}: [{table}] {key}: not an option of `workbench "
                            f"{table}`")  # fmt: skip
            continue
        if action.dest in dests:
            problems.append(f"{found.where(key)}: [{table}] {key}: {dests[action.dest]} again")
            continue
        dests[action.dest] = key
        if action.dest in given:
            continue  # the command line wins
        said = _tokens(action, option, value)
        if isinstance(said, str):
            problems.append(f"{found.where(key)}: [{table}] {key}: {said}")
        else:
            added += said
    if problems:
        raise InputError(problems)
    return added + tokens


def given_options(parser: argparse.ArgumentParser, tokens: list[str]) -> dict[str, object]:
    """The options the command line gives (by dest), whatever their defaults: parsed with no
    default and nothing required. Asked for help, or given a wrong token: `no_config` (the
    real parse prints the help or the error, with the usage as it is)."""
    if any(token == "-h" or (len(token) > 2 and "--help".startswith(token)) for token in tokens):
        return {"no_config": True}
    saved = [(a, a.default, a.required) for a in parser._actions]
    groups = [(g, g.required) for g in parser._mutually_exclusive_groups]
    try:
        for action in parser._actions:
            action.default, action.required = argparse.SUPPRESS, False
        for group in parser._mutually_exclusive_groups:
            group.required = False
        with contextlib.redirect_stderr(io.StringIO()):
            known, _ = parser.parse_known_args(tokens, argparse.Namespace())
    except SystemExit:  # a wrong command line: the real parse says so, with the real usage
        return {"no_config": True}
    finally:
        for action, default, required in saved:
            action.default, action.required = default, required
        for group, required in groups:
            group.required = required
    return {k: v for k, v in vars(known).items() if not k.startswith("_")}


def _tokens(action: argparse.Action, option: str, value: object) -> list[str] | str:
    """The option as command-line tokens, or what is wrong with the value."""
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        if not isinstance(value, bool):
            return f"{value!r} is not true or false"
        return [option] if value == action.const else []
    if isinstance(action, argparse._AppendAction):
        if not isinstance(value, list):
            return f'{value!r} is not a list (the option is repeatable: ["A", "B"])'
        out: list[str] = []
        for item in value:
            problem = _problem(action, item)
            if problem:
                return problem
            out.append(f"{option}={item}")  # `=`: a value that starts with '-' stays one
        return out
    if type(action) is not argparse._StoreAction or action.nargs is not None:
        return "not an option the project file can hold"
    return _problem(action, value) or [f"{option}={value}"]


def _problem(action: argparse.Action, value: object) -> str | None:
    """What is wrong with one value of the option (its type, its form, its choices)."""
    kind = _kind(action)
    fits = {
        "an integer": isinstance(value, int) and not isinstance(value, bool),
        "a number": isinstance(value, int | float) and not isinstance(value, bool),
        "a string": isinstance(value, str),
    }[kind]
    if not fits:
        return f"{value!r} is not {kind}"
    converted: object = str(value)
    if callable(action.type):
        try:
            converted = action.type(str(value))
        except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
            return str(exc) or f"{value!r} is not a value of this option"
    if action.choices is not None and converted not in action.choices:
        return f"{value!r} is not one of " + ", ".join(str(c) for c in action.choices)
    return None


def _kind(action: argparse.Action) -> str:
    if action.type is int:
        return "an integer"
    if action.type in (float, finite_number):
        return "a number"
    return "a string"
