"""The command reference (docs/reference/commands.md), written from the real argparse parsers so
that it cannot drift from them: every command, its usage, and each option with its help and
default.

Two ways in, one text:

- the mkdocs hook (`hooks:` in mkdocs.yml names this file): `on_files` adds the page to every
  `mkdocs build` / `mkdocs serve`, generated from the parsers at that moment, never from a file;
- `python -m workbench.docs_reference [PATH]` writes it to PATH (default
  docs/reference/commands.md, which git ignores) for reading without mkdocs.

It sits at the top layer beside `workbench.cli` (the import contract in pyproject.toml), whose
parser builder it reads; it imports nothing else of workbench.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path
from typing import Any

PAGE = "reference/commands.md"
"""The page's path inside the docs folder."""

WIDTH = 88
"""Usage lines are wrapped at this width whatever the terminal that builds the docs."""


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=WIDTH, max_help_position=32)


def _command_parsers() -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, summary, configured parser) for every command, in the CLI's order."""
    from workbench.cli import COMMANDS, build_parser

    found = []
    for name, summary in COMMANDS.items():
        parser = build_parser(only=name)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        found.append((name, summary, sub.choices[name]))
    return found


def _text(value: str) -> str:
    """Help text as Markdown shows it literally: markup and emphasis characters escaped."""
    out = html.escape(value, quote=False)
    for char in "\\`*_[]|":
        out = out.replace(char, "\\" + char)
    return " ".join(out.split())


def _code(value: str) -> str:
    """A code span that holds any text (backticks in it get a longer fence)."""
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _invocation(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if not action.option_strings:
        return formatter._metavar_formatter(action, action.dest)(1)[0]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = formatter._format_args(action, action.dest.upper())
    return ", ".join(f"{option} {metavar}" for option in action.option_strings)


def _default(action: argparse.Action, helptext: str) -> str | None:
    """The default, when the help does not say it already and there is one to say."""
    default = action.default
    if "default" in helptext.lower() or action.nargs == 0 or action.required:
        return None
    if default is None or default is argparse.SUPPRESS or default == []:
        return None
    return str(default)


def _option(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    helptext = formatter._expand_help(action) if action.help else ""
    line = f"- {_code(_invocation(action, formatter))}"
    extra = []
    if action.required and action.option_strings:
        extra.append("required")
    if action.choices is not None and action.metavar is not None:
        extra.append("one of " + ", ".join(_code(str(c)) for c in action.choices))
    if extra:
        line += " (" + "; ".join(extra) + ")"
    if helptext:
        line += ": " + _text(helptext)
    default = _default(action, helptext)
    if default is not None:
        line += f" (default: {_code(default)})"
    return line


def command_page(parsers: list[tuple[str, str, Any]] | None = None) -> str:
    """The whole page, as Markdown."""
    parsers = _command_parsers() if parsers is None else parsers
    lines = [
        "# Command reference",
        "",
        "Generated from the parsers of `workbench` itself (`workbench/docs_reference.py`, run by",
        "`mkdocs build`), so it says exactly what `workbench COMMAND --help` says. What the",
        "commands are for, and what their reports mean: [Commands](../commands.md).",
        "",
        "Every command: " + ", ".join(f"[{n}](#{_anchor(n)})" for n, _, _ in parsers) + ".",
        "",
    ]
    for name, summary, parser in parsers:
        lines += _section(f"workbench {name}", summary, parser, level=2)
    return "\n".join(lines)


def _section(title: str, summary: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    """One command (or sub-command): its usage, its options by group, then its sub-commands."""
    parser.formatter_class = _formatter
    formatter = parser._get_formatter()
    lines = [f"{'#' * level} {title}", ""]
    if summary:
        lines += [_text(summary), ""]
    lines += ["```text", _usage(parser), "```", ""]
    if parser.epilog:  # the examples (`workbench.cli.EXAMPLES`), as --help ends with them
        head, *examples = parser.epilog.splitlines()
        lines += [head, "", "```sh", *(line.strip() for line in examples), "```", ""]
    subcommands: list[tuple[str, str, argparse.ArgumentParser]] = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help is not argparse.SUPPRESS]
        actions = [a for a in actions if not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        heading = group.title or "options"
        lines += [f"{heading[:1].upper()}{heading[1:]}:", ""]
        for action in actions:
            lines.append(_option(action, formatter))
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help or "" for a in action._choices_actions}
                subcommands += [(n, helps.get(n, ""), p) for n, p in action.choices.items()]
        lines.append("")
    for name, helptext, sub in subcommands:
        lines += _section(f"{title} {name}", helptext or sub.description or "", sub, level + 1)
    return lines


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage lines without their "usage: " prefix, continuation lines dedented with it."""
    prefix = "usage: "
    lines = parser.format_usage().rstrip().splitlines()
    out = [lines[0].removeprefix(prefix)]
    indent = " " * len(prefix)
    out += [line.removeprefix(indent) for line in lines[1:]]
    return "\n".join(out)


def _anchor(name: str) -> str:
    """The heading's id as mkdocs' toc makes it ("workbench import-labels")."""
    return "workbench-" + name


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: the page, generated now, replacing any copy written to the docs folder."""
    from mkdocs.structure.files import File

    stale = files.get_file_from_path(PAGE)
    if stale is not None:
        files.remove(stale)
    files.append(File.generated(config, PAGE, content=command_page()))
    return files


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs hook: a table cell's code span writes `|` as `\\|` so that GitHub keeps the cell
    whole; Python-Markdown keeps a code span's pipes whole by itself and would show the
    backslash, so it is dropped there (table rows only)."""
    return "\n".join(
        re.sub(r"`[^`\n]*`", lambda m: m.group(0).replace("\\|", "|"), line)
        if line.startswith("|")
        else line
        for line in markdown.split("\n")
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0] if argv else "docs/" + PAGE)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(command_page(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
