"""The vectorised run reader: a well-formed run file parsed column-wise with numpy into a
`RunTable`, or None at the first doubt; then `read_run`, the strict reader, decides and names
every problem with its line. What it takes gives the very `Run` the strict reader gives
(`RunTable.to_run`; tests/formats/test_trec_table.py compares the two on generated and hostile
files).

Well-formed: printable ASCII tokens, one space between the 6 columns, '\\n' line ends (the
last may be missing), no blank or comment line, scores that `float()` takes and that are
finite and hold no '_', ranks of 1-18 ASCII digits, each query's lines together, no doc
twice in a query."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from workbench.core.measures.run_table import RunTable, file_order, line_queries, pair_hashes
from workbench.formats.textio import encode_id, line_blocks, open_regular
from workbench.formats.trec.decimals import parse_counts, parse_scores
from workbench.formats.trec.ranks import rank_agreement, rank_column_warning

_WIDTH = 64
"""A longer token (a 100-character doc id) is left to the strict reader: the columns are as
wide as their widest token, so one long id would widen every line's (memory x width)."""
_QID, _DOC, _RANK, _SCORE, _TAG = 0, 2, 3, 4, 5


def read_run_table(path: str | os.PathLike[str]) -> RunTable | None:
    """The run at `path` as columns, or None when it is not well-formed (see the module).
    InputError when it cannot be read at all. Read in blocks of whole lines, each parsed while
    it is in the CPU cache, so that every temporary stays small."""
    with open_regular(path) as file:
        size = os.fstat(file.fileno()).st_size
        columns = _Columns(size // 12 + 1)  # a line holds at least 6 bytes and 6 separators
        for block, end in line_blocks(file, path, _BLOCK):
            if not columns.add(block, end):
                return None
    return _assemble(columns, path) if columns.lines else None


_BLOCK = 1 << 21


class _Columns:
    """The columns of a run file filled block by block: doc ids as zero-padded words (widened
    when a longer id comes), ranks, scores, the tag when all lines share it, and where each
    run of lines of one query id starts, with its id (no column of query ids)."""

    def __init__(self, capacity: int):
        self.lines = 0
        self.heads: list[np.ndarray] = []
        self.query_ids: list[str] = []
        self.last_query = b""  # the last line's query id, when a block ends
        # Room for the most lines the data could hold: pages no line reaches are never touched.
        self.docs = np.zeros((capacity, 1), np.uint64)
        self.ranks = np.empty(capacity, np.int64)
        self.scores = np.empty(capacity, np.float64)
        self.tag: bytes | None = None
        self.one_tag = True

    def add(self, data: bytearray, end: int) -> bool:
        """Add the lines of data[:end] (whole lines); False when one is not well-formed."""
        view = np.frombuffer(data, np.uint8, end)
        if view.max() > 0x7E:
            return False  # non-ASCII or DEL
        # The bytes below 0x21: the separators, 6 a line (the last its '\n'), and any other
        # (a tab, a CR, a control byte), which rules the block out.
        found = np.flatnonzero(view < 0x21)
        kinds = view[found]
        newline = kinds == ord("\n")
        lines = len(found) // 6
        if len(found) != 6 * lines or not (newline | (kinds == ord(" "))).all():
            return False  # a control byte, or a line not of 6 fields
        if not newline[5::6].all() or np.count_nonzero(newline) != lines:
            return False
        if self.lines + lines > len(self.ranks):
            return False
        # Each field's length (from one separator to the last) and start: a row a field.
        lengths = np.empty_like(found)
        lengths[0] = found[0]
        np.subtract(found[1:], found[:-1], out=lengths[1:])
        lengths[1:] -= 1
        starts = np.ascontiguousarray((found - lengths).reshape(lines, 6).T)
        lengths = np.ascontiguousarray(lengths.reshape(lines, 6).T)
        if (view[starts[_QID]] == ord("#")).any():
            return False  # a comment
        longest = lengths.max(axis=1).tolist()
        if int(lengths.min()) < 1 or max(longest) > _WIDTH:
            return False  # an empty field (a blank line, two separators in a row); a huge one
        rows = slice(self.lines, self.lines + lines)

        def column(field: int) -> np.ndarray:
            return _column(data, starts[field], lengths[field], longest[field])

        # Cut to the longest token: its last byte is printable, so no column past it is used.
        ranks = parse_counts(column(_RANK).view(np.uint8)[:, : longest[_RANK]])
        scores = _scores(column(_SCORE).view(np.uint8)[:, : longest[_SCORE]])
        if ranks is None or scores is None:
            return False
        self.ranks[rows], self.scores[rows] = ranks, scores
        self._add_heads(column(_QID))
        self.docs = _put(self.docs, rows, column(_DOC))
        tags = column(_TAG)
        tag = tags[0].tobytes().rstrip(b"\0")
        self.tag = tag if self.tag is None else self.tag
        self.one_tag = self.one_tag and tag == self.tag and bool((tags == tags[0]).all())
        self.lines += lines
        return True

    def _add_heads(self, queries: np.ndarray) -> None:
        """Note the lines of this block (query ids as words) where the query id changes."""
        changes = queries[1:] != queries[:-1]  # words, not strings: 20 times faster
        heads = np.flatnonzero(changes[:, 0] if changes.shape[1] == 1 else changes.any(axis=1))
        heads += 1
        if queries[0].tobytes().rstrip(b"\0") != self.last_query:
            heads = np.concatenate(([0], heads))
        self.last_query = queries[-1].tobytes().rstrip(b"\0")
        self.heads.append(heads + self.lines)
        self.query_ids += [q.decode() for q in _as_strings(queries[heads].view(np.uint8)).tolist()]


def _put(words: np.ndarray, rows: slice, block: np.ndarray) -> np.ndarray:
    """`words` (widened if `block`, words too, is wider) with `block` written into `rows`."""
    if block.shape[1] > words.shape[1]:
        wider = np.zeros((len(words), block.shape[1]), np.uint64)
        wider[: rows.start, : words.shape[1]] = words[: rows.start]  # the rows filled so far
        words = wider
    words[rows, : block.shape[1]] = block
    return words


def _assemble(columns: _Columns, path: str | os.PathLike[str]) -> RunTable | None:
    lines = columns.lines
    query_ids = columns.query_ids
    if len(set(query_ids)) != len(query_ids):
        return None  # a query's lines apart: the strict reader keeps its first place
    bounds = np.concatenate((*columns.heads, [lines]))
    doc_ids = _as_strings(columns.docs[:lines].view(np.uint8))
    hashes = pair_hashes(doc_ids, line_queries(bounds))
    if _repeats_a_pair(hashes, bounds):
        return None  # a doc twice in a query (or, rarely, two pairs that hash alike)
    if columns.one_tag and columns.tag is not None:
        name = columns.tag.decode()
    else:
        name = encode_id(Path(path).name)  # mixed tags: the file's name, made an id
    scores = columns.scores[:lines]
    descending, ordered = file_order(bounds, doc_ids, scores)
    table = RunTable(name, query_ids, bounds, doc_ids, scores, descending, ordered, hashes)
    warning = _rank_warning(table, columns.ranks[:lines], path)
    if warning:
        table.warnings.append(warning)
    return table


def _repeats_a_pair(hashes: np.ndarray, bounds: np.ndarray) -> bool:
    """Whether two lines of one query hash alike. The queries of one depth are sorted in one
    call, a row a query (a run has one or a few depths), on the hashes' top 32 bits; a query
    where two agree is sorted again on all 64 bits."""
    depths = np.diff(bounds)
    tops = (hashes >> np.uint64(32)).astype(np.uint32)
    by_depth = np.argsort(depths, kind="stable")
    groups = np.split(by_depth, np.flatnonzero(np.diff(depths[by_depth])) + 1)
    for group in groups:
        depth = int(depths[group[0]])
        if depth < 2:
            continue
        if len(group) == len(depths):  # every query of this depth: the lines in file order
            rows = tops.reshape(len(group), depth)
        else:
            rows = tops[(bounds[group][:, None] + np.arange(depth)).ravel()]
            rows = rows.reshape(len(group), depth)
        rows = np.sort(rows, axis=1)
        for query in group[(rows[:, 1:] == rows[:, :-1]).any(axis=1)].tolist():
            ordered = np.sort(hashes[bounds[query] : bounds[query + 1]])
            if (ordered[1:] == ordered[:-1]).any():
                return True
    return False


def _column(data: bytearray, starts: np.ndarray, lengths: np.ndarray, longest: int) -> np.ndarray:
    """One field of every line as (n, words) 64-bit words, its bytes zero-padded to `longest`
    (the longest field) rounded up to 8 (`.view(np.uint8)`: an (n, width) byte matrix). Read
    as unaligned 64-bit words (one load per 8 bytes of a row), each masked to the field's
    length."""
    words = (longest + 7) // 8
    loads = np.ndarray((len(data) - 7,), np.uint64, data, 0, (1,)) if len(data) >= 8 else None
    last = len(data) - 8
    columns = []
    for word in range(words):
        offsets = starts + 8 * word
        if loads is not None and int(offsets[-1]) <= last:  # offsets rise: all loads fit
            column = loads[offsets]
        else:
            safe = np.minimum(offsets, max(last, 0))
            column = loads[safe] if loads is not None else np.zeros(len(starts), np.uint64)
            for row in np.flatnonzero(safe != offsets).tolist():  # near the end of the data
                tail = bytes(data[int(offsets[row]) : int(offsets[row]) + 8])
                column[row] = int.from_bytes(tail.ljust(8, b"\0"), "little")
        column &= _BYTE_MASKS[lengths if words == 1 else np.clip(lengths - 8 * word, 0, 8)]
        columns.append(column)
    return columns[0].reshape(-1, 1) if words == 1 else np.stack(columns, axis=1)


_BYTE_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)
"""The first n bytes of a little-endian word."""


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
