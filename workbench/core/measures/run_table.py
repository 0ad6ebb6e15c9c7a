"""A run as columns (numpy arrays, one row per line) and its reduction against qrels, so that
scoring a 2-million-line run makes objects per judged doc and per top-k slot, never per line.
Pure: the vectorised TREC reader (`formats.trec.table`) builds a `RunTable`; `to_run` gives the
`Run` the strict reader would."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from workbench.core.measures.measure_view import JudgedRanking
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
    hashes = queries.astype(np.uint64)
    for start in range(0, len(hashes), 1 << 16):  # pieces whose temporaries stay in the cache
        piece = hashes[start : start + (1 << 16)]
        piece += np.uint64(1)
        piece *= _MIX
        for column in words[start : start + (1 << 16)].T:
            piece ^= column
            piece *= _MULTIPLY
            piece ^= piece >> np.uint64(31)
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
    tied = np.flatnonzero((scores[1:] == scores[:-1]) & inner)
    tie_misordered = tied[_at_least(doc_ids, tied + 1, tied)]  # ids compared at ties only
    descending = np.bincount(owner[rises], minlength=queries) == 0
    ordered = descending & (np.bincount(owner[tie_misordered], minlength=queries) == 0)
    return descending, ordered


def _at_least(doc_ids: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """doc_ids[left] >= doc_ids[right], compared as big-endian 64-bit words (numpy compares
    `S` strings ten times slower)."""
    words = doc_ids.view(np.uint64).reshape(len(doc_ids), -1)
    mine, theirs = words[left].byteswap(), words[right].byteswap()
    result = np.ones(len(left), bool)  # equal to the end: at least
    for word in reversed(range(words.shape[1])):
        ahead, level = mine[:, word] > theirs[:, word], mine[:, word] == theirs[:, word]
        result = ahead | (level & result)
    return result


def judged_rankings(
    table: RunTable, qrels: Mapping[str, Mapping[str, int]], top: int
) -> dict[str, JudgedRanking] | None:
    """Each query of the run reduced against `qrels`: its depth, its first `top` ids by the
    ordering rule, and the rank of each doc of the query's qrels that it holds. None when two
    judged pairs hash alike (then score `to_run()`)."""
    found = _judged_lines(table, qrels)
    if found is None:
        return None
    pair_queries, pair_docs, lines = found
    groups = _TieGroups(table)
    ranks = groups.ranks(lines, pair_queries)
    tops = groups.tops(top)
    by_query: dict[int, dict[str, int]] = {}
    for index, doc_id, rank in zip(pair_queries.tolist(), pair_docs, ranks.tolist(), strict=True):
        by_query.setdefault(index, {})[doc_id] = rank
    for index in np.flatnonzero(~table.descending).tolist():  # rare: sorted here, query by query
        start, stop = int(table.bounds[index]), int(table.bounds[index + 1])
        held = {d: int(lines[p]) for p, d in _pairs_of(pair_queries, pair_docs, index)}
        by_query[index] = _ranks(table, start, stop, held)
        tops[index] = _top(table, start, stop, top)
    depths = np.diff(table.bounds).tolist()
    return {
        qid: JudgedRanking(depth, tops[index], by_query.get(index, {}))
        for index, (qid, depth) in enumerate(zip(table.query_ids, depths, strict=True))
    }


def _pairs_of(pair_queries: np.ndarray, pair_docs: list[str], index: int) -> list[tuple[int, str]]:
    """(pair index, doc id) of the judged pairs of one query."""
    return [(int(p), pair_docs[p]) for p in np.flatnonzero(pair_queries == index)]


class _TieGroups:
    """Runs of equal scores inside the queries whose scores never rise in file order: there a
    doc's rank is the lines before its run plus the tied docs with a higher id."""

    def __init__(self, table: RunTable):
        self.table = table
        scores = table.scores
        first = np.ones(len(scores), bool)
        first[1:] = scores[1:] != scores[:-1]
        first[table.bounds[:-1]] = True
        self.starts = np.flatnonzero(first)
        self.owner_start = table.bounds[:-1]

    def span(self, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first line, end line) of each line's run of equal scores."""
        at = np.searchsorted(self.starts, lines, side="right") - 1
        ends = np.append(self.starts, len(self.table.scores))[at + 1]
        return self.starts[at], ends

    def ranks(self, lines: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """0-based rank of each line (meaningful in the descending queries)."""
        doc_ids = self.table.doc_ids
        first, end = self.span(lines)
        ranks = first - self.owner_start[queries]
        tied = np.flatnonzero(end - first > 1)
        if len(tied) == 0:
            return ranks
        mine = doc_ids[lines[tied]]
        widest = int((end - first)[tied].max())
        if widest <= 64:
            for offset in range(widest):
                other = np.minimum(first[tied] + offset, len(doc_ids) - 1)
                inside = first[tied] + offset < end[tied]
                ranks[tied] += inside & (doc_ids[other] > mine)
        else:
            for row, line in zip(tied.tolist(), lines[tied].tolist(), strict=True):
                peers = doc_ids[first[row] : end[row]]
                ranks[row] += int(np.count_nonzero(peers > doc_ids[line]))
        return ranks

    def tops(self, top: int) -> list[tuple[str, ...]]:
        """Each query's first `top` ids by the ordering rule (for the descending queries)."""
        table = self.table
        starts, stops = table.bounds[:-1], table.bounds[1:]
        cuts = np.minimum(starts + top, stops)
        last = np.maximum(cuts - 1, starts)
        _, run_end = self.span(last)
        # An ordered query's first lines are its top; another's last run of ties is sorted.
        ends = np.where(table.ordered | (cuts == starts), cuts, np.maximum(run_end, cuts))
        sizes = ends - starts
        take = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        # The rule's order, for all queries in one sort: query, score descending, id descending
        # (its big-endian words inverted, last word first: lexsort's first key is its last).
        words = table.doc_ids.view(np.uint64).reshape(len(table.doc_ids), -1)[take].byteswap()
        queries = np.repeat(np.arange(len(sizes)), sizes)
        inverted = [~words[:, word] for word in reversed(range(words.shape[1]))]
        take = take[np.lexsort((*inverted, -table.scores[take], queries))]
        ids = table.doc_ids[take].astype(str).tolist()
        tops: list[tuple[str, ...]] = []
        at = 0
        for size in sizes.tolist():
            tops.append(tuple(ids[at : at + min(size, top)]))
            at += size
        return tops


def _judged_lines(
    table: RunTable, qrels: Mapping[str, Mapping[str, int]]
) -> tuple[np.ndarray, list[str], np.ndarray] | None:
    """(query index, doc id, line) of each judged doc the run holds; None in the rare case
    that two judged pairs hash alike."""
    index_of = {qid: i for i, qid in enumerate(table.query_ids)}
    width = table.doc_ids.dtype.itemsize
    pair_queries: list[int] = []
    pair_docs: list[str] = []
    for qid, judged in qrels.items():
        index = index_of.get(qid)
        if index is not None:
            pair_docs += judged
            pair_queries += [index] * len(judged)
    if not "".join(pair_docs).isascii() or any(len(d) > width for d in pair_docs):
        kept = [i for i, d in enumerate(pair_docs) if d.isascii() and len(d) <= width]
        pair_docs = [pair_docs[i] for i in kept]  # the others cannot be in the run
        pair_queries = [pair_queries[i] for i in kept]
    empty = np.zeros(0, np.int64)
    if not pair_docs:
        return empty, [], empty
    wanted_docs = np.array(pair_docs, dtype=table.doc_ids.dtype)
    wanted_queries = np.array(pair_queries, np.int64)
    wanted = pair_hashes(wanted_docs, wanted_queries)
    order = np.argsort(wanted)
    sorted_wanted = wanted[order]
    if (sorted_wanted[1:] == sorted_wanted[:-1]).any():
        return None  # two judged pairs hash alike: a line could match only one of them
    # Bitmaps of the judged pairs' top and bottom hash bits (1 MB each: they stay in the CPU
    # cache) pick the few lines worth a binary search; indexed by `take` with int64 indices,
    # numpy's fast path.
    shift, low = np.uint64(64 - _BITMAP_BITS), np.uint64((1 << _BITMAP_BITS) - 1)
    top_bits = np.zeros(1 << _BITMAP_BITS, bool)
    top_bits[(wanted >> shift).view(np.int64)] = True
    bottom_bits = np.zeros(1 << _BITMAP_BITS, bool)
    bottom_bits[(wanted & low).view(np.int64)] = True
    candidates = np.flatnonzero(np.take(top_bits, (table.hashes >> shift).view(np.int64)))
    candidates = candidates[np.take(bottom_bits, (table.hashes[candidates] & low).view(np.int64))]
    hashes = table.hashes[candidates]
    at = np.minimum(np.searchsorted(sorted_wanted, hashes), len(order) - 1)
    hit = sorted_wanted[at] == hashes
    lines, pairs = candidates[hit], order[at[hit]]
    owners = np.searchsorted(table.bounds, lines, side="right") - 1
    match = (table.doc_ids[lines] == wanted_docs[pairs]) & (owners == wanted_queries[pairs])
    lines, pairs = lines[match], pairs[match]
    return wanted_queries[pairs], [pair_docs[p] for p in pairs.tolist()], lines


_BITMAP_BITS = 20


def _ranks(table: RunTable, start: int, stop: int, lines: dict[str, int]) -> dict[str, int]:
    """0-based rank of each judged line of a query whose scores rise somewhere: the docs with a
    higher score, then the tied docs with a higher id, come before it."""
    scores = table.scores[start:stop]
    ladder = np.sort(-scores)
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


def _top(table: RunTable, start: int, stop: int, top: int) -> tuple[str, ...]:
    """The first `top` ids by the ordering rule of a query whose scores rise somewhere."""
    scores = table.scores[start:stop]
    candidates = np.arange(stop - start)
    if stop - start > top:
        kth = np.partition(scores, stop - start - top)[stop - start - top]
        candidates = np.flatnonzero(scores >= kth)
    ids = table.doc_ids[start:stop][candidates].astype(str).tolist()
    return tuple(order_pairs(zip(ids, scores[candidates].tolist(), strict=True))[:top])
