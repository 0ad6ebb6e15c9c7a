"""How one text file becomes passages, as a RAG system would retrieve them (pure: text in, texts
out). Three rules, each stored in a pooled store so that every later read cuts the same way:

- `merged MIN:MAX` (the default, 80:250 words): paragraphs merged into passages of MIN to MAX
  words. Cuts fall where they read best: before a heading, then between paragraphs, then at a
  sentence end; a paragraph longer than MAX is split at sentence ends, a sentence longer than
  MAX at word MAX. A heading (a Markdown `#` line, or a short line without end punctuation
  between a sentence's end and more text) stays with what follows, and a blank line inside a
  sentence (a double-spaced or hard-wrapped file) joins, not splits. Among the cuts that keep
  every passage within MIN:MAX, the fewest and best are chosen; a passage is shorter than MIN
  only where the file is, or where merging it with a neighbour would pass MAX.
- `paragraphs`: a paragraph a passage (the rule before merging; `textfolder.chunk_text`).
- `file`: the whole file one passage.

A passage's text is the file's own from its first word to its last; blocks in it are joined by
one line break after a heading or inside a sentence, by a blank line between paragraphs."""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from pathlib import Path

from workbench.core.errors import InputError
from workbench.formats.paragraphs import chunk_text, text_blocks

KINDS = ("merged", "paragraphs", "file")
DEFAULT_WORDS = (80, 250)
MAX_HEADING_WORDS = 10

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
class PassageRule:
    """How a text file is cut into passages (the module docstring states each rule)."""

    kind: str = "merged"
    min_words: int = DEFAULT_WORDS[0]
    max_words: int = DEFAULT_WORDS[1]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"passage rule {self.kind!r}: expected one of {', '.join(KINDS)}")
        if self.kind == "merged" and not 1 <= self.min_words <= self.max_words:
            raise ValueError(f"passage words {self.min_words}:{self.max_words}: 1 <= MIN <= MAX")

    def __str__(self) -> str:
        """The rule as stored and shown: `merged 80:250`, `paragraphs`, `file`."""
        if self.kind == "merged":
            return f"merged {self.min_words}:{self.max_words}"
        return self.kind

    def wording(self) -> str:
        """The rule in words, for a summary line."""
        if self.kind == "merged":
            return f"paragraphs merged into {self.min_words}-{self.max_words} words"
        return "a paragraph a passage" if self.kind == "paragraphs" else "a file a passage"

    def chunk(self, text: str) -> list[str]:
        """The passages of one file's text, in order."""
        if self.kind == "paragraphs":
            return chunk_text(text)
        if self.kind == "file":
            return merge_passages(text, 0, 0)
        return merge_passages(text, self.min_words, self.max_words)


DEFAULT_RULE = PassageRule()
PARAGRAPHS = PassageRule("paragraphs")
"""The rule of every text folder pooled before rules were recorded (and of the demo corpus,
written a paragraph a passage)."""


def parse_rule(text: str) -> PassageRule | None:
    """A rule from its stored form (`str(rule)`); None when `text` is not one."""
    kind, _, words = text.partition(" ")
    if kind in ("paragraphs", "file") and not words:
        return PassageRule(kind)
    if kind == "merged":
        bounds = parse_words(words)
        if bounds is not None:
            return PassageRule("merged", *bounds)
    return None


def parse_words(text: str) -> tuple[int, int] | None:
    """`MIN:MAX` as (MIN, MAX) with 1 <= MIN <= MAX and MAX >= 10; None when it is not."""
    low, sep, high = text.partition(":")
    if not sep or not (low.isascii() and low.isdigit() and high.isascii() and high.isdigit()):
        return None
    if len(low) > 7 or len(high) > 7:
        return None
    bounds = int(low), int(high)
    return bounds if 1 <= bounds[0] <= bounds[1] and bounds[1] >= 10 else None


def recorded_rule(poolings: list[dict], where: str) -> PassageRule | None:
    """How a store's poolings (`JudgmentStore.poolings()`) cut their text folder: the latest
    rule recorded in their params; for a store pooled before rules were recorded, `PARAGRAPHS`
    (the rule of that time); None when it holds no pooling or only JSONL corpora. A recorded
    rule that is not one is an error naming `where`."""
    params = [p["params"] for p in poolings if isinstance(p.get("params"), dict)]
    rules = [p["passages"] for p in params if isinstance(p.get("passages"), str)]
    if rules:
        rule = parse_rule(rules[-1])
        if rule is None:
            raise InputError([f"{where}: poolings: params: passages {rules[-1]!r} is not a "
                              "passage rule (merged MIN:MAX, paragraphs, file)"])  # fmt: skip
        return rule
    return PARAGRAPHS if any("passages" not in p for p in params) else None


def golden_rule(pool: dict | None, where: str) -> PassageRule | None:
    """How the passages of a golden.yaml's pool were cut: its `pool.params.passages`; for a
    pool exported before rules were recorded, `PARAGRAPHS`; None without a pool."""
    if pool is None:
        return None
    params = pool.get("params") or {}
    return recorded_rule([{"params": params}], where)


def chosen_rule(
    corpus: str | os.PathLike[str],
    asked: PassageRule | None,
    recorded: PassageRule | None,
    source: object,
) -> PassageRule | None:
    """The rule to cut the folder `corpus` by: `recorded` (by the judgments in `source`), else
    `asked`, else DEFAULT_RULE; None when `corpus` is not a folder. Asking for a rule other
    than the recorded one, or for any with a JSONL corpus, is refused: the same ids would name
    other texts."""
    if not Path(corpus).is_dir():
        if asked is not None and Path(corpus).exists():
            raise InputError([f"--passages: {corpus} is a JSONL corpus, whose records are its "
                              "passages; --passages and --passage-words cut a folder of .txt/.md "
                              "files"])  # fmt: skip
        return None
    if asked is not None and recorded is not None and asked != recorded:
        raise InputError([
            f"--passages: {source} holds passages cut as {recorded}, not {asked}: the same ids "
            "would name other texts (leave out --passages and --passage-words to cut them as "
            "they were)"
        ])  # fmt: skip
    return asked or recorded or DEFAULT_RULE


# -- merging ------------------------------------------------------------------------------------


def merge_passages(text: str, min_words: int, max_words: int) -> list[str]:
    """The passages of `text` under `merged MIN:MAX`; `max_words` 0: the whole text as one."""
    blocks = text_blocks(text)
    spans: list[list[tuple[int, int]]] = []  # per block: (start, end) of each word
    inner: list[dict[int, int]] = []  # per block: {word: cost of a cut before it}
    ends_sentence: list[bool] = []
    for block in blocks:
        words = [m.span() for m in _WORD.finditer(block)]
        ends_at = {end: k for k, (_, end) in enumerate(words)}
        cuts = {ends_at[m.end()] + 1: _SENTENCE for m in _SENTENCE_END_RE.finditer(block)}
        ends_sentence.append(cuts.pop(len(words), None) is not None)
        if "\n" in block:
            starts = [start for start, _ in words]
            for line_break in (m.start() for m in _NEWLINE.finditer(block)):
                cuts.setdefault(bisect.bisect_left(starts, line_break), _LINE)
        spans.append(words)
        inner.append(cuts)
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
    starts: list[int], costs: list[int], total: int, min_words: int, max_words: int
) -> list[tuple[int, int]]:
    """The word ranges of the cheapest cutting into passages of at most `max_words` words
    (dynamic programming over the units; of equal costs, the earlier passages the fuller)."""
    bounds = [*starts, total]
    units = len(starts)
    best = [0.0] + [float("inf")] * units
    back = [0] * (units + 1)
    for j in range(1, units + 1):
        end = bounds[j]
        for i in range(j - 1, -1, -1):
            size = end - bounds[i]
            if size > max_words and i < j - 1:
                break
            cost = best[i] + (costs[i] + 1 if i else 0)
            if size < min_words:
                cost += _SHORT + 2 * (min_words - size)
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


# -- what a corpus was cut into -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """How many files became how many passages, and how long the passages are (in words of
    their text)."""

    files: int
    passages: int
    median_words: int
    shortest_words: int
    longest_words: int

    def to_json(self) -> dict[str, int]:
        return {
            "files": self.files,
            "passages": self.passages,
            "median_words": self.median_words,
            "shortest_words": self.shortest_words,
            "longest_words": self.longest_words,
        }

    def line(self) -> str:
        """`423 files -> 1,312 passages, median 142 words (shortest 31, longest 250)`."""
        files = f"{self.files:,} file{'' if self.files == 1 else 's'}"
        passages = f"{self.passages:,} passage{'' if self.passages == 1 else 's'}"
        return (
            f"{files} -> {passages}, median {self.median_words:,} words (shortest "
            f"{self.shortest_words:,}, longest {self.longest_words:,})"
        )


SHORT_MEDIAN = 30
"""A median passage under this many words is warned of: too little to judge or to match."""


def corpus_stats(texts: list[str], files: int) -> CorpusStats:
    """The counts and lengths of `texts`, the passages of `files` files."""
    lengths = sorted(len(text.split()) for text in texts)
    if not lengths:
        return CorpusStats(files, 0, 0, 0, 0)
    return CorpusStats(files, len(lengths), lengths[(len(lengths) - 1) // 2], lengths[0],
                       lengths[-1])  # fmt: skip


def short_passages_warning(stats: CorpusStats, rule: PassageRule | None) -> str | None:
    """What to say when the median passage is under SHORT_MEDIAN words (None when it is not):
    `rule` is how a folder was cut, None for a JSONL corpus."""
    if stats.passages == 0 or stats.median_words >= SHORT_MEDIAN:
        return None
    said = (f"the median passage is {stats.median_words} words ({stats.line()}): too little for"
            " an annotator to judge or a retriever to match")  # fmt: skip
    if rule is None:
        return f"{said}; merge the records of corpus.jsonl into longer passages before pooling"
    if rule.kind == "paragraphs":
        return (f"{said}; --passages merged (the default for a new store) merges paragraphs "
                "into passages of 80-250 words")  # fmt: skip
    if rule.kind == "merged" and rule.max_words < SHORT_MEDIAN:
        return f"{said}; --passage-words {rule.min_words}:{rule.max_words} asks for that"
    return f"{said}: most files hold no more (a file shorter than a passage is one passage)"
