"""How one text file becomes passages, as a RAG system would retrieve them (pure: text in, texts
out). Four rules, each stored in a pooled store so that every later read cuts the same way:

- `blocks MIN:MAX [rows N]` (the default `blocks 80:250 rows 20`): blocks merged into passages
  of MIN to MAX words, each passage an exact span of its file (`Piece`: characters [start, end)
  of the text `textio.read_text` gives, line endings and indentation as written). A Markdown
  file (.md) is cut between the blocks markdown-it-py parses (`markdown_blocks`): never inside
  a fenced block, a table, a list item or an admonition unless that block alone is longer than
  a passage, and each passage keeps the headings it sits under. With `rows N` a Markdown
  passage is also at most N rows as the app renders it 96 columns wide (the passage box of a
  100-column terminal: `markdown_rows.rendered_rows`), so that it shows whole on one screen
  (code-heavy docs take more rows than words). A plain text file is cut as under `merged`, by
  words only. Stores pooled with `blocks MIN:MAX` (before rows) keep it.
- `merged MIN:MAX` (the default before `blocks`): paragraphs merged into passages of MIN to MAX
  words. Cuts fall where they read best: before a heading, then between paragraphs, then at a
  sentence end; a paragraph longer than MAX is split at sentence ends, a sentence longer than
  MAX at word MAX. A heading (a Markdown `#` line, or a short line without end punctuation
  between a sentence's end and more text) stays with what follows, and a blank line inside a
  sentence (a double-spaced or hard-wrapped file) joins, not splits. Among the cuts that keep
  every passage within MIN:MAX, the fewest and best are chosen; a passage is shorter than MIN
  only where the file is, or where merging it with a neighbour would pass MAX.
- `paragraphs`: a paragraph a passage (the rule before merging; `textfolder.chunk_text`).
- `file`: the whole file one passage.

Under `merged`, a passage's text is the file's own from its first word to its last; blocks in it
are joined by one line break after a heading or inside a sentence, by a blank line between
paragraphs (so it is not an exact span: the rule of stores pooled before `blocks`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from workbench.core.errors import InputError
from workbench.formats.cutting import Piece, markdown_pieces, merge_passages, text_pieces
from workbench.formats.paragraphs import chunk_text

KINDS = ("blocks", "merged", "paragraphs", "file")
SIZED = ("blocks", "merged")
"""The rules that take MIN:MAX words."""
MIN_ROWS = 5
"""`rows N` below this would cut prose mid-paragraph everywhere."""
DEFAULT_WORDS = (80, 250)
DEFAULT_ROWS = 20
"""A Markdown passage's rendered rows at most: with its heading path and 'end of passage' it
fits the 24 rows the passage box has at 100x30 (the narrative folded), with room for the row
estimate's misses (at most 4 on Textual's docs)."""


@dataclass(frozen=True, slots=True)
class PassageRule:
    """How a text file is cut into passages (the module docstring states each rule)."""

    kind: str = "blocks"
    min_words: int = DEFAULT_WORDS[0]
    max_words: int = DEFAULT_WORDS[1]
    max_rows: int = 0
    """`blocks`: a Markdown passage's rendered rows at most (0: no limit, the rule before rows)."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"passage rule {self.kind!r}: expected one of {', '.join(KINDS)}")
        if self.kind in SIZED and not 1 <= self.min_words <= self.max_words:
            raise ValueError(f"passage words {self.min_words}:{self.max_words}: 1 <= MIN <= MAX")
        if self.max_rows and (self.kind != "blocks" or self.max_rows < MIN_ROWS):
            raise ValueError(f"passage rows {self.max_rows}: blocks only, at least {MIN_ROWS}")

    def __str__(self) -> str:
        """The rule as stored and shown: `blocks 80:250 rows 20`, `blocks 80:250`, `merged
        80:250`, `paragraphs`, `file`."""
        rows = f" rows {self.max_rows}" if self.max_rows else ""
        if self.kind in SIZED:
            return f"{self.kind} {self.min_words}:{self.max_words}{rows}"
        return self.kind

    def wording(self) -> str:
        """The rule in words, for a summary line."""
        if self.kind == "blocks" and self.max_rows:
            return (f"blocks merged into {self.min_words}-{self.max_words} words, Markdown at most "
                    f"{self.max_rows} rows on screen, exact spans")  # fmt: skip
        if self.kind == "blocks":
            return f"blocks merged into {self.min_words}-{self.max_words} words, exact spans"
        if self.kind == "merged":
            return f"paragraphs merged into {self.min_words}-{self.max_words} words"
        return "a paragraph a passage" if self.kind == "paragraphs" else "a file a passage"

    def chunk(self, text: str, markdown: bool = False) -> list[str]:
        """The passages of one file's text, in order (`markdown`: a .md file)."""
        if self.kind == "blocks":
            return [text[p.start : p.end] for p in self.pieces(text, markdown)]
        if self.kind == "paragraphs":
            return chunk_text(text)
        if self.kind == "file":
            return merge_passages(text, 0, 0)
        return merge_passages(text, self.min_words, self.max_words)

    def pieces(self, text: str, markdown: bool = False) -> list[Piece]:
        """The passages of one file's text as spans of it (the `blocks` rule; the others make
        no exact spans: an empty list)."""
        if self.kind != "blocks":
            return []
        if markdown:
            return markdown_pieces(text, self.min_words, self.max_words, self.max_rows)
        return text_pieces(text, self.min_words, self.max_words)


DEFAULT_RULE = PassageRule(max_rows=DEFAULT_ROWS)
PARAGRAPHS = PassageRule("paragraphs")
"""The rule of every text folder pooled before rules were recorded (and of the demo corpus,
written a paragraph a passage)."""


def parse_rule(text: str) -> PassageRule | None:
    """A rule from its stored form (`str(rule)`); None when `text` is not one."""
    kind, _, words = text.partition(" ")
    if kind in ("paragraphs", "file") and not words:
        return PassageRule(kind)
    words, said, rows = words.partition(" rows ")
    bounds = parse_words(words) if kind in SIZED else None
    if bounds is None:
        return None
    if not said:
        return PassageRule(kind, *bounds)
    max_rows = parse_rows(rows) if kind == "blocks" else None
    return None if max_rows is None else PassageRule(kind, *bounds, max_rows)


def parse_rows(text: str) -> int | None:
    """`N` rows, a whole number from MIN_ROWS to 9999; None when it is not."""
    if not (text.isascii() and text.isdigit() and len(text) <= 4):
        return None
    return int(text) if int(text) >= MIN_ROWS else None


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
                              "passage rule (blocks MIN:MAX, merged MIN:MAX, paragraphs, "
                              "file)"])  # fmt: skip
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
            "would name other texts (leave out --passages, --passage-words and --passage-rows "
            "to cut them as they were)"
        ])  # fmt: skip
    return asked or recorded or DEFAULT_RULE


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
        return (f"{said}; --passages blocks (the default for a new store) merges blocks "
                "into passages of 80-250 words")  # fmt: skip
    if rule.kind in SIZED and rule.max_words < SHORT_MEDIAN:
        return f"{said}; --passage-words {rule.min_words}:{rule.max_words} asks for that"
    return f"{said}: most files hold no more (a file shorter than a passage is one passage)"
