"""Another chunking of the judged files, graded from the judged passages (pure: spans, texts
and grades in, grades out). Judged passages are exact spans of their files (`SourceSpan`), so
a judged set is a set of judged text spans, and any chunk of the same files can be graded
against it.

The mapping rule, stated once (`MappingRule.words`; every output prints it):

- Lengths are characters of the file's text, whitespace not counted: a blank line between two
  passages belongs to neither, so passages that follow each other tile the text.
- A judged passage *counts* for a chunk when the chunk holds at least `holds` (1/2) of the
  passage, or the passage covers at least `covers` (1/2) of the chunk. The chunk's grade is the
  highest grade of the judged passages that count for it.
- The chunk is *unjudged* when no judged passage counts, or when more than `unjudged_max` (1/2)
  of its text lies in no judged passage and its grade is below the relevance threshold (a
  relevant grade stands: text nobody judged can only raise a grade taken as the highest).

Why one half: a chunk that lies over one or two passages overlaps one of them by at least
half of its own text, and a chunk over three or more holds the middle ones whole, so with
halves every chunk of judged text gets a grade; a lower share would let a sliver of a passage
carry its grade, a higher one would leave chunks across a passage boundary ungraded. A chunk
that is exactly a judged passage takes that passage's grade, so scoring the pooled passages
under other ids gives eval's own figures."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.core.model import SourceSpan


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a run's own chunking: its id and the span of its file it is."""

    chunk_id: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class MappingRule:
    """The shares of the mapping rule (the module docstring says why one half each)."""

    holds: float = 0.5
    """A judged passage counts when the chunk holds at least this share of it..."""
    covers: float = 0.5
    """...or when it covers at least this share of the chunk."""
    unjudged_max: float = 0.5
    """More text than this share in no judged passage, and no relevant grade: unjudged."""

    def words(self) -> str:
        """The rule in one sentence, as every output prints it."""
        return (
            f"a chunk takes the highest grade of the judged passages it holds at least "
            f"{self.holds:.0%} of, or that cover at least {self.covers:.0%} of it; it is "
            f"unjudged when none does, or when more than {self.unjudged_max:.0%} of its text "
            "is in no judged passage and that grade is not relevant (characters, whitespace "
            "not counted)"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "holds": self.holds,
            "covers": self.covers,
            "unjudged_max": self.unjudged_max,
            "length": "characters, whitespace not counted",
            "words": self.words(),
        }


RULE = MappingRule()


def text_length(text: str, start: int, end: int) -> int:
    """Characters of `text[start:end]` that are not whitespace: what every share is taken of."""
    return len("".join(text[start:end].split()))


def union_length(pieces: Iterable[tuple[int, int]], text: str) -> int:
    """Characters (whitespace not counted) of the union of the [start, end) `pieces` of `text`:
    text that two overlapping chunks both hold is counted once."""
    total, reach = 0, -1
    for start, end in sorted(pieces):
        start = max(start, reach)
        if start < end:
            total += text_length(text, start, end)
            reach = end
    return total


def overlap(a: SourceSpan, b: SourceSpan) -> tuple[int, int] | None:
    """[start, end) shared by two spans of one file; None when they share nothing."""
    start, end = max(a.start, b.start), min(a.end, b.end)
    return (start, end) if a.source == b.source and start < end else None


class SpanIndex:
    """Spans by file, sorted by start: which of them overlap a given span, without a scan."""

    def __init__(self, spans: Iterable[tuple[str, SourceSpan]]) -> None:
        by_source: dict[str, list[tuple[int, int, str]]] = {}
        for span_id, span in spans:
            by_source.setdefault(span.source, []).append((span.start, span.end, span_id))
        self._files = {}
        for source, items in by_source.items():
            items.sort()
            longest = max(end - start for start, end, _ in items)
            self._files[source] = ([s for s, _, _ in items], items, longest)

    def overlapping(self, span: SourceSpan) -> list[str]:
        """Ids of the spans that share at least one character with `span`, by start."""
        found = self._files.get(span.source)
        if found is None:
            return []
        starts, items, longest = found
        first = bisect_left(starts, span.start - longest)
        last = bisect_left(starts, span.end)
        return [span_id for _, end, span_id in items[first:last] if end > span.start]


@dataclass(frozen=True)
class JudgedSpans:
    """One query's judged passages as text: each passage's span and grade, aliases (copies of
    a judged passage elsewhere) taking their passage's grade."""

    spans: Mapping[str, SourceSpan]
    grades: Mapping[str, int]
    canonical: Mapping[str, str]
    """Each judged passage id (a copy included) -> the judged passage it is a copy of."""
    index: SpanIndex


def judged_spans(
    judged: Mapping[str, int],
    spans: Mapping[str, SourceSpan],
    aliases: Mapping[str, str] | None = None,
) -> JudgedSpans:
    """The judged passages of one query (grade >= 0) with a span, their copies included."""
    grades = {d: g for d, g in judged.items() if g >= 0 and d in spans}
    canonical = {d: d for d in grades}
    for alias, target in (aliases or {}).items():
        if target in grades and alias not in grades and alias in spans:
            grades[alias] = grades[target]
            canonical[alias] = target
    found = {d: spans[d] for d in grades}
    return JudgedSpans(found, grades, canonical, SpanIndex(found.items()))


def chunk_grade(
    chunk: SourceSpan,
    judged: JudgedSpans,
    texts: Mapping[str, str],
    rel_threshold: int = 1,
    rule: MappingRule = RULE,
) -> int | None:
    """The chunk's grade under `rule` from one query's judged passages; None: unjudged."""
    text = texts[chunk.source]
    length = text_length(text, chunk.start, chunk.end)
    if length == 0:
        return None
    grade: int | None = None
    judged_text = 0
    for passage_id in judged.index.overlapping(chunk):
        passage = judged.spans[passage_id]
        shared = overlap(chunk, passage)
        assert shared is not None
        held = text_length(text, *shared)
        judged_text += held
        passage_length = text_length(text, passage.start, passage.end)
        if held >= rule.holds * passage_length or held >= rule.covers * length:
            if held > 0 and (grade is None or judged.grades[passage_id] > grade):
                grade = judged.grades[passage_id]
    if grade is None:
        return None
    unjudged = max(length - judged_text, 0)
    if unjudged > rule.unjudged_max * length and grade < rel_threshold:
        return None
    return grade


def chunk_qrels(
    chunks: Sequence[Chunk],
    qrels: Mapping[str, Mapping[str, int]],
    spans: Mapping[str, SourceSpan],
    texts: Mapping[str, str],
    *,
    rel_threshold: int = 1,
    rule: MappingRule = RULE,
    aliases: Mapping[str, str] | None = None,
    chunk_twins: Mapping[str, str] | None = None,
) -> dict[str, dict[str, int]]:
    """qid -> chunk id -> grade under `rule`, for every query of `qrels` (a chunk left out is
    unjudged). `spans` places the judged passages (and their `aliases`' copies) in their files;
    `chunk_twins` (a chunk -> the identical chunk that stands for it) makes identical chunks
    one chunk, with the highest grade of any of them, as a judged set folds identical
    passages."""
    index = SpanIndex((c.chunk_id, c.span) for c in chunks)
    by_id = {c.chunk_id: c.span for c in chunks}
    twins = chunk_twins or {}
    out: dict[str, dict[str, int]] = {}
    for qid, judged in qrels.items():
        found = judged_spans(judged, spans, aliases)
        near = {c for span in found.spans.values() for c in index.overlapping(span)}
        grades: dict[str, int] = {}
        for chunk_id in sorted(near):
            grade = chunk_grade(by_id[chunk_id], found, texts, rel_threshold, rule)
            if grade is None:
                continue
            key = twins.get(chunk_id, chunk_id)
            grades[key] = max(grade, grades.get(key, grade))
        out[qid] = grades
    return out
