"""Reading text files for the format readers: UTF-8, every failure an InputError naming the file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from workbench.errors import InputError, ProblemCollector


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text as UTF-8 (a leading BOM tolerated); undecodable bytes name their line."""
    target = Path(path)
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        raise InputError([f"{target}: no such file"]) from None
    except IsADirectoryError:
        raise InputError([f"{target}: is a folder, expected a file"]) from None
    except OSError as exc:
        raise InputError([f"{target}: cannot read ({exc.strerror})"]) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            [f"{target}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"]
        ) from None


def has_whitespace(value: str) -> bool:
    """True when `value` would not survive as one whitespace-separated column."""
    return len(value.split()) != 1 or value.strip() != value


def json_objects(
    text: str, problems: ProblemCollector, fields: str = ""
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of JSONL `text`. A line that is not JSON,
    or not a JSON object, is added to `problems` and skipped, so a reader reports every bad
    line at once; `fields` names what an object should carry, for that message."""
    wanted = f" with {fields}" if fields else ""
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(lineno, f"bad JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(record, dict):
            problems.add(lineno, f"expected a JSON object{wanted}, found {type(record).__name__}")
            continue
        yield lineno, record
