"""A Markdown file's blocks as markdown-it-py parses them (CommonMark, with tables, front matter
and `!!!`/`???` admonitions): where a passage may be cut, what a cut costs, and the headings
each line sits under. Pure: text in, line and word positions out.

A cut falls between two blocks at the top level of the file. Inside a block (a fenced or
indented code block, a table, a list, a list item, a quote, an admonition, a paragraph) a cut
is offered only when the block alone is longer than a passage: then between its children
(list items first), at a blank line inside code, between table rows, at a sentence end."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""markdown-it's own line breaks (it normalizes these three to `\\n` and splits there)."""
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?…。！？।॥؟።][\"'”’»)\]}」』]*(?!\S)")
_ENDS_SENTENCE = re.compile(r"[.!?…。！？।॥؟።][\"'”’»)\]}」』]*$")

CONTAINERS = frozenset({"bullet_list", "ordered_list", "list_item", "blockquote", "admonition"})
"""Blocks whose children are blocks: a cut inside one of them falls between its children."""
CODE = frozenset({"fence", "code_block"})

# What a cut costs where it falls (each cut also costs 1 in the merging: fewer passages win).
SECTION = 0  # before a heading
PARAGRAPH = 1  # after a paragraph that ends a sentence
BLOCK = 10  # between other blocks, or between the items of a list too long for one passage
INTRO = 40  # after a paragraph ending in ':' (it introduces what follows)
INSIDE = 20  # between the children of a quote, an admonition or a list item too long
CODE_BLANK = 20  # at a blank line inside a code block too long for one passage
SENTENCE = 4  # a sentence end inside a paragraph too long for one passage
LINE = 30  # a line inside a code block, a table or a paragraph too long for one passage
AFTER_HEADING = 100  # right after a heading, or after a tab marker (`=== "Python"`)

_TAB_MARKER = re.compile(r" {0,3}(===|\?\?\?\+?|!!!)[+ ]")


@dataclass(slots=True)
class Block:
    """One block of the parse: its kind (markdown-it's token type without `_open`), its lines
    [first, end) and, for a container, its child blocks; a heading's level and text."""

    kind: str
    first: int
    end: int
    children: list[Block] = field(default_factory=list)
    level: int = 0
    title: str = ""
    info: str = ""


@dataclass(frozen=True, slots=True)
class MarkdownCuts:
    """Where a file's passages may start: `cuts` maps a word index to the cost of a cut before
    it, `line_start` holds the cuts after which a passage starts at its line's start (so code
    keeps its indentation), `fences` maps a word inside a fenced block to its opening line."""

    words: list[tuple[int, int]]
    cuts: dict[int, int]
    line_start: frozenset[int]
    line_starts: list[int]
    headings: list[tuple[int, int, str]]
    """(line, level, text) of each top-level heading, in order."""
    fences: list[tuple[int, int, str]]
    """(first word inside, end word, opening line) of each fenced block, in order."""
    blocks: list[Block] = field(default_factory=list)
    """The top-level blocks (front matter left out)."""


@cache
def _parser():  # noqa: ANN202 - markdown_it's type, imported lazily
    from markdown_it import MarkdownIt
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(admon_plugin)


def parse_blocks(text: str) -> list[Block]:
    """The top-level blocks of `text`, containers with their children."""
    tokens = _parser().parse(text)
    roots: list[Block] = []
    stack: list[Block | None] = []
    skip: int | None = None  # inside a leaf block: its level, until it closes
    for i, token in enumerate(tokens):
        if skip is not None:
            if token.nesting == -1 and token.level == skip:
                skip = None
            continue
        if token.nesting == -1:
            stack.pop()
            continue
        if token.map is None:
            if token.nesting == 1:
                stack.append(None)
            continue
        kind = token.type.removesuffix("_open")
        block = Block(kind, token.map[0], token.map[1])
        parent = next((b for b in reversed(stack) if b is not None), None)
        (parent.children if parent is not None else roots).append(block)
        if kind == "heading":
            block.level = int(token.tag[1:])
            block.title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
        if kind == "fence":
            block.info = token.markup + token.info
        if token.nesting == 1:
            if kind in CONTAINERS:
                stack.append(block)
            else:
                skip = token.level
    return roots


def markdown_cuts(text: str, max_words: int) -> MarkdownCuts:
    """The words of `text` (front matter left out), the cuts a passage of at most `max_words`
    words may start at, and the headings and fences a passage's start may sit in."""
    line_starts = [0, *(m.end() for m in LINE_BREAK.finditer(text))]
    blocks = parse_blocks(text)
    body = 0
    if blocks and blocks[0].kind == "front_matter":  # the file's metadata, not its text
        body = _line_end(text, line_starts, blocks[0].end)
        blocks = blocks[1:]
    cutter = _Cutter(text, line_starts, [m.span() for m in _WORD.finditer(text, body)], max_words)
    cutter.between(blocks, lambda before, block: _top_cost(text, line_starts, before, block))
    for block in blocks:
        cutter.inside(block)
    headings = [(b.first, b.level, b.title) for b in blocks if b.kind == "heading"]
    fences = [
        (cutter.word_at(b.first + 1), cutter.word_at(b.end), b.info)
        for b in blocks
        if b.kind == "fence" and cutter.size(b) > max_words
    ]
    return MarkdownCuts(cutter.words, cutter.cuts, frozenset(cutter.line_start), line_starts,
                        headings, fences, blocks)  # fmt: skip


class _Cutter:
    """The places to cut one file's text, gathered block by block."""

    def __init__(
        self, text: str, line_starts: list[int], words: list[tuple[int, int]], max_words: int
    ) -> None:
        self.text, self.line_starts, self.words = text, line_starts, words
        self.max_words = max_words
        self.word_starts = [start for start, _ in words]
        self.cuts: dict[int, int] = {}
        self.line_start: set[int] = set()

    def word_at(self, line: int) -> int:
        """The index of the first word on or after `line`."""
        if line >= len(self.line_starts):
            return len(self.words)
        return bisect_left(self.word_starts, self.line_starts[line])

    def size(self, block: Block) -> int:
        return self.word_at(block.end) - self.word_at(block.first)

    def offer(self, word: int, cost: int, at_line: bool) -> None:
        """A cut before `word` costing `cost` (the cheapest offer wins); `at_line`: the passage
        after it starts at its line's start."""
        if 0 < word < len(self.words) and cost < self.cuts.get(word, cost + 1):
            self.cuts[word] = cost
            if at_line:
                self.line_start.add(word)
            else:
                self.line_start.discard(word)

    def between(self, blocks: list[Block], cost_of: Callable[[Block, Block], int]) -> None:
        for before, block in zip(blocks, blocks[1:], strict=False):
            self.offer(self.word_at(block.first), cost_of(before, block), True)

    def inside(self, block: Block) -> None:
        """The cuts inside a block longer than a passage in words (none inside one that fits;
        one taller than a screen is not cut for that: it scrolls, whole)."""
        if self.size(block) <= self.max_words:
            return
        if block.kind in CONTAINERS and block.children:
            inner = BLOCK if block.kind.endswith("list") else INSIDE
            self.between(block.children, lambda _before, _block: inner)
            for child in block.children:
                self.inside(child)
        elif block.kind in CODE or block.kind == "table":
            first = block.first + (2 if block.kind == "table" else 1)
            last = block.end - (1 if block.kind == "fence" else 0)
            for line in range(first, last):
                blank = _blank(self.text, self.line_starts, line - 1) and block.kind in CODE
                self.offer(self.word_at(line), CODE_BLANK if blank else LINE, True)
        else:
            low = self.line_starts[block.first]
            high = _line_end(self.text, self.line_starts, block.end)
            for line in range(block.first + 1, block.end):
                self.offer(self.word_at(line), LINE, False)
            for match in _SENTENCE_END.finditer(self.text, low, high):
                self.offer(bisect_left(self.word_starts, match.end()), SENTENCE, False)


def _top_cost(text: str, line_starts: list[int], before: Block, block: Block) -> int:
    """What a cut between two top-level blocks costs."""
    if before.kind == "heading":
        return AFTER_HEADING
    if block.kind == "heading":
        return SECTION
    if before.kind == "paragraph":
        last = text[line_starts[before.first] : _line_end(text, line_starts, before.end)].rstrip()
        if before.end - before.first == 1 and _TAB_MARKER.match(last):
            return AFTER_HEADING
        if last.endswith(":"):
            return INTRO
        if _ENDS_SENTENCE.search(last):
            return PARAGRAPH
    return BLOCK


def _line_end(text: str, line_starts: list[int], end_line: int) -> int:
    """Where line `end_line` starts (the end of the lines before it), or the text's end."""
    return line_starts[end_line] if end_line < len(line_starts) else len(text)


def _blank(text: str, line_starts: list[int], line: int) -> bool:
    """Whether line `line` holds only whitespace."""
    if line < 0 or line >= len(line_starts):
        return False
    return not text[line_starts[line] : _line_end(text, line_starts, line + 1)].strip()


def heading_path(headings: list[tuple[int, int, str]], line: int) -> tuple[str, ...]:
    """The headings a passage starting at `line` sits under, outermost first (a heading on
    `line` itself is the passage's own, not its context)."""
    path: list[tuple[int, str]] = []
    for at, level, title in headings:
        if at > line:
            break
        while path and path[-1][0] >= level:
            path.pop()
        if at < line:
            path.append((level, title))
    return tuple(title for _, title in path if title)
