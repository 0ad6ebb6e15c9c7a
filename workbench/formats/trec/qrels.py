"""The TREC qrels reader."""

from __future__ import annotations

import os

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.limits import MAX_ID_CHARS
from workbench.core.model import Qrels
from workbench.formats.textio import has_token_control, int_problem, plain_int, read_text, trec_text
from workbench.formats.trec.columns import QRELS_COLUMNS, id_problems


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Any integer grade is kept: negatives mean 'pooled but not judged' (as in trec_eval) and
    grades above 3 are gains; blank lines and lines starting with '#' are skipped. A grade is
    ASCII digits with an optional '-' (`textio.PLAIN_INT`), within 64 bits."""
    text = trec_text(read_text(path))
    problems = ProblemCollector(str(path))
    check_ids = has_token_control(text)
    qrels: Qrels = {}
    pairs = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        parts = line.split()
        if len(parts) != 4:
            if not parts or parts[0][0] == "#":
                continue
            problems.add(lineno, f"expected 4 columns {QRELS_COLUMNS}, found {len(parts)}")
            continue
        qid, _, doc_id, grade_text = parts
        if qid[0] == "#":
            continue
        if grade_text.isdigit() and grade_text.isascii() and len(grade_text) < 19:
            grade: int | None = int(grade_text)  # the common case, checked in C
        else:
            grade = plain_int(grade_text)
        if grade is None:
            problems.add(lineno, f"grade {quoted(grade_text)} {int_problem(grade_text)}")
            continue
        long_line = len(line) > MAX_ID_CHARS  # an id may be too long: checked (rare, cheap)
        ids = ("query id", qid), ("doc id", doc_id)
        if (check_ids or long_line) and id_problems(problems, lineno, *ids):
            continue
        judged = qrels.get(qid)
        if judged is None:
            judged = qrels[qid] = {}
        elif doc_id in judged:
            problems.add(
                lineno,
                f"query {quoted(qid)} doc {quoted(doc_id)} judged twice (grade {judged[doc_id]} "
                f"on an earlier line, {grade} here)",
            )
            continue
        judged[doc_id] = grade
        pairs += 1
    if not pairs and not problems.count:
        problems.add(None, f"no qrels lines (expected {QRELS_COLUMNS})")
    problems.raise_if_any()
    return qrels
