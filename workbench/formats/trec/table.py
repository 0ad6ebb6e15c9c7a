"""The vectorised run reader: a well-formed run file parsed column-wise with numpy into a
`RunTable`, or None at the first doubt; then `read_run`, the strict reader, decides and names
every problem with its line. What it takes gives the very `Run` the strict reader gives
(`RunTable.to_run`; tests/test_trec_table.py compares the two on generated and hostile files).

Well-formed: printable ASCII tokens, one space between the 6 columns, '\\n' line ends (the
last may be missing), no blank or comment line, scores that `float()` takes and that are
finite and hold no '_', ranks of 1-18 ASCII digits, each query's lines together, no doc
twice in a query."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np

from workbench.core.run_table import RunTable, file_order, line_queries, pair_hashes
from workbench.formats.textio import encode_id, map_bytes
from workbench.formats.trec.decimals import parse_counts, parse_scores
from workbench.formats.trec.ranks import rank_agreement, rank_column_warning

_TOKEN_OR_SEPARATOR = bytes(range(0x21, 0x7F)) + b" \n"
_MAX_WIDTH = 256
"""A longer token (a 300-character doc id) is left to the strict reader."""
_QID, _DOC, _RANK, _SCORE, _TAG = 0, 2, 3, 4, 5


def read_run_table(path: str | os.PathLike[str]) -> RunTable | None:
    """The run at `path` as columns, or None when it is not well-formed (see the module).
    InputError when it cannot be read at all."""
    return run_table(map_bytes(path), path)


def run_table(data: bytes | mmap.mmap, path: str | os.PathLike[str]) -> RunTable | None:
    """`data`, the bytes of the run file at `path`, as columns; None at any doubt."""
    if not len(data):
        return None
    if data[-1:] != b"\n":
        data = bytes(data) + b"\n"
    scanned = _separators(data)
    if scanned is None:
        return None
    lines, separators = scanned
    buffer = np.frombuffer(data, np.uint8)
    ends = separators[:, 5]
    if not (buffer[ends] == ord("\n")).all():
        return None
    line_starts = np.empty(lines, ends.dtype)
    line_starts[0] = 0
    line_starts[1:] = ends[:-1] + 1
    if (buffer[line_starts] == ord("#")).any():
        return None  # a comment line
    fields = [line_starts, *(separators[:, i] + 1 for i in range(5))]
    lengths = {f: separators[:, f] - fields[f] for f in range(6)}
    if min(int(n.min()) for n in lengths.values()) < 1:
        return None
    if max(int(n.max()) for n in lengths.values()) > _MAX_WIDTH:
        return None
    narrow = {f: n.astype(np.uint16) for f, n in lengths.items()}
    return _assemble(data, fields, narrow, path)


def _separators(data: bytes | mmap.mmap) -> tuple[int, np.ndarray] | None:
    """(lines, an (n, 6) array of the positions of each line's separators), or None when a
    byte is not printable ASCII, a space or a newline, or a line does not hold 6 separators.
    Block by block, so that every temporary stays small and in the CPU cache."""
    lines = 0
    for start in range(0, len(data), _BLOCK):
        block = data[start : start + _BLOCK]
        if block.translate(None, _TOKEN_OR_SEPARATOR):
            return None
        lines += block.count(b"\n")
    buffer = np.frombuffer(data, np.uint8)
    found = np.empty(6 * lines, np.int32 if len(data) < 2**31 - _BLOCK else np.int64)
    filled = 0
    for start in range(0, len(data), _BLOCK):
        at = np.flatnonzero(buffer[start : start + _BLOCK] <= ord(" "))
        if filled + len(at) > len(found):
            return None
        found[filled : filled + len(at)] = at
        found[filled : filled + len(at)] += start
        filled += len(at)
    if filled != len(found):
        return None
    return lines, found.reshape(lines, 6)


_BLOCK = 1 << 20


def _assemble(
    data: bytes | mmap.mmap,
    fields: list[np.ndarray],
    lengths: dict[int, np.ndarray],
    path: str | os.PathLike[str],
) -> RunTable | None:
    def column(index: int) -> np.ndarray:
        return _column(data, fields[index], lengths[index])

    query_column = _as_strings(column(_QID))
    heads = np.concatenate(([0], np.flatnonzero(query_column[1:] != query_column[:-1]) + 1))
    query_ids = [q.decode() for q in query_column[heads].tolist()]
    if len(set(query_ids)) != len(query_ids):
        return None  # a query's lines apart: the strict reader keeps its first place
    bounds = np.concatenate((heads, [len(query_column)]))
    ranks = parse_counts(_trimmed(column(_RANK), lengths[_RANK]))
    scores = _scores(_trimmed(column(_SCORE), lengths[_SCORE]))
    if ranks is None or scores is None:
        return None
    doc_ids = _as_strings(column(_DOC))
    hashes = pair_hashes(doc_ids, line_queries(bounds))
    ordered_hashes = np.sort(hashes)
    if (ordered_hashes[1:] == ordered_hashes[:-1]).any():
        return None  # a doc twice in a query (or, rarely, two pairs that hash alike)
    tags = column(_TAG).view(np.uint64)
    if (tags == tags[0]).all():
        name = bytes(tags[0].view(np.uint8)).rstrip(b"\0").decode()
    else:
        name = encode_id(Path(path).name)  # mixed tags: the file's name, made an id
    descending, ordered = file_order(bounds, doc_ids, scores)
    table = RunTable(name, query_ids, bounds, doc_ids, scores, descending, ordered, hashes)
    warning = _rank_warning(table, ranks, path)
    if warning:
        table.warnings.append(warning)
    return table


def _column(data: bytes | mmap.mmap, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """One field of every line as an (n, width) byte matrix, zero-padded; width is the longest
    field rounded up to 8 bytes. Read as unaligned 64-bit words (one load per 8 bytes of a
    row), each masked to the field's length."""
    words = (int(lengths.max()) + 7) // 8
    loads = np.ndarray((len(data) - 7,), np.uint64, data, 0, (1,)) if len(data) >= 8 else None
    last = len(data) - 8
    matrix = np.empty((len(starts), words), np.uint64)
    for word in range(words):
        offsets = starts + 8 * word
        safe = np.minimum(offsets, max(last, 0))
        column = loads[safe] if loads is not None else np.zeros(len(starts), np.uint64)
        for row in np.flatnonzero(safe != offsets).tolist():  # near the end of the data
            tail = data[int(offsets[row]) : int(offsets[row]) + 8]
            column[row] = int.from_bytes(tail.ljust(8, b"\0"), "little")
        keep = np.clip(lengths.astype(np.int64) - 8 * word, 0, 8)
        matrix[:, word] = column & _BYTE_MASKS[keep]
    return matrix.view(np.uint8)


_BYTE_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)
"""The first n bytes of a little-endian word."""


def _trimmed(matrix: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The matrix without its all-padding columns."""
    return matrix[:, : int(lengths.max())]


def _as_strings(matrix: np.ndarray) -> np.ndarray:
    """An (n, width) byte matrix as n numpy `S` strings (comparing them compares the texts)."""
    return matrix.view(f"S{matrix.shape[1]}").ravel()


def _scores(matrix: np.ndarray) -> np.ndarray | None:
    """Each row as `float()` reads it, or None if one is not a finite number without '_' (the
    strict reader names it). Plain decimals are read column-wise, the rest by `float()`."""
    values, exact = parse_scores(matrix)
    rest = np.flatnonzero(~exact)
    if len(rest):
        texts = _as_strings(matrix[rest]).tolist()
        if any(b"_" in text for text in texts):
            return None
        try:
            taken = np.array([float(text) for text in texts], np.float64)
        except ValueError:
            return None
        if not np.isfinite(taken).all():
            return None
        values[rest] = taken
    return values


def _rank_warning(table: RunTable, ranks: np.ndarray, path: str | os.PathLike[str]) -> str | None:
    """`ranks.rank_column_warning` for the table: column-wise where the ranks rise in file order
    (they agree when the file order is the rule's), query by query elsewhere."""
    bounds = table.bounds
    queries = len(table.query_ids)
    owner = line_queries(bounds)[:-1]
    inner = np.ones(len(owner), bool)
    inner[bounds[1:-1] - 1] = False
    falls = (ranks[1:] <= ranks[:-1]) & inner
    rising = np.bincount(owner[falls], minlength=queries) == 0
    agree = table.ordered.copy()
    follows = table.descending.copy()
    for index in np.flatnonzero(~rising).tolist():
        start, stop = int(bounds[index]), int(bounds[index + 1])
        ids = table.doc_ids[start:stop].astype(str).tolist()
        docs = dict(zip(ids, table.scores[start:stop].tolist(), strict=True))
        agree[index], follows[index] = rank_agreement(docs, ranks[start:stop].tolist())
    disagreeing = int(np.count_nonzero(~agree))
    tie_only = int(np.count_nonzero(~agree & follows))
    return rank_column_warning(path, disagreeing, tie_only, queries)
