"""The TREC run reader: the text in chunks of whole lines, each parsed column-wise
(`chunks.parse_run_chunk`) or, at any doubt, line by line, naming each problem with its line;
then the rank column checked against the scores."""

from __future__ import annotations

import math
import os
from itertools import chain
from pathlib import Path

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.limits import MAX_ID_CHARS
from workbench.core.model import Run
from workbench.formats.textio import (
    encode_id,
    has_token_control,
    int_problem,
    plain_int,
    read_text,
    trec_text,
)
from workbench.formats.trec.chunks import RankPart, parse_run_chunk
from workbench.formats.trec.columns import RUN_COLUMNS, id_problems
from workbench.formats.trec.ranks import file_order_agreement, rank_agreement, rank_column_warning


def read_run(path: str | os.PathLike[str]) -> Run:
    """Scores as dicts; order comes from the ordering rule, so the rank column is only checked
    (one warning per file naming how many queries' ranks disagree with the scores).

    The text is read in chunks of whole lines. A chunk is first parsed column-wise (one
    `split` for the chunk, C-level conversions); any doubt about it (a comment, a blank or
    malformed line, a bad number, a duplicate) sends that chunk through the line-by-line
    loop, which names each problem with its line. Scores are finite ASCII numbers, ranks
    ASCII integers (`textio.PLAIN_INT`)."""
    text = trec_text(read_text(path))
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
    warning = _rank_column_warning(path, scores, rank_parts)
    if warning:
        run.warnings.append(warning)
    return run


def _rank_column_warning(
    path: str | os.PathLike[str],
    scores: dict[str, dict[str, float]],
    rank_parts: dict[str, list[RankPart]],
) -> str | None:
    """One warning naming how many queries' file ranks disagree with the ordering rule."""
    disagreeing = tie_only = 0
    for qid, docs in scores.items():
        parts = rank_parts[qid]
        if _increasing_ranges(parts):
            agree, follows = file_order_agreement(docs)
        else:
            agree, follows = rank_agreement(docs, list(chain.from_iterable(parts)))
        if not agree:
            disagreeing += 1
            tie_only += follows
    return rank_column_warning(path, disagreeing, tie_only, len(scores))


def _increasing_ranges(parts: list[RankPart]) -> bool:
    """True when the parts are ranges whose values strictly increase from one to the next."""
    previous_stop = None
    for part in parts:
        if type(part) is not range:
            return False
        if previous_stop is not None and part.start < previous_stop:
            return False
        previous_stop = part.stop
    return True


def _read_run_chunks(
    text: str, problems: ProblemCollector, fast: bool, check_ids: bool
) -> tuple[dict[str, dict[str, float]], dict[str, list[RankPart]], set[str]] | None:
    """(scores, rank parts, tags) of the whole text, chunk by chunk; None when a fast chunk
    repeats a doc that an earlier chunk gave the same query (then rerun with fast=False)."""
    scores: dict[str, dict[str, float]] = {}
    rank_parts: dict[str, list[RankPart]] = {}
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
        parsed = parse_run_chunk(chunk, lines) if fast else None
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


def _read_run_lines(
    chunk: str,
    line_offset: int,
    problems: ProblemCollector,
    scores: dict[str, dict[str, float]],
    rank_parts: dict[str, list[RankPart]],
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
        if (check_ids or len(line) > MAX_ID_CHARS) and id_problems(  # (an id too long)
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
