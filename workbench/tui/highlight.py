"""Query-term highlighting over passage text, built as rich Text so passage text is never parsed
as markup: `[bold]` or `[@click=app.quit]` inside a passage stays literal text."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

from rich.text import Text

# Function words are tokens like any other, but lighting them up hides the terms that matter.
HIGHLIGHT_STOPWORDS = frozenset(
    "a an and are as at be by do does for from how in is it of on or the to what when where "
    "which who why with".split()
)


def _is_word_char(ch: str) -> bool:
    # The project's folding rule (model.normalize_passage): letters, digits and combining marks.
    return ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M"


def word_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, folded token) for each run of word characters; folded = NFC + casefold."""
    start = -1
    for index, ch in enumerate(text):
        if _is_word_char(ch):
            if start < 0:
                start = index
        elif start >= 0:
            yield start, index, unicodedata.normalize("NFC", text[start:index]).casefold()
            start = -1
    if start >= 0:
        yield start, len(text), unicodedata.normalize("NFC", text[start:]).casefold()


def query_terms(query_text: str) -> frozenset[str]:
    """The folded terms of a query worth highlighting."""
    return frozenset(t for _, _, t in word_spans(query_text) if t not in HIGHLIGHT_STOPWORDS)


def highlight(text: str, terms: Iterable[str], style: str = "bold reverse") -> Text:
    """`text` as literal rich Text with whole-word matches of `terms` styled."""
    wanted = frozenset(terms)
    result = Text(text)
    if wanted:
        for start, end, token in word_spans(text):
            if token in wanted:
                result.stylize(style, start, end)
    return result
