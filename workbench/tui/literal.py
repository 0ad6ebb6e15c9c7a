"""Data strings as the screens show them: literal (never parsed as markup, so `d[/]` cannot crash
a screen nor `[@click=app.quit]` act) and inert (control characters visible, so nothing in the
data reaches the terminal as an escape sequence). Every data string on screen goes through here."""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.markup import escape

from workbench.core.display import visible


def literal(text: str, style: str = "", *, one_line: bool = False) -> Text:
    """`text` as rich Text for a widget's content."""
    return Text(visible(text, one_line=one_line), style=style)


def literal_title(text: str) -> Content:
    """`text` for a border title (Textual parses a str there as markup)."""
    return Content(visible(text, one_line=True))


def literal_plain(text: str) -> str:
    """`text` for a place Textual shows as plain text (the header's sub-title)."""
    return visible(text, one_line=True)


def literal_markup(text: str) -> str:
    """`text` escaped for an API that takes only a markup string (the command palette)."""
    return escape(visible(text, one_line=True))
