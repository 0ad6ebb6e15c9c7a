"""TREC qrels (`qid iter docid grade`) and runs (`qid Q0 docid rank score tag`), read strictly.

Readers collect every problem as `path:line: message` and then raise one InputError. The loops
are plain `str.split` over lines with no per-line objects, so a 2-million-line run parses in
a couple of seconds."""

from __future__ import annotations

import math
import os
from itertools import pairwise
from operator import itemgetter
from pathlib import Path

from workbench.atomic import atomic_write_text
from workbench.errors import InputError, ProblemCollector
from workbench.formats.textio import has_whitespace, read_text
from workbench.model import Qrels, Run, order_pairs

QRELS_COLUMNS = "'qid iter docid grade'"
RUN_COLUMNS = "'qid Q0 docid rank score tag'"
_SCORE_THEN_ID = itemgetter(1, 0)


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Any integer grade is kept: negatives mean 'pooled but not judged' (as in trec_eval) and
    grades above 3 are gains; blank lines and lines starting with '#' are skipped."""
    text = read_text(path)
    problems = ProblemCollector(str(path))
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
        try:
            grade = int(grade_text)
        except ValueError:
            problems.add(lineno, f"grade {grade_text!r} is not an integer")
            continue
        if "_" in grade_text:
            problems.add(lineno, f"grade {grade_text!r} is not a plain integer")
            continue
        judged = qrels.get(qid)
        if judged is None:
            judged = qrels[qid] = {}
        elif doc_id in judged:
            problems.add(
                lineno,
                f"query {qid!r} doc {doc_id!r} judged twice (grade {judged[doc_id]} on an "
                f"earlier line, {grade} here)",
            )
            continue
        judged[doc_id] = grade
        pairs += 1
    if not pairs and not problems.count:
        problems.add(None, f"no qrels lines (expected {QRELS_COLUMNS})")
    problems.raise_if_any()
    return qrels


def write_qrels(path: str | os.PathLike[str], qrels: Qrels, header: str | None = None) -> None:
    """Sorted by qid then docid, iteration column 0; `header` lines become '# ' comments."""
    _check_ids(path, ((qid, docs) for qid, docs in qrels.items()))
    lines: list[str] = []
    if header:
        lines.extend(f"# {h}".rstrip() for h in header.split("\n"))
    for qid in sorted(qrels):
        judged = qrels[qid]
        lines.extend(f"{qid} 0 {doc_id} {int(judged[doc_id])}" for doc_id in sorted(judged))
    atomic_write_text(path, "".join(f"{line}\n" for line in lines))


def read_run(path: str | os.PathLike[str]) -> Run:
    """Scores as dicts; order comes from the ordering rule, so the rank column is only checked
    (one warning per file naming how many queries' ranks disagree with the scores)."""
    text = read_text(path)
    problems = ProblemCollector(str(path))
    scores: dict[str, dict[str, float]] = {}
    ranks: dict[str, list[int]] = {}
    tags: set[str] = set()
    last_qid = None
    docs: dict[str, float] = {}
    doc_ranks: list[int] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        parts = line.split()
        if len(parts) != 6:
            if not parts or parts[0][0] == "#":
                continue
            problems.add(lineno, f"expected 6 columns {RUN_COLUMNS}, found {len(parts)}")
            continue
        qid, _, doc_id, rank_text, score_text, tag = parts
        if qid[0] == "#":
            continue
        try:
            score = float(score_text)
        except ValueError:
            problems.add(lineno, f"score {score_text!r} is not a number")
            continue
        if score != score or "_" in score_text:
            problems.add(lineno, f"score {score_text!r} is not a usable number")
            continue
        try:
            rank = int(rank_text)
        except ValueError:
            problems.add(lineno, f"rank {rank_text!r} is not an integer")
            continue
        if qid != last_qid:
            last_qid = qid
            docs = scores.get(qid)  # type: ignore[assignment]
            if docs is None:
                docs = scores[qid] = {}
                doc_ranks = ranks[qid] = []
            else:
                doc_ranks = ranks[qid]
        if doc_id in docs:
            problems.add(lineno, f"query {qid!r} lists doc {doc_id!r} twice")
            continue
        docs[doc_id] = score
        doc_ranks.append(rank)
        tags.add(tag)
    if not scores and not problems.count:
        problems.add(None, f"no run lines (expected {RUN_COLUMNS})")
    problems.raise_if_any()
    name = next(iter(tags)) if len(tags) == 1 else Path(path).name
    run = Run(name=name, scores=scores)
    disagreeing = tie_only = 0
    for qid, docs in scores.items():
        if not _ranks_agree(docs, ranks[qid]):
            disagreeing += 1
            tie_only += _ranks_follow_scores(docs, ranks[qid])
    if disagreeing:
        ties = f" ({tie_only} of them only among tied scores)" if tie_only else ""
        run.warnings.append(
            f"{path}: the rank column disagrees with the scores in {disagreeing} of "
            f"{len(scores)} queries{ties}; order follows the scores (score descending, ties by "
            "docid descending), as trec_eval does"
        )
    return run


def _ranks_agree(docs: dict[str, float], file_ranks: list[int]) -> bool:
    """True when ranks strictly increase along the ordering rule (their values may start at 0).
    `file_ranks` follows the file order, as `docs` does; the common case is checked in C."""
    values = list(docs.values())
    if file_ranks == sorted(set(file_ranks)) and values == sorted(values, reverse=True):
        if len(set(values)) == len(values):
            return True
        ids = list(docs)
        return all(ids[i] > ids[i + 1] for i in range(len(ids) - 1) if values[i] == values[i + 1])
    rank_of = dict(zip(docs, file_ranks, strict=True))
    rank_seq = [rank_of[d] for d in order_pairs(docs.items())]
    return all(a < b for a, b in pairwise(rank_seq))


def _ranks_follow_scores(docs: dict[str, float], file_ranks: list[int]) -> bool:
    """True when ordering by rank puts scores in non-increasing order: the ranks then differ
    from the ordering rule only in how they break ties."""
    by_rank = [score for _, score in sorted(zip(file_ranks, docs.values(), strict=True))]
    return all(a >= b for a, b in pairwise(by_rank))


def write_run(path: str | os.PathLike[str], run: Run, tag: str | None = None) -> None:
    """Queries sorted by id; within each, the ordering rule, rank = 1-based position; scores
    written with `repr` so they read back exactly."""
    tag = run.name if tag is None else tag
    problems: list[str] = []
    if not tag or has_whitespace(tag):
        problems.append(f"{path}: run tag {tag!r} must be one word without spaces")
    for qid, docs in run.scores.items():
        for score in docs.values():
            if math.isnan(score):
                problems.append(f"{path}: query {qid!r} has a NaN score")
                break
    try:
        _check_ids(path, run.scores.items())
    except InputError as exc:
        problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    lines: list[str] = []
    for qid in sorted(run.scores):
        # The ordering rule (as model.order_pairs) with a C-level key: this runs per line.
        ordered = sorted(run.scores[qid].items(), key=_SCORE_THEN_ID, reverse=True)
        lines.extend(
            f"{qid} Q0 {doc_id} {position} {float(score)!r} {tag}\n"
            for position, (doc_id, score) in enumerate(ordered, 1)
        )
    atomic_write_text(path, "".join(lines))


def _check_ids(path: str | os.PathLike[str], groups) -> None:  # type: ignore[no-untyped-def]
    """Ids with whitespace (or empty, or starting with '#') cannot be written as columns."""
    bad: list[str] = []
    for qid, docs in groups:
        if not qid or has_whitespace(qid) or qid.startswith("#"):
            bad.append(f"{path}: query id {qid!r} cannot be written as a TREC column")
        bad.extend(
            f"{path}: doc id {doc_id!r} (query {qid!r}) cannot be written as a TREC column"
            for doc_id in docs
            if not doc_id or has_whitespace(doc_id)
        )
    if bad:
        raise InputError(bad)
