"""Where a file's text is cut into passages (pure): the cost of each place to cut and the
cheapest cutting into passages of MIN to MAX words, shared by the rules of
`workbench.formats.passages` (which states them): `merged`, which rejoins the words it keeps,
and `blocks`, whose passages are exact spans of the file (`Piece`)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from workbench.formats.markdown_blocks import LINE_BREAK, heading_path, markdown_cuts
from workbench.formats.markdown_rows import RowCount
from workbench.formats.paragraphs import text_blocks

MAX_HEADING_WORDS = 10
CONTEXT_ROWS = 4
"""The rows a passage may hold beside a block taller than a screen: a heading and an intro."""

_WORD = re.compile(r"\S+")
_MD_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_SENTENCE_END = ".!?…。！？।॥؟።"
_CLOSERS = "\"'”’»)]}」』"
_NOT_HEADING_END = ",;-–—(/&"
_SENTENCE_END_RE = re.compile(f"[{re.escape(_SENTENCE_END)}][{re.escape(_CLOSERS)}]*(?!\\S)")
"""The end of a word that ends a sentence: an end mark, then closing quotes or brackets."""
_NEWLINE = re.compile("\n")

# What a cut costs where it falls (each cut also costs 1: fewer, longer passages win).
_SECTION = 0  # before a heading
_PARAGRAPH = 1  # between paragraphs: the earlier one ends a sentence
_SENTENCE = 4  # a sentence end inside a paragraph
_BLOCK = 10  # between blocks, no sentence end (list items, table rows)
_LINE = 30  # a line break inside a sentence
_MID_SENTENCE = 30  # a blank line inside a sentence (the next block starts in lower case)
_WORD_CUT = 50  # inside a sentence longer than MAX
_AFTER_HEADING = 100
_SHORT = 100  # a passage under MIN words, plus 2 a missing word


@dataclass(frozen=True, slots=True)
class Piece:
    """One passage of a file under `blocks`: characters [start, end) of the file's text, the
    headings it sits under (outermost first), and the opening line of the fenced block it
    starts inside ('' when it starts outside one: a block longer than a passage was cut)."""

    start: int
    end: int
    headings: tuple[str, ...] = ()
    fence: str = ""


# -- merging ------------------------------------------------------------------------------------


def merge_passages(text: str, min_words: int, max_words: int) -> list[str]:
    """The passages of `text` under `merged MIN:MAX`; `max_words` 0: the whole text as one."""
    blocks = text_blocks(text)
    spans = [[m.span() for m in _WORD.finditer(block)] for block in blocks]
    inner, ends_sentence = _inner_cuts(blocks, spans)
    offsets = [0]
    for words in spans:
        offsets.append(offsets[-1] + len(words))
    total = offsets.pop()
    if not total:
        return []
    if max_words == 0:
        return [_text(blocks, spans, offsets, 0, total, ends_sentence)]
    heading = _headings(blocks, ends_sentence)
    starts, costs = _units(blocks, spans, inner, ends_sentence, heading, max_words)
    pieces = _best_cuts(starts, costs, total, min_words, max_words)
    return [_text(blocks, spans, offsets, a, b, ends_sentence) for a, b in pieces]


def _inner_cuts(
    blocks: list[str], spans: list[list[tuple[int, int]]]
) -> tuple[list[dict[int, int]], list[bool]]:
    """Per block: {word: cost of a cut before it} at its sentence ends and line breaks, and
    whether it ends a sentence (`spans`: each block's words as (start, end))."""
    inner: list[dict[int, int]] = []
    ends_sentence: list[bool] = []
    for block, words in zip(blocks, spans, strict=True):
        ends_at = {end: k for k, (_, end) in enumerate(words)}
        cuts = {ends_at[m.end()] + 1: _SENTENCE for m in _SENTENCE_END_RE.finditer(block)}
        ends_sentence.append(cuts.pop(len(words), None) is not None)
        if "\n" in block:
            starts = [start for start, _ in words]
            for line_break in (m.start() for m in _NEWLINE.finditer(block)):
                cuts.setdefault(bisect.bisect_left(starts, line_break), _LINE)
        inner.append(cuts)
    return inner, ends_sentence


def _headings(blocks: list[str], ends_sentence: list[bool]) -> list[bool]:
    """Whether each block is a heading: Markdown `#` lines, or one short line without end
    punctuation, not starting in lower case, after a sentence's end (or a heading, or the
    file's start) and before more text."""
    heading: list[bool] = []
    for b, block in enumerate(blocks):
        lines = block.split("\n")
        if all(_MD_HEADING.match(line) for line in lines):
            heading.append(True)
            continue
        words = block.split()
        heading.append(
            len(lines) == 1
            and len(words) <= MAX_HEADING_WORDS
            and not ends_sentence[b]
            and block[-1] not in _NOT_HEADING_END
            and not words[0][0].islower()
            and b + 1 < len(blocks)
            and (b == 0 or ends_sentence[b - 1] or heading[b - 1])
        )
    return heading


def _units(
    blocks: list[str],
    spans: list[list[tuple[int, int]]],
    inner: list[dict[int, int]],
    ends_sentence: list[bool],
    heading: list[bool],
    max_words: int,
) -> tuple[list[int], list[int]]:
    """Where a cut may fall (the first word of each unit between two places to cut, none over
    `max_words` words) and what a cut before each unit costs (the first unit's: 0): the cuts
    inside each block (`inner`), and between blocks by what the blocks are."""
    starts, costs = [0], [0]

    def cut(at: int, cost: int) -> None:
        while at - starts[-1] > max_words:  # a sentence longer than a passage: cut at word MAX
            starts.append(starts[-1] + max_words)
            costs.append(_WORD_CUT)
        starts.append(at)
        costs.append(cost)

    first = 0
    for b, block in enumerate(blocks):
        if b:
            if heading[b - 1]:
                cost = _AFTER_HEADING
            elif heading[b]:
                cost = _SECTION
            elif ends_sentence[b - 1]:
                cost = _PARAGRAPH
            elif block.lstrip()[0].islower():
                cost = _MID_SENTENCE
            else:
                cost = _BLOCK
            cut(first, cost)
        cuts = inner[b]
        for k in sorted(cuts):
            cut(first + k, cuts[k])
        first += len(spans[b])
    cut(first, 0)
    starts.pop(), costs.pop()  # the end of the text is no cut
    return starts, costs


def _best_cuts(
    starts: list[int],
    costs: list[int],
    total: int,
    min_words: int,
    max_words: int,
    rows: Callable[[int, int], float] | None = None,
    max_rows: int = 0,
) -> list[tuple[int, int]]:
    """The word ranges of the cheapest cutting into passages of at most `max_words` words, and
    `max_rows` rendered rows where `rows` counts those of a word range (dynamic programming
    over the units; of equal costs, the earlier passages the fuller). A unit longer than that
    is a passage alone; one taller than `max_rows` (code, a table) keeps CONTEXT_ROWS more
    beside it (its heading, the sentence that introduces it)."""
    bounds = [*starts, total]
    units = len(starts)
    best = [0.0] + [float("inf")] * units
    back = [0] * (units + 1)
    for j in range(1, units + 1):
        end = bounds[j]
        tallest = 0.0
        for i in range(j - 1, -1, -1):
            size = end - bounds[i]
            too_tall = False
            if rows is not None:
                tallest = max(tallest, rows(bounds[i], bounds[i + 1]))
                limit = max_rows if tallest <= max_rows else tallest + CONTEXT_ROWS
                too_tall = rows(bounds[i], end) > limit
            if (size > max_words or too_tall) and i < j - 1:
                break
            cost = best[i] + (costs[i] + 1 if i else 0)
            if size < min_words and not (rows and 2 * rows(bounds[i], end) >= max_rows):
                cost += _SHORT + 2 * (min_words - size)  # (half a screen of code is not short)
            if cost < best[j]:
                best[j], back[j] = cost, i
    pieces: list[tuple[int, int]] = []
    j = units
    while j:
        i = back[j]
        pieces.append((bounds[i], bounds[j]))
        j = i
    return pieces[::-1]


def _text(
    blocks: list[str],
    spans: list[list[tuple[int, int]]],
    offsets: list[int],
    first: int,
    end: int,
    ends_sentence: list[bool],
) -> str:
    """Words `first` to `end` as the file has them, blocks joined by one line break after a
    heading or inside a sentence, by a blank line between paragraphs."""
    parts: list[str] = []
    b = bisect.bisect_right(offsets, first) - 1
    while b < len(blocks) and offsets[b] < end:
        words = spans[b]
        low, high = max(first - offsets[b], 0), min(end - offsets[b], len(words))
        if parts:
            joined = not ends_sentence[b - 1] or bool(_MD_HEADING.match(blocks[b - 1]))
            parts.append("\n" if joined else "\n\n")
        parts.append(blocks[b][words[low][0] : words[high - 1][1]])
        b += 1
    return "".join(parts)


# -- exact spans (`blocks`) ---------------------------------------------------------------------


def markdown_pieces(text: str, min_words: int, max_words: int, max_rows: int = 0) -> list[Piece]:
    """The passages of a Markdown text under `blocks MIN:MAX` (`rows N`: at most N rows as
    the app renders them, `markdown_rows`), as spans of it."""
    found = markdown_cuts(text, max_words)
    words = found.words
    if not words:
        return []
    starts, costs = _spaced(found.cuts, len(words), max_words)
    rows = RowCount(text, found).of if max_rows else None
    pieces: list[Piece] = []
    for first, end in _best_cuts(starts, costs, len(words), min_words, max_words, rows, max_rows):
        line = bisect.bisect_right(found.line_starts, words[first][0]) - 1
        at_line = first == 0 or first in found.line_start
        start = found.line_starts[line] if at_line else words[first][0]
        fence = next((info for a, b, info in found.fences if a <= first < b), "")
        pieces.append(Piece(start, words[end - 1][1], heading_path(found.headings, line), fence))
    return pieces


def text_pieces(text: str, min_words: int, max_words: int) -> list[Piece]:
    """The passages of a plain text under `blocks MIN:MAX`: cut as `merge_passages` cuts,
    each the file's text from its first word to its last."""
    blocks, offsets = _blocks_at(text)
    spans = [[m.span() for m in _WORD.finditer(block)] for block in blocks]
    words = [(at + a, at + b) for at, block in zip(offsets, spans, strict=True) for a, b in block]
    if not words:
        return []
    inner, ends_sentence = _inner_cuts(blocks, spans)
    heading = _headings(blocks, ends_sentence)
    starts, costs = _units(blocks, spans, inner, ends_sentence, heading, max_words)
    return [
        Piece(words[first][0], words[end - 1][1])
        for first, end in _best_cuts(starts, costs, len(words), min_words, max_words)
    ]


def _blocks_at(text: str) -> tuple[list[str], list[int]]:
    """Runs of non-blank lines as the text has them (trailing whitespace off the run), and
    where each starts."""
    blocks: list[str] = []
    offsets: list[int] = []
    first: int | None = None
    last_end = 0
    line_start = 0
    for match in [*LINE_BREAK.finditer(text), None]:
        line_end = match.start() if match else len(text)
        if text[line_start:line_end].strip():
            if first is None:
                first = line_start
            last_end = line_end
        elif first is not None:
            blocks.append(text[first:last_end].rstrip())
            offsets.append(first)
            first = None
        line_start = match.end() if match else len(text)
    if first is not None:
        blocks.append(text[first:last_end].rstrip())
        offsets.append(first)
    return blocks, offsets


def _spaced(cuts: dict[int, int], total: int, max_words: int) -> tuple[list[int], list[int]]:
    """`cuts` as the unit starts and costs `_best_cuts` takes, a cut at every MAX words added
    where two places to cut lie further apart (a line longer than a passage)."""
    starts, costs = [0], [0]
    for at in [*sorted(cuts), total]:
        while at - starts[-1] > max_words:
            starts.append(starts[-1] + max_words)
            costs.append(_WORD_CUT)
        if at < total:
            starts.append(at)
            costs.append(cuts[at])
    return starts, costs
