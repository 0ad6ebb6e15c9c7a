"""How wide text is drawn: the terminal's width (`terminal_width`), lines wrapped to it at
spaces only (`wrapped`), and the columns of a table that fit it, most important first
(`fitted_columns`). Shared by the text and the HTML renderers."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from typing import TextIO

from workbench.reports.document import Column

DEFAULT_WIDTH = 100
"""The width text is fitted to when neither COLUMNS nor the terminal says (a pipe, a file)."""


def terminal_width(stream: TextIO | None = None) -> int:
    """The width to fit text to: `COLUMNS` when it is a positive integer, else the size of the
    terminal `stream` (default stdout) writes to, else `DEFAULT_WIDTH`."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    stream = sys.stdout if stream is None else stream
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or DEFAULT_WIDTH
    except (AttributeError, ValueError, OSError):  # no file behind it (a StringIO), or closed
        pass
    return DEFAULT_WIDTH


def wrapped(text: str, width: int | None, indent: str = "", hang: str = "  ") -> list[str]:
    """`text` (after `indent`) as lines of at most `width` characters, each line of it wrapped
    with a hanging indent; broken at spaces only, so no id, number or path is cut in two."""
    if width is None:
        return [indent + line for line in text.split("\n")]
    out: list[str] = []
    for line in text.split("\n"):
        first = indent + line
        if len(first) <= width:
            out.append(first)
            continue
        out += textwrap.wrap(
            line,
            width,
            initial_indent=indent,
            subsequent_indent=indent + hang,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [first]
    return out


def fitted_columns(
    columns: Sequence[Column],
    widths: Sequence[int],
    width: int | None,
    among: Sequence[int] | None = None,
) -> list[int]:
    """The indices of the columns a table of these column `widths` shows in `width` characters
    (2 between columns): the first always, then the others (of `among`, default all) in
    increasing `priority` (ties left to right), each that still fits; every one of them
    without a width. In table order."""
    others = [i for i in (range(1, len(columns)) if among is None else among) if i != 0]
    if width is None or not columns:
        return [0, *others] if columns else []
    kept = [0]
    used = widths[0]
    for i in sorted(others, key=lambda i: (columns[i].priority, i)):
        if used + 2 + widths[i] <= width:
            kept.append(i)
            used += 2 + widths[i]
    return sorted(kept)
