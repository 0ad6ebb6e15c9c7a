"""The fast path of the run reader: a chunk of whole lines parsed column-wise (one `split`,
C-level conversions), or None at the first doubt, for the line-by-line loop to decide."""

from __future__ import annotations

import math
import re
from itertools import groupby
from typing import TypeAlias

from workbench.core.limits import MAX_ID_CHARS

_SENTINEL = "\x00"
"""Marks each line end among a chunk's tokens (a one-character string: CPython shares it)."""
_LINE_END = "\n\x00\n"
_RANK_TEXT: list[str] = []
"""str(i) for i in 0.. (grown on demand, at most _RANK_TEXT_MAX): the usual rank column."""
_RANK_TEXT_MAX = 100_000
_PLAIN_INTS = re.compile(r"-?[0-9]{1,18}(?: -?[0-9]{1,18})*")

RankPart: TypeAlias = range | list[int]
"""The file ranks of consecutive lines of one query."""


def parse_run_chunk(
    chunk: str, lines: int
) -> tuple[dict[str, tuple[dict[str, float], list[RankPart]]], set[str]] | None:
    """qid -> (docs, rank parts) and the tags of a chunk whose every line is a good run line,
    else None. Each line end becomes a sentinel token, so one `split` keeps the line
    structure: 7 tokens a line, the 7th the sentinel, means 6 columns on every line."""
    tokens = chunk.replace("\n", _LINE_END).split()
    if len(tokens) != 7 * lines or tokens[6::7].count(_SENTINEL) != lines:
        return None
    if len(chunk) > MAX_ID_CHARS and max(map(len, tokens)) > MAX_ID_CHARS:
        return None  # an id too long: the line loop names it
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
    groups: dict[str, tuple[dict[str, float], list[RankPart]]] = {}
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


def _rank_part(texts: list[str]) -> RankPart:
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
