"""`workbench.toml`, the project file: a study's options kept beside it so that it is rerun
without retyping them (harlequin's profiles). Strict and small: one table per command that
reads it (`[pool]` today), nothing else; a problem names the file and its line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import tomllib

from workbench.core.errors import InputError

PROJECT_FILE = "workbench.toml"
"""Its name, looked up in the current directory (where the study's commands are run from)."""

TABLES = ("pool",)
"""The tables it may hold: the commands that read it."""


@dataclass(frozen=True)
class ProjectTable:
    """One table of the project file: its values, and where each is set (for problems)."""

    path: str
    text: str
    values: dict[str, object]

    def where(self, key: str) -> str:
        """`path:line` of the line that sets `key` (or opens its table), else `path`."""
        pattern = re.compile(
            rf"^\s*(\[\s*{re.escape(key)}\s*\]|{re.escape(key)}\s*=|\"{re.escape(key)}\"\s*=)"
        )
        for number, line in enumerate(self.text.splitlines(), 1):
            if pattern.match(line):
                return f"{self.path}:{number}"
        return self.path


def read_project_table(path: str | Path, table: str) -> ProjectTable:
    """The `[table]` of the project file at `path` (empty when it has none); InputError naming
    the file (and line) when it is not TOML or holds anything but the known tables."""
    from workbench.formats.textio import read_text

    text = read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column \d+\)$", message)
        where = f"{path}:{found.group(1)}" if found else f"{path}"
        message = message[: found.start()].strip() if found else message
        raise InputError([f"{where}: not TOML ({message})"]) from None
    whole = ProjectTable(str(path), text, data)
    problems = [
        f"{whole.where(key)}: {key}: not a table workbench reads (it reads "
        + ", ".join(f"[{name}]" for name in TABLES) + ")"
        for key, value in data.items()
        if key not in TABLES or not isinstance(value, dict)
    ]  # fmt: skip
    if problems:
        raise InputError(problems)
    values = data.get(table, {})
    return ProjectTable(str(path), text, dict(values))
