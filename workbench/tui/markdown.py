"""A Markdown passage rendered (headings, code with highlighting, tables, lists, quotes), with
nothing in it able to act: the text is made visible first (`display.visible`: no escape
sequence reaches the terminal), Rich builds plain Text from the parse (no Rich or Textual
markup is read from it), links are shown as their text and address (never followed: no
hyperlink style), HTML is shown as written, and build-tool lines are one dim line each
(`core.markdown_view`). Query terms are highlighted in text, headings and table cells."""

from __future__ import annotations

from collections.abc import Iterable
from copy import copy
from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import (
    CodeBlock,
    Heading,
    Markdown,
    MarkdownElement,
    Paragraph,
    TableDataElement,
    TableElement,
)
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from workbench.core.display import visible
from workbench.core.markdown_view import TOOL_INFO, markdown_for_display
from workbench.tui.highlight import word_spans

CODE_THEME = "ansi_dark"
"""Pygments through the terminal's own palette: readable on a dark or a light background."""
TERMS_STYLE = "bold reverse"


def _mark(text: Text, terms: frozenset[str]) -> None:
    """Highlight whole-word matches of `terms` in `text` (as `highlight.highlight` does)."""
    if terms:
        for start, end, token in word_spans(text.plain):
            if token in terms:
                text.stylize(TERMS_STYLE, start, end)


class _Paragraph(Paragraph):
    terms: ClassVar[frozenset[str]] = frozenset()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        _mark(self.text, self.terms)
        yield from super().__rich_console__(console, options)


class _Heading(Heading):
    """A heading as one bold line at the left (no centring, no box)."""

    terms: ClassVar[frozenset[str]] = frozenset()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.stylize("bold")
        text.justify = "left"
        _mark(text, self.terms)
        yield text


class _Cell(TableDataElement):
    terms: ClassVar[frozenset[str]] = frozenset()

    def on_leave(self, context) -> None:  # type: ignore[no-untyped-def]
        _mark(self.content, self.terms)
        super().on_leave(context)


class _Table(TableElement):
    """A table without the blank lines Rich puts above and below it."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      style="markdown.table.border", collapse_padding=True)  # fmt: skip
        if self.header is not None and self.header.row is not None:
            for column in self.header.row.cells:
                table.add_column(column.content.copy(), header_style="bold")
        for row in self.body.rows if self.body is not None else ():
            table.add_row(*(cell.content for cell in row.cells))
        yield table


class _Code(CodeBlock):
    """Code highlighted by its language, without the blank padding lines; a build-tool line
    (`TOOL_INFO`) as one dim line."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        if self.lexer_name == TOOL_INFO:
            yield Text(code, style="dim italic")
            return
        yield Syntax(code, self.lexer_name, theme=CODE_THEME, word_wrap=True, padding=(0, 1),
                     background_color="default")  # fmt: skip


class PassageMarkdown(Markdown):
    """A passage of a Markdown file, rendered safely (the module docstring says how)."""

    def __init__(self, text: str, terms: frozenset[str] = frozenset(), fence: str = "") -> None:
        shown = markdown_for_display(visible(text), visible(fence, one_line=True))
        super().__init__(shown, code_theme=CODE_THEME, hyperlinks=False)
        self.parsed = list(_inert(MarkdownIt("commonmark").enable("table").parse(shown)))
        self.elements = {
            **Markdown.elements, "paragraph_open": type("P", (_Paragraph,), {"terms": terms}),
            "heading_open": type("H", (_Heading,), {"terms": terms}),
            "td_open": type("D", (_Cell,), {"terms": terms}),
            "th_open": type("T", (_Cell,), {"terms": terms}),
            "fence": _Code, "code_block": _Code, "html_block": _Code, "table_open": _Table,
        }  # fmt: skip

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Each top-level block rendered alone, a blank row between two but none under a
        heading and none between two build-tool lines (`markdown_rows.rendered_rows`
        counts the same; Rich's own spacing put a blank row above a list, a quote or a table
        even under its heading)."""
        before: list[Token] = []
        for block in _top_level(self.parsed):
            if before and before[0].type != "heading_open" and not (_tool(before) and _tool(block)):
                yield Segment.line()
            part = copy(self)
            part.parsed = block
            rendered = iter(Markdown.__rich_console__(part, console, options))
            first = next(rendered, None)
            if first is not None and first != Segment.line():  # Rich's blank above a list,
                yield first  # a quote or a table alone (its last item's spacing leaks out)
            yield from rendered
            before = block


def _top_level(tokens: list[Token]) -> Iterable[list[Token]]:
    """The tokens of each top-level block, in order."""
    start = 0
    for n, token in enumerate(tokens):
        if token.level == 0 and token.nesting <= 0:
            yield tokens[start : n + 1]
            start = n + 1


def _tool(block: list[Token]) -> bool:
    """Whether a block is a build-tool line (`markdown_view.tool_line`)."""
    return block[0].type == "fence" and block[0].info == TOOL_INFO


def _inert(tokens: Iterable[Token]) -> Iterable[Token]:
    """The parse with its HTML shown as written: an HTML block as a code block, inline HTML
    as text (Rich would drop both silently); an image as its text and address."""
    for token in tokens:
        if token.type == "html_block":
            token.type, token.info = "code_block", "html"
        for child in token.children or ():
            if child.type == "html_inline":
                child.type = "text"
            elif child.type == "image":  # Rich would draw it out of its place in the text
                alt = "".join(c.content for c in child.children or ())
                child.type, child.tag, child.children = "text", "", None
                child.content = f"[image: {alt}] ({child.attrs.get('src', '')})"
        yield token


def is_markdown(source: str) -> bool:
    """Whether a passage's source file (or id stem) is Markdown."""
    return source.lower().endswith((".md", ".markdown"))


__all__ = ["MarkdownElement", "PassageMarkdown", "is_markdown"]
