"""The `paragraphs` rule, the rule before merging (`workbench.formats.passages` merges its
blocks): a passage is a paragraph (blocks separated by blank lines); a block made only of
Markdown heading lines joins the paragraph that follows it; a paragraph over 200 words is split
at sentence ends into pieces of at most ~200 words (a single longer sentence is cut at word 200).
Pure text in, text out."""

from __future__ import annotations

import re

MAX_WORDS = 200
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_WORD = re.compile(r"\S+")
_SENTENCE_END = ".!?…。！？।॥؟።"
_CLOSERS = "\"'”’»)]}」』"


def text_blocks(text: str) -> list[str]:
    """Runs of non-blank lines (any line ending), each line without its trailing whitespace."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip():
            current.append(line.rstrip())
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return blocks



def chunk_text(text: str) -> list[str]:
    """The passages of one file's text, in order (pure; the module docstring states the rule)."""
    blocks = text_blocks(text)
    paragraphs: list[str] = []
    pending_headings: list[str] = []
    for block in blocks:
        if all(_HEADING.match(line) for line in block.split("\n")):
            pending_headings.append(block)
            continue
        paragraphs.append("\n".join([*pending_headings, block]))
        pending_headings = []
    if pending_headings:
        paragraphs.append("\n".join(pending_headings))
    passages: list[str] = []
    for paragraph in paragraphs:
        passages.extend(split_long(paragraph))
    return passages


def split_long(paragraph: str, max_words: int = MAX_WORDS) -> list[str]:
    """Pieces of at most `max_words` words, cut after sentence ends where possible; the
    original spacing inside each piece is kept."""
    words = list(_WORD.finditer(paragraph))
    if len(words) <= max_words:
        return [paragraph]
    sentences: list[tuple[int, int]] = []  # (first word index, last word index + 1)
    start = 0
    for i, word in enumerate(words):
        if word.group().rstrip(_CLOSERS).endswith(tuple(_SENTENCE_END)):
            sentences.append((start, i + 1))
            start = i + 1
    if start < len(words):
        sentences.append((start, len(words)))
    pieces: list[tuple[int, int]] = []
    piece_start, piece_end = 0, 0
    for first, end in sentences:
        if end - first > max_words:  # one sentence longer than a piece: cut it at word count
            if piece_end > piece_start:
                pieces.append((piece_start, piece_end))
            for cut in range(first, end, max_words):
                pieces.append((cut, min(cut + max_words, end)))
            piece_start = piece_end = end
        elif end - piece_start > max_words:
            pieces.append((piece_start, piece_end))
            piece_start, piece_end = first, end
        else:
            piece_end = end
    if piece_end > piece_start:
        pieces.append((piece_start, piece_end))
    return [paragraph[words[a].start() : words[b - 1].end()] for a, b in pieces]
