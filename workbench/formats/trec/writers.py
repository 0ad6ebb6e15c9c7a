"""TREC qrels and run writers: deterministic order, refused (InputError, nothing written)
when an id, a grade or a score would not read back as itself."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.model import ORDERING_KEY, Qrels, Run
from workbench.formats.atomic import atomic_write_text
from workbench.formats.textio import INT64, id_problem, query_id_problem


def write_qrels(path: str | os.PathLike[str], qrels: Qrels, header: str | None = None) -> None:
    """`qrels_text` written to `path` (InputError, nothing written, when it cannot be)."""
    atomic_write_text(path, qrels_text(qrels, header, name=os.fspath(path)))


def qrels_text(qrels: Qrels, header: str | None = None, *, name: str) -> str:
    """Sorted by qid then docid, iteration column 0; `header` lines become '# ' comments.
    Refused (InputError naming the file `name`) when an id would not read back as itself."""
    problems = ProblemCollector(name)
    _check_ids(problems, qrels.items())
    for qid, judged in qrels.items():
        for doc_id, grade in judged.items():
            if not _writable_grade(grade):
                problems.add(
                    None, f"query {quoted(qid)} doc {quoted(doc_id)}: grade {quoted(grade)} is not "
                    "an integer within 64 bits",
                )  # fmt: skip
    problems.raise_if_any()
    lines: list[str] = []
    if header:
        lines.extend(f"# {h}".rstrip() for h in header.split("\n"))
    for qid in sorted(qrels):
        judged = qrels[qid]
        lines.extend(f"{qid} 0 {doc_id} {int(judged[doc_id])}" for doc_id in sorted(judged))
    return "".join(f"{line}\n" for line in lines)


def _writable_grade(grade: object) -> bool:
    try:
        return int(grade) == grade and int(grade) in INT64  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return False


def write_run(path: str | os.PathLike[str], run: Run, tag: str | None = None) -> None:
    """Queries sorted by id; within each, the ordering rule, rank = 1-based position; scores
    written with `repr` so they read back exactly. Refused (InputError, nothing written) when
    an id or the tag would not read back as itself, or a score is not finite."""
    tag = run.name if tag is None else tag
    problems = ProblemCollector(str(path))
    tag_problem = id_problem(tag)
    if tag_problem:
        problems.add(None, f"run tag {quoted(tag)} {tag_problem}: it must be one word")
    for qid, docs in run.scores.items():
        for doc_id, score in docs.items():
            if not math.isfinite(score):
                where = f"query {quoted(qid)} doc {quoted(doc_id)}"
                problems.add(None, f"{where}: score {quoted(score)} is not a finite number")
                break
    _check_ids(problems, run.scores.items())
    problems.raise_if_any()
    lines: list[str] = []
    for qid in sorted(run.scores):
        # The ordering rule (as model.order_pairs) with a C-level key: this runs per line.
        ordered = sorted(run.scores[qid].items(), key=ORDERING_KEY, reverse=True)
        lines.extend(
            f"{qid} Q0 {doc_id} {position} {float(score)!r} {tag}\n"
            for position, (doc_id, score) in enumerate(ordered, 1)
        )
    atomic_write_text(path, "".join(lines))


def _check_ids(problems: ProblemCollector, groups: Iterable[tuple[str, Iterable[str]]]) -> None:
    """Each id that would not read back as itself from a TREC column (`textio.id_problem`;
    a query id starting with '#' would make a comment line)."""
    for qid, docs in groups:
        problem = query_id_problem(qid)
        if problem:
            problems.add(None, f"query id {quoted(qid)} {problem}: not writable as a TREC column")
        for doc_id in docs:
            problem = id_problem(doc_id)
            if problem:
                problems.add(
                    None,
                    f"doc id {quoted(doc_id)} (query {quoted(qid)}) {problem}: not writable as "
                    "a TREC column",
                )
