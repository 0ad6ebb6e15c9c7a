"""A run as columns (numpy arrays, one row per line) and its reduction against qrels, so that
scoring a 2-million-line run makes objects per judged doc and per top-k slot, never per line.
Pure: the vectorised TREC reader (`formats.trec.table`) builds a `RunTable`; `to_run` gives the
`Run` the strict reader would."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from workbench.core.measure_view import JudgedRanking
from workbench.core.model import Run, order_pairs

_MIX = np.uint64(0x9E3779B97F4A7C15)
_MULTIPLY = np.uint64(0xBF58476D1CE4E5B9)


@dataclass(frozen=True, slots=True)
class RunTable:
    """One run file's lines as columns. The lines of a query are contiguous (queries in file
    order); no query lists a doc twice. Doc ids are ASCII bytes, zero-padded to a multiple of
    8 (numpy `S`), so that comparing them compares the strings."""

    name: str
    query_ids: list[str]
    bounds: np.ndarray
    """Line offsets, one more than there are queries: query i holds lines bounds[i]:bounds[i+1]."""
    doc_ids: np.ndarray
    scores: np.ndarray
    descending: np.ndarray
    """Per query: its scores never rise in file order."""
    ordered: np.ndarray
    """Per query: its file order is the ordering rule's (score descending, ties by id
    descending)."""
    hashes: np.ndarray
    """Per line: (query, doc) hashed (`pair_hashes`)."""
    warnings: list[str] = field(default_factory=list)

    def to_run(self) -> Run:
        """The run as `Run` (per-doc objects: for everything but `workbench eval`'s scoring)."""
        doc_ids = self.doc_ids.astype(str).tolist()
        scores = self.scores.tolist()
        bounds = self.bounds.tolist()
        table = {
            qid: dict(zip(doc_ids[a:b], scores[a:b], strict=True))
            for qid, a, b in zip(self.query_ids, bounds, bounds[1:], strict=False)
        }
        return Run(name=self.name, scores=table, warnings=list(self.warnings))


def line_queries(bounds: np.ndarray) -> np.ndarray:
    """The query index of each line."""
    return np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))


def pair_hashes(doc_ids: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each (query index, doc id): equal pairs hash equal; distinct pairs
    collide with odds near n^2 / 2^65 (a collision only costs the fast path)."""
    words = doc_ids.view(np.uint64).reshape(len(doc_ids), -1)
    hashes = (queries.astype(np.uint64) + np.uint64(1)) * _MIX
    for column in words.T:
        hashes ^= column
        hashes *= _MULTIPLY
        hashes ^= hashes >> np.uint64(31)
    return hashes


def file_order(
    bounds: np.ndarray, doc_ids: np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(descending, ordered) per query: scores never rise in file order; the file order is the
    ordering rule's."""
    queries = len(bounds) - 1
    inner = np.ones(max(len(scores) - 1, 0), bool)
    inner[bounds[1:-1] - 1] = False  # the pair across a query boundary
    owner = line_queries(bounds)[:-1]
    rises = (scores[1:] > scores[:-1]) & inner
    tie_misordered = (scores[1:] == scores[:-1]) & (doc_ids[1:] >= doc_ids[:-1]) & inner
    descending = np.bincount(owner[rises], minlength=queries) == 0
    ordered = descending & (np.bincount(owner[tie_misordered], minlength=queries) == 0)
    return descending, ordered


def judged_rankings(
    table: RunTable, qrels: Mapping[str, Mapping[str, int]], top: int
) -> dict[str, JudgedRanking] | None:
    """Each query of the run reduced against `qrels`: its depth, its first `top` ids by the
    ordering rule, and the rank of each doc of the query's qrels that it holds. None when two
    judged pairs hash alike (then score `to_run()`)."""
    found = _judged_lines(table, qrels)
    if found is None:
        return None
    bounds = table.bounds.tolist()
    reduced: dict[str, JudgedRanking] = {}
    for index, qid in enumerate(table.query_ids):
        start, stop = bounds[index], bounds[index + 1]
        lines = found.get(index, {})
        ranks = _ranks(table, index, start, stop, lines) if lines else {}
        reduced[qid] = JudgedRanking(stop - start, _top(table, index, start, stop, top), ranks)
    return reduced


def _judged_lines(
    table: RunTable, qrels: Mapping[str, Mapping[str, int]]
) -> dict[int, dict[str, int]] | None:
    """query index -> {judged doc id: its line}, for the judged docs the run holds; None in the
    rare case that two judged pairs hash alike."""
    index_of = {qid: i for i, qid in enumerate(table.query_ids)}
    width = table.doc_ids.dtype.itemsize
    pair_queries: list[int] = []
    pair_docs: list[str] = []
    for qid, judged in qrels.items():
        index = index_of.get(qid)
        if index is None:
            continue
        for doc_id in judged:
            if doc_id.isascii() and 0 < len(doc_id) <= width:  # others cannot be in the run
                pair_queries.append(index)
                pair_docs.append(doc_id)
    if not pair_docs:
        return {}
    wanted_docs = np.array([d.encode() for d in pair_docs], dtype=table.doc_ids.dtype)
    wanted_queries = np.array(pair_queries, np.int64)
    wanted = pair_hashes(wanted_docs, wanted_queries)
    # Each line's hash looked up among the (few) judged pairs': no sort of the whole run.
    order = np.argsort(wanted)
    sorted_wanted = wanted[order]
    if (sorted_wanted[1:] == sorted_wanted[:-1]).any():
        return None  # two judged pairs hash alike: a line could match only one of them
    at = np.minimum(np.searchsorted(sorted_wanted, table.hashes), len(order) - 1)
    lines = np.flatnonzero(sorted_wanted[at] == table.hashes)
    pairs = order[at[lines]]
    owners = np.searchsorted(table.bounds, lines, side="right") - 1
    match = (table.doc_ids[lines] == wanted_docs[pairs]) & (owners == wanted_queries[pairs])
    found: dict[int, dict[str, int]] = {}
    for pair, line in zip(pairs[match].tolist(), lines[match].tolist(), strict=True):
        found.setdefault(pair_queries[pair], {})[pair_docs[pair]] = line
    return found


def _ranks(
    table: RunTable, index: int, start: int, stop: int, lines: dict[str, int]
) -> dict[str, int]:
    """0-based rank of each judged line: the docs with a higher score, then the tied docs with
    a higher id, come before it."""
    if table.ordered[index]:
        return {doc_id: line - start for doc_id, line in lines.items()}
    scores = table.scores[start:stop]
    ladder = -scores if table.descending[index] else np.sort(-scores)
    at = np.fromiter(lines.values(), np.int64, len(lines))
    wanted = -table.scores[at]
    above = np.searchsorted(ladder, wanted, side="left")
    tied = np.searchsorted(ladder, wanted, side="right") - above
    ranks: dict[str, int] = {}
    counts = zip(lines.items(), above.tolist(), tied.tolist(), strict=True)
    for (doc_id, line), higher, ties in counts:
        if ties > 1:
            same = scores == table.scores[line]
            higher += int(np.count_nonzero(table.doc_ids[start:stop][same] > table.doc_ids[line]))
        ranks[doc_id] = higher
    return ranks


def _top(table: RunTable, index: int, start: int, stop: int, top: int) -> tuple[str, ...]:
    """The first `top` ids of one query by the ordering rule."""
    if table.ordered[index] or stop - start <= 0:
        return tuple(table.doc_ids[start : min(stop, start + top)].astype(str).tolist())
    scores = table.scores[start:stop]
    if stop - start > top:
        if table.descending[index]:
            kth = scores[top - 1]
        else:
            kth = np.partition(scores, stop - start - top)[stop - start - top]
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(stop - start)
    ids = table.doc_ids[start:stop][candidates].astype(str).tolist()
    return tuple(order_pairs(zip(ids, scores[candidates].tolist(), strict=True))[:top])
