"""The one tokenizer (BM25, the adaptive queue's similarities, the app's highlights): Unicode-aware,
no stemming, no stopwords."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache

TOKENIZER_VERSION = "1"
"""Part of every BM25 cache key: bump it whenever `tokenize` changes its output."""

_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0003134f"  # CJK Extensions B-H
)


def class_ranges(codepoints: list[int]) -> str:
    """Codepoints as a regex character-class body of escaped ranges."""
    parts: list[str] = []
    start = prev = codepoints[0]
    for cp in codepoints[1:] + [-1]:
        if cp == prev + 1:
            prev = cp
            continue
        parts.append(re.escape(chr(start)) + ("" if start == prev else "-" + re.escape(chr(prev))))
        start = prev = cp
    return "".join(parts)


def mark_codepoints() -> list[int]:
    """Every combining mark (category M) of this Python's `unicodedata`, by a scan of every
    codepoint (about 0.1 s idle, seconds on a loaded machine: `_pattern` reads the table)."""
    return [cp for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp))[0] == "M"]


def mark_class() -> str:
    """The combining marks as a character-class body: from `unicode_marks` when it was written
    for this Unicode version, else scanned."""
    from workbench.core.unicode_marks import MARK_RANGES, UNICODE_VERSION

    if UNICODE_VERSION != unicodedata.unidata_version:
        return class_ranges(mark_codepoints())
    parts = []
    for span in MARK_RANGES.split():
        first, _, last = span.partition("-")
        start = int(first, 16)
        stop = int(last, 16) if last else start
        parts.append(re.escape(chr(start)) + ("" if start == stop else "-" + re.escape(chr(stop))))
    return "".join(parts)


@cache
def _pattern() -> re.Pattern[str]:
    """Built on first use: `re` has no \\p{M}, so the combining marks are listed."""
    # A CJK letter alone (the ranges also hold punctuation and unassigned points: the lookahead
    # keeps letters only), or a run of letters/digits (not "_", not CJK) and combining marks.
    return re.compile(f"(?=[^\\W_])[{_CJK}]|(?:[^\\W_{_CJK}]|[{mark_class()}])+")


_ASCII_WORD = re.compile("[a-z0-9]+")
"""The same tokens on ASCII text, where NFC does nothing, casefold is lower() and the word
characters are letters and digits: about five times faster on a large English corpus."""


def tokenize(text: str) -> list[str]:
    """NFC, casefold, NFC again (folding can denormalize), then runs of letters, digits and
    combining marks in any script.

    Combining marks stay inside their word (Yoruba "ọjọ́", Devanagari vowel signs), CJK
    ideographs and kana become one token per character, and "_" separates like punctuation."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    return _pattern().findall(folded)
