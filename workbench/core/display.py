"""How text from data (passages, ids, names, notes) is shown: literally, with nothing in it able
to act on a terminal. Every report and every screen passes data strings through `visible`.

Control characters become visible stand-ins: C0 (except tab and newline) and DEL as Unicode
control pictures (ESC shows as ␛), C1 and the bidirectional overrides/isolates as `\\xHH` /
`\\uHHHH`, a lone surrogate as U+FFFD. A CRLF line end is a plain newline. On one line (an id,
a cell) the zero-width characters are shown as `\\uHHHH` too."""

from __future__ import annotations

import json
import re
from typing import Any

CONTROL_CLASS = "\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
"""Every character `visible` replaces, as a regex character-class body: C0, DEL, C1, the
bidirectional embeddings/overrides/isolates, lone surrogates. The one definition of it."""
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))

_TABLE: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}
_TABLE[0x7F] = "\u2421"  # ␡
_TABLE.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})
_TABLE.update({code: f"\\u{code:04x}" for code in _BIDI})
_TABLE.update({code: "\ufffd" for code in range(0xD800, 0xE000)})

_MULTILINE = dict(_TABLE)
del _MULTILINE[0x09], _MULTILINE[0x0A]

_ALL = frozenset(_TABLE)

_ZERO_WIDTH = (0x200B, 0x200E, 0x200F, *range(0x2060, 0x2065), 0xFEFF)
"""Invisible characters shown as `\\uHHHH` on one line (ids, table cells), where two ids that
differ only by one would print alike; kept in running text. ZWJ and ZWNJ (U+200D, U+200C) stay:
emoji and Persian or Indic words need them."""
_MARKS = {code: f"\\u{code:04x}" for code in _ZERO_WIDTH}
_TABLE.update(_MARKS)
_MULTILINE_MARKS = {**_MULTILINE, **_MARKS}


def visible(text: str, *, one_line: bool = False, marks: bool = False) -> str:
    """`text` with every control character shown as a visible stand-in. Tab and newline are
    kept unless `one_line` (for ids, titles, table cells, where they would break the layout);
    zero-width characters are shown on one line, or with `marks` (a report's sentences, which
    quote ids), never in running text such as a passage."""
    if text.isprintable() and text.isascii():  # the common case: nothing to do
        return text
    text = text.replace("\r\n", "\n")
    return text.translate(_TABLE if one_line else _MULTILINE_MARKS if marks else _MULTILINE)


def inline(value: object) -> str:
    """A name, id or file name from the data inside a line of text: shown on one line."""
    return visible(str(value), one_line=True)


def has_control(text: str) -> bool:
    """True when `visible(text, one_line=True)` would change `text`."""
    return not _ALL.isdisjoint(map(ord, text))


def json_line(data: object, **options: Any) -> str:
    """JSON for a terminal or a pipe: non-ASCII text kept readable, but C1 controls and the
    bidirectional overrides escaped (json.dumps escapes only C0 when ensure_ascii is off)."""
    return json.dumps(data, ensure_ascii=False, **options).translate(_JSON_ESCAPES)


_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in (*range(0x7F, 0xA0), *_BIDI)}


def relevant_wording(scale: dict[int, str], rel_threshold: int) -> str:
    """Which grades count as relevant, in words, wherever grades are given or figures read:
    `relevant: grade >= 2 (2 relevant, 3 highly relevant), the study's --rel-threshold`."""
    counted = ", ".join(f"{g} {w}" for g, w in sorted(scale.items()) if g >= rel_threshold)
    named = f" ({counted})" if counted else ""
    return f"relevant: grade >= {rel_threshold}{named}, the study's --rel-threshold"


PATH_SEPARATOR = " › "


def heading_path(title: str, headings: tuple[str, ...] | list[str]) -> str:
    """Where a passage sits, for the line above it: `File title › Section › Subsection` (the
    title once, where the first heading repeats it); '' when there is neither."""
    parts = [h for h in headings if h.strip()]
    if title.strip() and (not parts or parts[0].strip() != title.strip()):
        parts.insert(0, title)
    return PATH_SEPARATOR.join(visible(part, one_line=True) for part in parts)


def opens_with_title(title: str, text: str) -> bool:
    """Whether a passage's first line is a Markdown heading that only repeats its title."""
    first = text.lstrip().split("\n", 1)[0].rstrip("\r")
    match = _MD_HEADING.fullmatch(first)
    return bool(match and (match.group(1) or "").strip() == title.strip() and title.strip())


_MD_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")


def passage_lines(title: str, text: str) -> list[tuple[str, bool]]:
    """A passage's text as shown under its title: its lines, each with whether it is a
    Markdown heading, a heading as its words (no `#` marks), and a first line that only
    repeats the title as a heading left out (the title already says it)."""
    lines: list[tuple[str, bool]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        match = _MD_HEADING.fullmatch(line)
        if match:
            words = (match.group(1) or "").strip()
            if not lines and words == title.strip():
                continue
            lines.append((words, True))
        else:
            lines.append((line, False))
    while lines and not lines[0][0].strip():
        lines.pop(0)
    return lines
