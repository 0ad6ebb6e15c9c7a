"""TREC qrels (`qid iter docid grade`) and runs (`qid Q0 docid rank score tag`), read strictly.

Readers collect every problem as `path:line: message` and then raise one InputError. The loops
are plain `str.split` over lines with no per-line objects, so a 2-million-line run parses in
a couple of seconds."""

from __future__ import annotations

import math
import os
from itertools import chain, groupby, pairwise
from operator import and_, eq, itemgetter, le, lt
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
    (one warning per file naming how many queries' ranks disagree with the scores).

    The text is read in chunks of whole lines. A chunk is first parsed column-wise (one
    `split` for the chunk, C-level conversions); any doubt about it (a comment, a blank or
    malformed line, a bad number, a duplicate) sends that chunk through the line-by-line
    loop, which names each problem with its line."""
    text = read_text(path)
    problems = ProblemCollector(str(path))
    parsed = _read_run_chunks(text, problems, fast=_SENTINEL not in text)
    if parsed is None:  # a doc listed twice in a query, across chunks: name its line
        problems = ProblemCollector(str(path))
        parsed = _read_run_chunks(text, problems, fast=False)
        assert parsed is not None
    scores, rank_parts, tags = parsed
    if not scores and not problems.count:
        problems.add(None, f"no run lines (expected {RUN_COLUMNS})")
    problems.raise_if_any()
    name = next(iter(tags)) if len(tags) == 1 else Path(path).name
    run = Run(name=name, scores=scores)
    disagreeing = tie_only = 0
    for qid, docs in scores.items():
        parts = rank_parts[qid]
        if _increasing_ranges(parts):
            agree, follows = _file_order_agreement(docs)
        else:
            file_ranks = list(chain.from_iterable(parts))
            agree = _ranks_agree(docs, file_ranks)
            follows = not agree and _ranks_follow_scores(docs, file_ranks)
        if not agree:
            disagreeing += 1
            tie_only += follows
    if disagreeing:
        ties = f" ({tie_only} of them only among tied scores)" if tie_only else ""
        run.warnings.append(
            f"{path}: the rank column disagrees with the scores in {disagreeing} of "
            f"{len(scores)} queries{ties}; order follows the scores (score descending, ties by "
            "docid descending), as trec_eval does"
        )
    return run


def _read_run_chunks(
    text: str, problems: ProblemCollector, fast: bool
) -> tuple[dict[str, dict[str, float]], dict[str, list[range | list[int]]], set[str]] | None:
    """(scores, rank parts, tags) of the whole text, chunk by chunk; None when a fast chunk
    repeats a doc that an earlier chunk gave the same query (then rerun with fast=False)."""
    scores: dict[str, dict[str, float]] = {}
    rank_parts: dict[str, list[range | list[int]]] = {}
    tags: set[str] = set()
    length = len(text)
    pos = line_offset = 0
    while pos < length:
        end = text.find("\n", pos + _CHUNK_CHARS)
        end = length if end < 0 else end + 1
        chunk = text[pos:end]
        pos = end
        if not chunk.endswith("\n"):
            chunk += "\n"
        lines = chunk.count("\n")
        parsed = _parse_run_chunk(chunk, lines) if fast else None
        if parsed is None:
            _read_run_lines(chunk, line_offset, problems, scores, rank_parts, tags)
        else:
            groups, chunk_tags = parsed
            tags |= chunk_tags
            for qid, (docs, parts) in groups.items():
                known = scores.get(qid)
                if known is None:
                    scores[qid] = docs
                    rank_parts[qid] = parts
                else:
                    size = len(known)
                    known.update(docs)
                    if len(known) != size + len(docs):
                        return None
                    rank_parts[qid].extend(parts)
        line_offset += lines
    return scores, rank_parts, tags


_CHUNK_CHARS = 1 << 14
"""About 400 run lines: small enough that a chunk's tokens stay in the CPU cache."""
_SENTINEL = "\x00"
"""Marks each line end among a chunk's tokens (a one-character string: CPython shares it)."""
_LINE_END = "\n\x00\n"
_RANK_TEXT: list[str] = []
"""str(i) for i in 0.. (grown on demand, at most _RANK_TEXT_MAX): the usual rank column."""
_RANK_TEXT_MAX = 100_000


def _parse_run_chunk(
    chunk: str, lines: int
) -> tuple[dict[str, tuple[dict[str, float], list[range | list[int]]]], set[str]] | None:
    """qid -> (docs, rank parts) and the tags of a chunk whose every line is a good run line,
    else None. Each line end becomes a sentinel token, so one `split` keeps the line
    structure: 7 tokens a line, the 7th the sentinel, means 6 columns on every line."""
    tokens = chunk.replace("\n", _LINE_END).split()
    if len(tokens) != 7 * lines or tokens[6::7].count(_SENTINEL) != lines:
        return None
    score_texts = tokens[4::7]
    try:
        values = list(map(float, score_texts))
    except ValueError:
        return None
    total = sum(values)
    if total != total or ("_" in chunk and "_" in "".join(score_texts)):
        return None  # a NaN (or inf - inf: the line loop tells them apart), or 1_000
    doc_ids = tokens[2::7]
    rank_texts = tokens[3::7]
    groups: dict[str, tuple[dict[str, float], list[range | list[int]]]] = {}
    start = 0
    for qid, same in groupby(tokens[0::7]):
        stop = start + len(list(same))
        if qid[0] == "#":
            return None
        docs = dict(zip(doc_ids[start:stop], values[start:stop], strict=True))
        if len(docs) != stop - start:
            return None
        try:
            part = _rank_part(rank_texts[start:stop])
        except ValueError:
            return None
        known = groups.get(qid)
        if known is None:
            groups[qid] = (docs, [part])
        elif known[0].keys().isdisjoint(docs):
            known[0].update(docs)
            known[1].append(part)
        else:
            return None
        start = stop
    return groups, set(tokens[5::7])


def _rank_part(texts: list[str]) -> range | list[int]:
    """The ranks of consecutive lines of one query: a range when they count up by one from
    their first value (compared as text, no int per line), else ints. ValueError if one is
    not an integer."""
    first = texts[0]
    if first.isdigit() and first.isascii():
        start = int(first)
        stop = start + len(texts)
        if stop <= _RANK_TEXT_MAX:
            if len(_RANK_TEXT) < stop:
                _RANK_TEXT.extend(map(str, range(len(_RANK_TEXT), stop)))
            if texts == _RANK_TEXT[start:stop]:
                return range(start, stop)
    return list(map(int, texts))


def _read_run_lines(
    chunk: str,
    line_offset: int,
    problems: ProblemCollector,
    scores: dict[str, dict[str, float]],
    rank_parts: dict[str, list[range | list[int]]],
    tags: set[str],
) -> None:
    """The line-by-line reader: every problem named with its line, good lines kept."""
    last_qid = None
    docs: dict[str, float] = {}
    doc_ranks: list[int] = []
    for lineno, line in enumerate(chunk.split("\n"), line_offset + 1):
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
                doc_ranks = []
                rank_parts[qid] = [doc_ranks]
            else:
                doc_ranks = []
                rank_parts[qid].append(doc_ranks)
        if doc_id in docs:
            problems.add(lineno, f"query {qid!r} lists doc {doc_id!r} twice")
            continue
        docs[doc_id] = score
        doc_ranks.append(rank)
        tags.add(tag)


def _increasing_ranges(parts: list[range | list[int]]) -> bool:
    """True when the parts are ranges whose values strictly increase from one to the next."""
    previous_stop = None
    for part in parts:
        if type(part) is not range:
            return False
        if previous_stop is not None and part.start < previous_stop:
            return False
        previous_stop = part.stop
    return True


def _file_order_agreement(docs: dict[str, float]) -> tuple[bool, bool]:
    """(agree, follow scores) for ranks that strictly increase in file order: they agree when
    the file order is the ordering rule's, and follow the scores when scores never rise."""
    values = list(docs.values())
    if values != sorted(values, reverse=True):
        return False, False
    ids = list(docs)
    # A tie (equal neighbours) whose ids do not descend breaks the rule; checked in C.
    broken = any(map(and_, map(eq, values, values[1:]), map(le, ids, ids[1:])))
    return not broken, True


def _ranks_agree(docs: dict[str, float], file_ranks: list[int]) -> bool:
    """True when ranks strictly increase along the ordering rule (their values may start at 0).
    `file_ranks` follows the file order, as `docs` does; the common case is checked in C."""
    if all(map(lt, file_ranks, file_ranks[1:])):
        return _file_order_agreement(docs)[0]
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
