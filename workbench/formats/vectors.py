"""Vectors a user brings instead of encoding: a .npy matrix (one float row per id, as
`numpy.save` writes it) and its ids file (one id per line, row order; by default the .npy's
name with `.ids`). The .npy is read (never memory-mapped: a file cut short by another process
is a problem, not a SIGBUS) and checked in row blocks, each row scaled to length 1 in float64
and kept as float32, so a million rows sit in memory once; every problem names the file and the
row, line or field."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from workbench.core.errors import InputError, ProblemCollector, quoted
from workbench.formats.textio import open_regular, read_text

ROW_BLOCK = 16_384
"""Rows read and checked (finite, non-zero, scalable to length 1) per step, at most."""
BLOCK_BYTES = 4 << 20
"""Bytes of a block's float64 working copy, at most: small blocks stay in the processor's
cache and reuse their memory (a block of 16,384 rows is five times slower per row)."""

_PLURAL = {"passage": "passages", "query": "queries"}


@dataclass(frozen=True)
class VectorFile:
    """A checked matrix and its ids: row i is the vector of ids[i]."""

    path: Path
    ids_path: Path
    ids: list[str]
    matrix: Any
    """numpy float32 array (rows, dim), every row of length 1 (the file's rows, scaled: a
    cosine is a dot product)."""

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])


def ids_path_for(path: str | os.PathLike[str]) -> Path:
    """The default ids file of a .npy: its name with `.ids` in place of `.npy`."""
    return Path(path).with_suffix(".ids")


def _plural(what: str, count: int) -> str:
    return what if count == 1 else _PLURAL.get(what, f"{what}s")


def read_vectors(
    path: str | os.PathLike[str],
    ids_path: str | os.PathLike[str] | None,
    expected: Collection[str],
    what: str,
) -> VectorFile:
    """The vectors of exactly the ids `expected` (`what` names them in messages: "passage",
    "query"), checked: a 2-d floating-point array, every value finite, no all-zero row (a cosine
    needs a direction), ids one per line, unique, as many as rows, and the same set as
    `expected`. Raises InputError naming every problem. Only regular files are read (a pipe or
    a device is a problem, never a wait)."""
    path = Path(path)
    ids_file = Path(ids_path) if ids_path is not None else ids_path_for(path)
    with open_regular(path) as handle:
        shape, fortran_order, dtype = _read_header(handle, path)
        ids = _read_ids(ids_file, path)
        if len(ids) != shape[0]:
            raise InputError([f"{ids_file}: {len(ids):,} ids for the {shape[0]:,} rows of {path}"])
        expected_set = set(expected)
        problems: list[str] = []
        missing = expected_set.difference(ids)
        if missing:
            shown = ", ".join(quoted(i) for i in sorted(missing)[:5])
            verb = "has" if len(missing) == 1 else "have"
            problems.append(
                f"{ids_file}: {len(missing):,} {_plural(what, len(missing))} {verb} no vector"
                f" (first: {shown})"
            )
        unknown = [(line, i) for line, i in enumerate(ids, start=1) if i not in expected_set]
        among = _plural(what, 2)
        for line, doc_id in unknown[:10]:
            problems.append(
                f"{ids_file}:{line}: {what} id {quoted(doc_id)} is not among the {among}"
            )
        if len(unknown) > 10:
            problems.append(f"{ids_file}: ... and {len(unknown) - 10:,} more ids not among them")
        if problems:
            raise InputError(problems)
        matrix = _read_unit_rows(handle, path, shape, fortran_order, dtype, ids, what)
    return VectorFile(path, ids_file, ids, matrix)


def _read_header(handle: IO[bytes], path: Path) -> tuple[tuple[int, int], bool, Any]:
    """The .npy header's shape, order and dtype (read as numpy.lib.format does, which never
    unpickles), checked: 2-d, positive dimensions, floating point, and data the file holds."""
    import numpy as np
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(handle)
        read_header = npy.read_array_header_1_0 if version == (1, 0) else (
            npy.read_array_header_2_0)  # fmt: skip
        shape, fortran_order, dtype = read_header(handle)
        offset = handle.tell()
        size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        raise InputError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
    except Exception as exc:  # numpy parses the header with ast and tokenize: any error
        message = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputError(
            [f"{path}: not a .npy array as numpy.save writes one ({message})"]
        ) from None
    if len(shape) != 2:
        raise InputError(
            [f"{path}: shape {shape}: expected 2 dimensions, one row per id (rows, dim)"]
        )
    if dtype.kind != "f":
        raise InputError([f"{path}: dtype {dtype}: expected floating-point vectors"])
    if min(shape) < 0:
        raise InputError([f"{path}: shape {shape}: a dimension is negative"])
    if shape[0] == 0 or shape[1] == 0:
        raise InputError([f"{path}: shape {shape}: holds no vectors"])
    needed = shape[0] * shape[1] * dtype.itemsize
    if needed > size - offset:
        raise InputError(
            [f"{path}: shape {shape}: needs {needed:,} bytes of {dtype} values, but the file"
             f" holds {size - offset:,} after its header (cut short?)"]
        )  # fmt: skip
    return (int(shape[0]), int(shape[1])), bool(fortran_order), np.dtype(dtype)


def _read_exactly(handle: IO[bytes], path: Path, count: int) -> bytes:
    try:
        data = handle.read(count)
    except OSError as exc:
        raise InputError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
    if len(data) != count:
        raise InputError(
            [f"{path}: ends before the data its header announces (changed while read?)"]
        )
    return data


def _read_unit_rows(
    handle: IO[bytes],
    path: Path,
    shape: tuple[int, int],
    fortran_order: bool,
    dtype: Any,
    ids: list[str],
    what: str,
) -> Any:
    """The rows, each scaled to length 1 (float32), read block by block from `handle` (just
    past the header). A row with NaN or inf, an all-zero row, or a row that cannot be scaled to
    length 1 is a problem naming its row and id."""
    import numpy as np

    rows, dim = shape
    try:
        out = np.empty(shape, dtype=np.float32)
        whole = None
        if fortran_order:  # column-major: the rows are not contiguous, so read the whole data
            data = _read_exactly(handle, path, rows * dim * dtype.itemsize)
            whole = np.frombuffer(data, dtype=dtype).reshape(dim, rows).T
    except MemoryError:
        raise InputError(
            [f"{path}: shape {shape}: too large to hold in memory as float32 vectors"]
        ) from None
    step = max(1, min(ROW_BLOCK, BLOCK_BYTES // (dim * 8)))
    bad = ProblemCollector(str(path), limit=10)
    with np.errstate(all="ignore"):
        for start in range(0, rows, step):
            count = min(step, rows - start)
            if whole is not None:
                block = whole[start : start + count]
            else:
                data = _read_exactly(handle, path, count * dim * dtype.itemsize)
                block = np.frombuffer(data, dtype=dtype).reshape(count, dim)
            finite, zero, usable = _unit_block(block, out[start : start + count])
            for row in np.flatnonzero(~finite).tolist():
                name = f"{what} {quoted(ids[start + row])}"
                bad.add(None, f"row {start + row} ({name}) holds NaN or inf")
            for row in np.flatnonzero(zero).tolist():
                bad.add(None, f"row {start + row} ({what} {quoted(ids[start + row])}) is all zeros")
            for row in np.flatnonzero(finite & ~zero & ~usable).tolist():
                name = f"{what} {quoted(ids[start + row])}"
                bad.add(None, f"row {start + row} ({name}) cannot be scaled to length 1")
    bad.raise_if_any()
    return out


def _unit_block(block: Any, unit: Any) -> tuple[Any, Any, Any]:
    """Rows of `block` scaled to length 1 into `unit` (float32), and per row: finite, all
    zeros, usable (finite, non-zero, of length 1 once scaled). Lengths are taken in float64; a
    row whose squares would overflow or underflow there (a length beyond 1e150 or under 1e-140)
    is first divided by its largest magnitude, in float64 or the file's wider type. Call under
    np.errstate(all="ignore"): the checks afterwards, not numpy's warnings, find what failed."""
    import numpy as np

    finite = np.isfinite(block).all(axis=1)
    wide = block.astype(np.float64, copy=False)
    length = np.sqrt(np.einsum("ij,ij->i", wide, wide))
    zero = finite & ~block.any(axis=1)
    rescue = np.flatnonzero(finite & ~zero & ~((length >= 1e-140) & (length <= 1e150)))
    if rescue.size:  # divide by the largest magnitude first, then take the length
        work = np.result_type(block.dtype, np.float64)
        rows = block[rescue].astype(work)
        rows = (rows / np.abs(rows).max(axis=1, keepdims=True)).astype(np.float64)
        wide = wide.copy() if wide is block else wide
        wide[rescue] = rows
        length[rescue] = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    np.divide(wide, np.where(length > 0, length, 1)[:, None], out=unit, casting="unsafe")
    unit_length = np.sqrt(np.einsum("ij,ij->i", unit, unit, dtype=np.float64))
    usable = finite & ~zero & (np.abs(unit_length - 1) < 1e-3)  # NaN compares false
    unit[~usable] = 0
    return finite, zero, usable


def _read_ids(ids_file: Path, vectors: Path) -> list[str]:
    """One id per line (a final newline optional); empty or repeated ids are problems."""
    if not os.path.lexists(ids_file):
        raise InputError(
            [
                f"{ids_file}: cannot read the ids of {vectors} (No such file or directory); write"
                " one id per line in row order, or name the file with --embeddings-ids"
                " (--query-embeddings-ids for query vectors)"
            ]
        )
    text = read_text(ids_file)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    problems = ProblemCollector(str(ids_file), limit=20)
    first_line: dict[str, int] = {}
    ids: list[str] = []
    for number, line in enumerate(lines, start=1):
        doc_id = line[:-1] if line.endswith("\r") else line
        if not doc_id.strip():
            problems.add(number, "empty id")
        elif doc_id in first_line:
            problems.add(number, f"id {quoted(doc_id)} repeats line {first_line[doc_id]}")
        else:
            first_line[doc_id] = number
        ids.append(doc_id)
    problems.raise_if_any()
    return ids


@dataclass(frozen=True)
class GivenVectors:
    """`pool --embeddings` (and `--query-embeddings`): the passages' vectors, and the queries'
    when given (else the dense model encodes the queries)."""

    docs: VectorFile
    queries: VectorFile | None = None
