"""TREC qrels (`qid iter docid grade`) and runs (`qid Q0 docid rank score tag`), read strictly.

Readers collect every problem as `path:line: message` and then raise one InputError. The loops
are plain `str.split` over lines with no per-line objects, so a 2-million-line run parses in
a couple of seconds."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from itertools import chain, groupby, pairwise
from operator import and_, eq, le, lt
from pathlib import Path

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.model import ORDERING_KEY, Qrels, Run, order_pairs
from workbench.formats.atomic import atomic_write_text
from workbench.formats.textio import (
    INT64,
    encode_id,
    has_token_control,
    id_problem,
    int_problem,
    plain_int,
    read_text,
)

QRELS_COLUMNS = "'qid iter docid grade'"
RUN_COLUMNS = "'qid Q0 docid rank score tag'"


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Any integer grade is kept: negatives mean 'pooled but not judged' (as in trec_eval) and
    grades above 3 are gains; blank lines and lines starting with '#' are skipped. A grade is
    ASCII digits with an optional '-' (`textio.PLAIN_INT`), within 64 bits."""
    text = read_text(path)
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
        if check_ids and _id_problems(problems, lineno, ("query id", qid), ("doc id", doc_id)):
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


def _id_problems(problems: ProblemCollector, lineno: int, *ids: tuple[str, str]) -> bool:
    """Add a problem for each (what, value) of a line's ids that `id_problem` refuses (in a
    column, only a control character can be wrong); True if one was."""
    found = False
    for what, value in ids:
        problem = id_problem(value)
        if problem:
            problems.add(lineno, f"{what} {quoted(value)} {problem}")
            found = True
    return found


def write_qrels(path: str | os.PathLike[str], qrels: Qrels, header: str | None = None) -> None:
    """Sorted by qid then docid, iteration column 0; `header` lines become '# ' comments.
    Refused (InputError, nothing written) when an id would not read back as itself."""
    problems = ProblemCollector(str(path))
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
    atomic_write_text(path, "".join(f"{line}\n" for line in lines))


def _writable_grade(grade: object) -> bool:
    try:
        return int(grade) == grade and int(grade) in INT64  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return False


def read_run(path: str | os.PathLike[str]) -> Run:
    """Scores as dicts; order comes from the ordering rule, so the rank column is only checked
    (one warning per file naming how many queries' ranks disagree with the scores).

    The text is read in chunks of whole lines. A chunk is first parsed column-wise (one
    `split` for the chunk, C-level conversions); any doubt about it (a comment, a blank or
    malformed line, a bad number, a duplicate) sends that chunk through the line-by-line
    loop, which names each problem with its line. Scores are finite ASCII numbers, ranks
    ASCII integers (`textio.PLAIN_INT`)."""
    text = read_text(path)
    problems = ProblemCollector(str(path))
    check_ids = has_token_control(text)  # then every line is checked (the sentinel is one)
    parsed = _read_run_chunks(text, problems, fast=not check_ids, check_ids=check_ids)
    if parsed is None:  # a doc listed twice in a query, across chunks: name its line
        problems = ProblemCollector(str(path))
        parsed = _read_run_chunks(text, problems, fast=False, check_ids=check_ids)
        assert parsed is not None
    scores, rank_parts, tags = parsed
    if not scores and not problems.count:
        problems.add(None, f"no run lines (expected {RUN_COLUMNS})")
    problems.raise_if_any()
    # Mixed tags: the file's name, made an id (a tag column, a system name) as a path is.
    name = next(iter(tags)) if len(tags) == 1 else encode_id(Path(path).name)
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
    text: str, problems: ProblemCollector, fast: bool, check_ids: bool
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
            _read_run_lines(chunk, line_offset, problems, scores, rank_parts, tags, check_ids)
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
    joined = "".join(score_texts)
    if not math.isfinite(sum(values)) or not joined.isascii() or "_" in joined:
        return None  # nan, inf (or a sum that overflows), 1_000, ３: the line loop decides
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
    not a plain integer of at most 18 digits (the line loop decides longer ones)."""
    first = texts[0]
    if first.isdigit() and first.isascii():
        start = int(first)
        stop = start + len(texts)
        if stop <= _RANK_TEXT_MAX:
            if len(_RANK_TEXT) < stop:
                _RANK_TEXT.extend(map(str, range(len(_RANK_TEXT), stop)))
            if texts == _RANK_TEXT[start:stop]:
                return range(start, stop)
    if not _PLAIN_INTS.fullmatch(" ".join(texts)):
        raise ValueError("not plain integers")
    return list(map(int, texts))


_PLAIN_INTS = re.compile(r"-?[0-9]{1,18}(?: -?[0-9]{1,18})*")


def _read_run_lines(
    chunk: str,
    line_offset: int,
    problems: ProblemCollector,
    scores: dict[str, dict[str, float]],
    rank_parts: dict[str, list[range | list[int]]],
    tags: set[str],
    check_ids: bool,
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
            problems.add(lineno, f"score {quoted(score_text)} is not a number")
            continue
        if not score_text.isascii() or "_" in score_text:
            problems.add(
                lineno, f"score {quoted(score_text)} is not a plain number (ASCII, no '_')"
            )
            continue
        if not math.isfinite(score):
            problems.add(lineno, f"score {quoted(score_text)} is not a finite number")
            continue
        rank = plain_int(rank_text)
        if rank is None:
            problems.add(lineno, f"rank {quoted(rank_text)} {int_problem(rank_text)}")
            continue
        if check_ids and _id_problems(
            problems, lineno, ("query id", qid), ("doc id", doc_id), ("tag", tag)
        ):
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
            problems.add(lineno, f"query {quoted(qid)} lists doc {quoted(doc_id)} twice")
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
        problem = id_problem(qid) or ("starts with '#'" if qid.startswith("#") else None)
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
