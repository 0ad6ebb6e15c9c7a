"""How many rows a Markdown file's passage takes on screen, as the app renders it
(`tui.markdown`), counted from markdown-it-py's parse (`markdown_blocks`) so that the cut can
keep a passage to one screen (`blocks ... rows N`). Pure: text in, row counts out; an
estimate, over by a row or two where markup is counted as written, within 4 rows under on
Textual's docs and this project's (`tests/tui/test_tui_markdown.py` holds it to that)."""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import accumulate

from workbench.core.markdown_view import tool_kind
from workbench.formats.markdown_blocks import LINE_BREAK, Block, MarkdownCuts, markdown_cuts

READING_WIDTH = 96
"""The columns a passage's rendered rows are counted at: the passage box's text in a terminal
100 columns wide (its border and padding off)."""
_FENCE_MARK = re.compile(r"\s*(`{3,}|~{3,})")
_SPACED_WORD = re.compile(r"\s*\S+")
_CELL = re.compile(r"(?<!\\)\|")


class RowCount:
    """The rows any run of a file's words takes rendered, from prefix sums over its lines."""

    def __init__(self, text: str, found: MarkdownCuts, width: int = READING_WIDTH) -> None:
        self.found = found
        self.rows, self.gaps = rendered_rows(text, found.blocks, width)

    def of(self, first: int, end: int) -> float:
        """The rows words [first, end) take: their lines' rows and the blank rows between
        their blocks (not the one above the first)."""
        starts, words = self.found.line_starts, self.found.words
        low = bisect_left(starts, words[first][0] + 1) - 1
        high = bisect_left(starts, words[end - 1][0] + 1)
        return self.rows[high] - self.rows[low] + self.gaps[high] - self.gaps[low + 1]


def rendered_rows(
    text: str, blocks: list[Block], width: int = READING_WIDTH
) -> tuple[list[float], list[int]]:
    """How many rows the app's Markdown rendering (`tui.markdown`) takes for the lines of
    `text` at `width` columns, estimated from the parse: prose wrapped at word boundaries
    (markup counted as written, so a little over), code a row a line, no row for a fence's
    marks, one for a build-tool line, a title row for an admonition, quotes and lists narrower
    by their marks. Returned as prefix sums per line: the rows, and the blank rows above the
    top-level blocks (one between two blocks, none under a heading or between two tool
    lines)."""
    lines = LINE_BREAK.split(text)
    rows = [0.0] * len(lines)
    gaps = [0] * len(lines)
    before: Block | None = None
    for block in blocks:
        hidden = before is not None and _tool(lines, before) == "api" and block.kind == "code_block"
        if before is not None and not hidden and before.kind != "heading":
            gaps[block.first] = 0 if _tool(lines, before) and _tool(lines, block) else 1
        if not hidden:  # an API block's options: shown as a count on its line
            _place(lines, block, width, rows)
        before = block
    return [0.0, *accumulate(rows)], [0, *accumulate(gaps)]


def span_rows(text: str, start: int, end: int) -> float:
    """The rows characters [start, end) of a Markdown text take rendered at READING_WIDTH:
    what the cut counts for a passage, for a check or a figure."""
    found = markdown_cuts(text, len(text))
    first = bisect_left([b for _, b in found.words], start + 1)
    last = bisect_left([a for a, _ in found.words], end)
    return RowCount(text, found).of(first, last) if last > first else 0.0


def _tool(lines: list[str], block: Block) -> str | None:
    """Which build-tool line a block is shown as (`markdown_view`), None when it is not one."""
    if block.kind == "paragraph" and block.end - block.first == 1:
        return tool_kind(lines[block.first])
    if block.kind == "fence":
        body = [x for x in lines[block.first + 1 : block.end - 1] if x.strip()]
        if body and all(tool_kind(x) == "include" for x in body):
            return "include"
        if not body and lines[block.first].strip().lstrip("`~").startswith("{"):
            return "include"
    return None


def _place(lines: list[str], block: Block, width: int, rows: list[float]) -> None:
    """Add the rows of `block`, rendered `width` columns wide, to its lines in `rows`."""
    kind, first, end = block.kind, block.first, block.end
    if kind == "heading":
        rows[first] += _wrapped(block.title, width)
    elif kind == "hr":
        rows[first] += 2
    elif kind in ("bullet_list", "ordered_list", "list_item", "blockquote", "admonition"):
        inner = {"bullet_list": 3, "ordered_list": 4, "blockquote": 2, "admonition": 2}
        if kind == "admonition":
            rows[first] += 1  # its title
        for child in block.children:
            _place(lines, child, max(width - inner.get(kind, 0), 8), rows)
    elif kind == "paragraph" and _tool(lines, block):
        rows[first] += 1
    elif kind == "paragraph":
        sizes = [len(lines[k].strip()) for k in range(first, end)]
        total = _wrapped(" ".join(lines[k].strip() for k in range(first, end)), width)
        for k, size in zip(range(first, end), sizes, strict=True):
            rows[k] += total * size / (sum(sizes) or 1)
    elif kind == "fence" and _tool(lines, block):
        rows[first] += max(1, end - first - 2)
    elif kind in ("fence", "code_block", "html_block"):
        if kind == "fence":  # no row for its marks
            first += 1
            if end - 1 >= first and _FENCE_MARK.match(lines[end - 1]):
                end -= 1
        for k in range(first, end):  # a row a line; a tab's fence marks (indented) none
            if kind == "fence" or not _FENCE_MARK.match(lines[k]):
                rows[k] += _code_rows(lines[k].expandtabs(4), width - 2)
    elif kind == "table":
        for k, height in enumerate(_table_rows(lines[first:end], width), first):
            rows[k] += height
    else:  # anything else: a row a line, wrapped
        for k in range(first, end):
            rows[k] += _wrapped(lines[k].strip(), width)


def _table_rows(lines: list[str], width: int) -> list[int]:
    """The rows each line of a table takes rendered (the line under its header one): columns
    two apart, as wide as their longest cell, collapsed as Rich's table collapses them when
    the table is wider than `width` (the widest first, down to the next widest, then all
    evenly), cells wrapped in them and a word wider than its column cut to one row."""
    cells = [[c.strip() for c in _CELL.split(line.strip().strip("|"))] for line in lines]
    shown = cells[:1] + cells[2:]  # the line under the header is drawn, not measured
    columns = range(max(len(row) for row in cells))
    widths = [max((len(row[c]) for row in shown if c < len(row)), default=0) or 1
              for c in columns]  # fmt: skip
    room = max(width - 2 * (len(widths) - 1), len(widths))
    widths = _collapsed(widths, room)
    return [1 if k == 1 else max(_cell_rows(c, size) for c, size in zip(row, widths, strict=False))
            for k, row in enumerate(cells)]  # fmt: skip


def _collapsed(widths: list[int], room: int) -> list[int]:
    """Rich's `Table._collapse_widths`, then its even reduction: the widest columns narrowed to
    the next widest until the table fits `room`, else every column by its share."""
    excess = sum(widths) - room
    while excess > 0:
        top = max(widths)
        second = max((w for w in widths if w != top), default=0)
        if top - second <= 0:
            break
        ratios = [1 if w == top else 0 for w in widths]
        widths = _ratio_reduce(excess, ratios, [min(excess, top - second)] * len(widths), widths)
        excess = sum(widths) - room
    if excess > 0:
        widths = _ratio_reduce(excess, [1] * len(widths), widths, widths)
    return [max(w, 1) for w in widths]


def _ratio_reduce(total: int, ratios: list[int], most: list[int], values: list[int]) -> list[int]:
    """Rich's `ratio_reduce`: `total` taken from `values` in proportion to `ratios`, at most
    `most` from each."""
    ratios = [r if m else 0 for r, m in zip(ratios, most, strict=True)]
    left, weight = total, sum(ratios)
    out = []
    for ratio, cap, value in zip(ratios, most, values, strict=True):
        if ratio and weight > 0:
            taken = min(cap, round(ratio * left / weight))
            out.append(value - taken)
            left, weight = left - taken, weight - ratio
        else:
            out.append(value)
    return out


def _cell_rows(text: str, width: int) -> int:
    """The rows a table cell takes `width` columns wide: wrapped at its words, a word wider
    than the column cut (Rich ellipsizes it) to one row."""
    words = [w if len(w) <= width else w[:width] for w in text.split()]
    return _wrapped(" ".join(words), width)


def _code_rows(line: str, width: int) -> int:
    """The rows a line takes wrapped at word boundaries `width` columns wide, as written (its
    spaces kept; a word longer than a row folded); at least one."""
    rows, used = 1, 0
    for match in _SPACED_WORD.finditer(line):
        token = match.group()
        if used and used + len(token) > width:  # to the next row, without its spaces
            rows, used, token = rows + 1, 0, token.lstrip()
        used += len(token)
        while used > width:
            rows, used = rows + 1, used - width
    return rows


def _wrapped(text: str, width: int) -> int:
    """The rows prose takes wrapped `width` columns wide (its words one space apart)."""
    return _code_rows(" ".join(text.split()), width)
