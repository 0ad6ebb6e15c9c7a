"""BEIR-style JSONL: corpus `{"_id", "title", "text"}` and queries `{"_id", "text", "narrative"?}`.

Strict: each line one JSON object; a missing `_id`/`text`, a non-string field, an unknown key or
a repeated id is a problem naming its line. `metadata` is tolerated (a query's
`metadata.narrative` is used when there is no top-level `narrative`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TypeVar

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.limits import MAX_PASSAGE_CHARS, MAX_QUERY_CHARS, length_problem
from workbench.core.model import Doc, Query
from workbench.formats.textio import id_problem, json_objects, nfc, query_id_problem, read_text

T = TypeVar("T")

CORPUS_KEYS = frozenset({"_id", "title", "text", "metadata"})
QUERY_KEYS = frozenset({"_id", "text", "narrative", "metadata"})


def read_corpus(path: str | os.PathLike[str]) -> list[Doc]:
    """Passages in file order; an empty `text` is allowed (title-only documents exist)."""

    def make(record: dict, line: int, problems: ProblemCollector) -> Doc | None:
        doc_id = record_id(record, line, problems)
        text = _string(record, "text", line, problems, required=True, limit=MAX_PASSAGE_CHARS)
        title = _string(record, "title", line, problems, required=False, limit=MAX_PASSAGE_CHARS)
        if doc_id is None or text is None or title is None:
            return None
        return Doc(doc_id=doc_id, text=text, title=title)

    return read_jsonl(path, CORPUS_KEYS, make, "doc", lambda d: d.doc_id)


def read_queries(path: str | os.PathLike[str]) -> list[Query]:
    """Queries in file order; `text` must be non-empty."""

    def make(record: dict, line: int, problems: ProblemCollector) -> Query | None:
        query_id = record_id(record, line, problems, query=True)
        text = _string(record, "text", line, problems, required=True, limit=MAX_QUERY_CHARS)
        narrative = _string(record, "narrative", line, problems, required=False,
                            limit=MAX_QUERY_CHARS)  # fmt: skip
        if "narrative" not in record and isinstance(record.get("metadata"), dict):
            from_metadata = record["metadata"].get("narrative")
            if isinstance(from_metadata, str):
                narrative = from_metadata
                if too_long := length_problem(narrative, MAX_QUERY_CHARS):
                    problems.add(line, f"'metadata.narrative' {too_long}")
                    return None
        if text is not None and not text.strip():
            problems.add(line, f"query {quoted(query_id or '?')}: 'text' is empty")
            return None
        if query_id is None or text is None or narrative is None:
            return None
        return Query(query_id=query_id, text=text, narrative=narrative)

    return read_jsonl(path, QUERY_KEYS, make, "query", lambda q: q.query_id)


def read_jsonl(
    path: str | os.PathLike[str],
    allowed: frozenset[str],
    make: Callable[[dict, int, ProblemCollector], T | None],
    kind: str,
    key: Callable[[T], str],
) -> list[T]:
    text = read_text(path)
    problems = ProblemCollector(str(path))
    records: list[T] = []
    first_line: dict[str, int] = {}
    for lineno, record in json_objects(text, problems):
        unknown = sorted(set(record) - allowed)
        if unknown:
            shown = ", ".join(map(quoted, unknown[:5])) + (", …" if len(unknown) > 5 else "")
            problems.add(lineno, f"unknown key(s) {shown} (allowed: {sorted(allowed)})")
        item = make(record, lineno, problems)
        if item is None or unknown:
            continue
        item_id = key(item)
        if item_id in first_line:
            problems.add(
                lineno,
                f"duplicate {kind} id {quoted(item_id)} (first on line {first_line[item_id]})",
            )
            continue
        first_line[item_id] = lineno
        records.append(item)
    if not records and not problems.count:
        problems.add(None, f"no {kind} records (expected one JSON object per line)")
    problems.raise_if_any()
    return records


def record_id(
    record: dict, line: int, problems: ProblemCollector, *, query: bool = False
) -> str | None:
    """Ids are strings, taken in NFC; a JSON integer is accepted as its decimal text (some
    exports write numeric ids), anything else (float, bool, null; empty, spaces, control
    characters: see `textio.id_problem`; a query id starting with '#') is a problem."""
    if "_id" not in record:
        problems.add(line, "missing '_id'")
        return None
    value = record["_id"]
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        problems.add(line, f"'_id' must be a string, found {found_value(value)}")
        return None
    value = nfc(value)
    problem = query_id_problem(value) if query else id_problem(value)
    if problem:
        problems.add(line, f"'_id' {quoted(value)} {problem}")
        return None
    return value


def _string(
    record: dict, field: str, line: int, problems: ProblemCollector, *, required: bool,
    limit: int,
) -> str | None:  # fmt: skip
    if field not in record:
        if required:
            problems.add(line, f"missing '{field}'")
            return None
        return ""
    value = record[field]
    if not isinstance(value, str):
        problems.add(line, f"'{field}' must be a string, found {found_value(value)}")
        return None
    too_long = length_problem(value, limit)
    if too_long:
        problems.add(line, f"'{field}' {too_long}")
        return None
    return value


def found_value(value: object) -> str:
    """A JSON value for a message: a scalar as written (cut at 40 characters), or its kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value)
    return text if len(text) <= 40 else f"{text[:40]}…"
