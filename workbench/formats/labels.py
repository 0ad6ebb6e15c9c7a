"""Label files a judge or another assessor gave: TREC qrels or JSONL {qid, docid, grade}, each
label keeping its line (for `import-labels`' per-line problems and `agree A B`'s files). The
rules applied to them (the scale, unknown queries, the pool) are
`workbench.core.judgments.labels`'."""

from __future__ import annotations

import os

from workbench.core.errors import ProblemCollector
from workbench.core.judgments.labels import Label


def read_jsonl_labels(path: str | os.PathLike[str]) -> tuple[list[Label], dict[str, int]]:
    """Strict JSONL reader: one object per line with "qid", "docid" (non-empty strings), "grade"
    (an integer) and optional "note" (a string). Other fields are ignored and counted (returned
    as field -> lines) so the caller can say so. Every problem is collected as path:line."""
    from workbench.formats.textio import json_objects, read_text

    problems = ProblemCollector(str(path))
    labels: list[Label] = []
    ignored: dict[str, int] = {}
    first_line: dict[tuple[str, str], int] = {}
    for lineno, record in json_objects(read_text(path), problems, '"qid", "docid", "grade"'):
        ok = True
        for key in ("qid", "docid"):
            value = record.get(key)
            if not isinstance(value, str) or not value.strip():
                problems.add(lineno, f'"{key}" must be a non-empty string, found {value!r}')
                ok = False
        grade = record.get("grade")
        if isinstance(grade, bool) or not isinstance(grade, int):
            problems.add(lineno, f'"grade" must be an integer, found {grade!r}')
            ok = False
        note = record.get("note", "")
        if not isinstance(note, str):
            problems.add(lineno, f'"note" must be a string, found {note!r}')
            ok = False
        for key in record:
            if key not in ("qid", "docid", "grade", "note"):
                ignored[key] = ignored.get(key, 0) + 1
        if not ok or not isinstance(grade, int):
            continue
        pair = (record["qid"], record["docid"])
        if pair in first_line:
            problems.add(
                lineno,
                f"query {pair[0]!r} doc {pair[1]!r} labelled twice (first on line "
                f"{first_line[pair]})",
            )
            continue
        first_line[pair] = lineno
        labels.append(Label(pair[0], pair[1], grade, note, lineno))
    if not labels and not problems.count:
        problems.add(None, 'no labels (expected JSON lines with "qid", "docid", "grade")')
    problems.raise_if_any()
    return labels, ignored


def read_qrels_labels(path: str | os.PathLike[str]) -> list[Label]:
    """TREC qrels through the strict shared reader, each label keeping its line number."""
    from workbench.formats.textio import read_text
    from workbench.formats.trec import read_qrels

    qrels = read_qrels(path)
    line_of: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        parts = line.split()
        if len(parts) == 4 and not parts[0].startswith("#"):
            line_of.setdefault((parts[0], parts[2]), lineno)
    return [
        Label(qid, doc_id, grade, "", line_of.get((qid, doc_id), 0))
        for qid, docs in qrels.items()
        for doc_id, grade in docs.items()
    ]


def sniff_format(path: str, given: str | None) -> str:
    """The format given, else jsonl for a .jsonl/.ndjson file and qrels for any other."""
    if given:
        return given
    return "jsonl" if path.lower().endswith((".jsonl", ".ndjson")) else "qrels"
