"""Query-term highlighting over passage text, built as rich Text so passage text is never parsed
as markup: `[bold]` or `[@click=app.quit]` inside a passage stays literal text, and control
characters show as visible stand-ins (workbench.core.display.visible) before any span is
computed."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

from rich.text import Text

from workbench.core.display import visible

# Function words are tokens like any other, but lighting them up hides the terms that matter.
HIGHLIGHT_STOPWORDS = frozenset(
    "a an and are as at be by do does for from how in is it of on or the to what when where "
    "which who why with".split()
)


_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x3134F),  # CJK Extensions B-H
)


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _fold(token: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", token).casefold())


def word_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, folded token) over the original text, by the project tokenizer's rule
    (workbench.core.tokenize): runs of letters, digits and combining marks; "_" separates;
    a CJK ideograph or kana letter is a token on its own."""
    start = -1
    for index, ch in enumerate(text):
        mark = unicodedata.category(ch)[0] == "M"
        if ch.isalnum() and _is_cjk(ch):
            if start >= 0:
                yield start, index, _fold(text[start:index])
                start = -1
            yield index, index + 1, _fold(ch)
        elif (ch.isalnum() and not _is_cjk(ch)) or (mark and start >= 0):
            if start < 0:
                start = index
        elif mark:  # a mark with nothing before it starts a token, as in the tokenizer
            start = index
        elif start >= 0:
            yield start, index, _fold(text[start:index])
            start = -1
    if start >= 0:
        yield start, len(text), _fold(text[start:])


def query_terms(query_text: str) -> frozenset[str]:
    """The folded terms of a query worth highlighting."""
    return frozenset(t for _, _, t in word_spans(query_text) if t not in HIGHLIGHT_STOPWORDS)


def highlight(text: str, terms: Iterable[str], style: str = "bold reverse") -> Text:
    """`text` as literal rich Text, control characters visible, with whole-word matches of
    `terms` styled (spans computed over the visible text, so they land where they are drawn)."""
    text = visible(text)
    wanted = frozenset(terms)
    result = Text(text)
    if wanted:
        for start, end, token in word_spans(text):
            if token in wanted:
                result.stylize(style, start, end)
    return result
