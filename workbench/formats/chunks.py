"""A run's own chunks, JSONL: one `{"_id", "source", "start", "end"}` a line, `source` a file's
path relative to the corpus folder (as `textfolder` names it), `start`/`end` character offsets
into that file's text (decoded UTF-8, a leading byte-order mark not counted, line endings as
written: the offsets a passage's span records). `"text"` may stand instead of the offsets: it is
looked up in the file and must be found exactly once; with the offsets too, it must be the
text they span.

Strict, as every reader here: a source that is not a file of the corpus, offsets that run past
the file or are not whole numbers, text not found or found twice, a repeated id, an unknown key:
each a problem naming the chunks file and its line, all of them at once."""

from __future__ import annotations

import os
from collections.abc import Mapping

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.measures.chunking import Chunk
from workbench.core.model import SourceSpan
from workbench.formats.beir import found_value, read_jsonl, record_id

CHUNK_KEYS = frozenset({"_id", "source", "start", "end", "text", "metadata"})


def read_chunks(
    path: str | os.PathLike[str], texts: Mapping[str, str], corpus: str = "the corpus"
) -> list[Chunk]:
    """The chunks of `path` in file order; `texts` is each file of the corpus folder `corpus`
    by its source (`textfolder.folder_texts`). InputError naming every bad line."""

    def make(record: dict, line: int, problems: ProblemCollector) -> Chunk | None:
        chunk_id = record_id(record, line, problems)
        source = record.get("source")
        if "source" not in record:
            problems.add(line, "missing 'source' (the file's path relative to the corpus)")
            return None
        if not isinstance(source, str):
            problems.add(line, f"'source' must be a string, found {found_value(source)}")
            return None
        if source not in texts:
            problems.add(line, f"source {quoted(source)} is not a .txt/.md file of {corpus} "
                         "(a path relative to the folder, as 'notes/setup.md')")  # fmt: skip
            return None
        span = _span(record, source, texts[source], line, problems)
        return None if chunk_id is None or span is None else Chunk(chunk_id, span)

    return read_jsonl(path, CHUNK_KEYS, make, "chunk", lambda c: c.chunk_id)


def _span(
    record: dict, source: str, text: str, line: int, problems: ProblemCollector
) -> SourceSpan | None:
    """The chunk's span of `text` (the file `source`), from its offsets or its text."""
    has_offsets = "start" in record or "end" in record
    if not has_offsets and "text" not in record:
        problems.add(line, "missing 'start' and 'end' (character offsets), or 'text'")
        return None
    chunk_text = record.get("text")
    if "text" in record and (not isinstance(chunk_text, str) or not chunk_text):
        problems.add(line, f"'text' must be a non-empty string, found {found_value(chunk_text)}")
        return None
    if not has_offsets:
        assert isinstance(chunk_text, str)
        return _located(chunk_text, source, text, line, problems)
    start, end = record.get("start"), record.get("end")
    for name, value in (("start", start), ("end", end)):
        if name not in record:
            problems.add(
                line, f"missing '{name}' (it goes with '{'end' if name == 'start' else 'start'}')"
            )
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            problems.add(line, f"'{name}' must be a whole number, found {found_value(value)}")
            return None
    assert isinstance(start, int) and isinstance(end, int)
    if not 0 <= start < end:
        problems.add(line, f"'start' {start} and 'end' {end}: need 0 <= start < end")
        return None
    if end > len(text):
        problems.add(line, f"'end' {end} runs past the end of {source} ({len(text):,} "
                     "characters, a leading byte-order mark not counted)")  # fmt: skip
        return None
    if chunk_text is not None and text[start:end] != chunk_text:
        problems.add(line, f"'text' is not the text of {source} from {start} to {end}")
        return None
    return SourceSpan(source, start, end)


def _located(
    chunk_text: str, source: str, text: str, line: int, problems: ProblemCollector
) -> SourceSpan | None:
    """The one place of `chunk_text` in `text`; a problem when it is not there or twice."""
    at = text.find(chunk_text)
    if at < 0:
        problems.add(line, f"'text' is not found in {source} (character for character; give "
                     "'start' and 'end' where the chunker changed the text)")  # fmt: skip
        return None
    again = text.find(chunk_text, at + 1)
    if again >= 0:
        problems.add(line, f"'text' is found twice in {source} (at {at:,} and {again:,}): give "
                     "'start' and 'end' to say which")  # fmt: skip
        return None
    return SourceSpan(source, at, at + len(chunk_text))
