"""Vectors a user brings instead of encoding: a .npy matrix (one float row per id, as
`numpy.save` writes it) and its ids file (one id per line, row order; by default the .npy's
name with `.ids`). Read memory-mapped and checked in row blocks, so a million rows never sit in
memory twice; every problem names the file and the row, line or field."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError, ProblemCollector, quoted

ROW_BLOCK = 16_384
"""Rows checked (finite, non-zero) per step."""


@dataclass(frozen=True)
class VectorFile:
    """A checked matrix and its ids: row i is the vector of ids[i]."""

    path: Path
    ids_path: Path
    ids: list[str]
    matrix: Any
    """numpy array (rows, dim), floating point, memory-mapped: read rows as needed."""

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])


def ids_path_for(path: str | os.PathLike[str]) -> Path:
    """The default ids file of a .npy: its name with `.ids` in place of `.npy`."""
    return Path(path).with_suffix(".ids")


def read_vectors(
    path: str | os.PathLike[str],
    ids_path: str | os.PathLike[str] | None,
    expected: Collection[str],
    what: str,
) -> VectorFile:
    """The vectors of exactly the ids `expected` (`what` names them in messages: "passage",
    "query"), checked: a 2-d floating-point array, every value finite, no all-zero row (a cosine
    needs a direction), ids one per line, unique, as many as rows, and the same set as
    `expected`. Raises InputError naming every problem."""
    import numpy as np

    path = Path(path)
    ids_file = Path(ids_path) if ids_path is not None else ids_path_for(path)
    matrix = _open_matrix(path)
    ids = _read_ids(ids_file, path)
    if len(ids) != matrix.shape[0]:
        raise InputError(
            [f"{ids_file}: {len(ids):,} ids for the {matrix.shape[0]:,} rows of {path}"]
        )
    expected_set = set(expected)
    problems: list[str] = []
    missing = expected_set.difference(ids)
    if missing:
        shown = ", ".join(quoted(i) for i in sorted(missing)[:5])
        problems.append(f"{ids_file}: {len(missing):,} {what}s have no vector (first: {shown})")
    unknown = [(line, i) for line, i in enumerate(ids, start=1) if i not in expected_set]
    for line, doc_id in unknown[:10]:
        problems.append(f"{ids_file}:{line}: {what} id {quoted(doc_id)} is not among the {what}s")
    if len(unknown) > 10:
        problems.append(f"{ids_file}: ... and {len(unknown) - 10:,} more ids not among them")
    if problems:
        raise InputError(problems)

    bad = ProblemCollector(str(path), limit=10)
    for start in range(0, matrix.shape[0], ROW_BLOCK):
        block = np.asarray(matrix[start : start + ROW_BLOCK])
        finite = np.isfinite(block).all(axis=1)
        for row in np.flatnonzero(~finite).tolist():
            bad.add(None, f"row {start + row} ({what} {quoted(ids[start + row])}) holds NaN or inf")
        zero = finite & ~block.any(axis=1)
        for row in np.flatnonzero(zero).tolist():
            bad.add(None, f"row {start + row} ({what} {quoted(ids[start + row])}) is all zeros")
    bad.raise_if_any()
    return VectorFile(path, ids_file, ids, matrix)


def _open_matrix(path: Path) -> Any:
    """The .npy memory-mapped, after its header says a 2-d float array with rows and columns."""
    import numpy as np
    from numpy.lib import format as npy

    try:
        with open(path, "rb") as handle:
            version = npy.read_magic(handle)
            read_header = npy.read_array_header_1_0 if version == (1, 0) else (
                npy.read_array_header_2_0)  # fmt: skip
            shape, _, dtype = read_header(handle)
    except OSError as exc:
        raise InputError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
    except ValueError as exc:
        raise InputError(
            [f"{path}: not a .npy array as numpy.save writes one ({' '.join(str(exc).split())})"]
        ) from None
    if len(shape) != 2:
        raise InputError(
            [f"{path}: shape {shape}: expected 2 dimensions, one row per id (rows, dim)"]
        )
    if dtype.kind != "f":
        raise InputError([f"{path}: dtype {dtype}: expected floating-point vectors"])
    if shape[0] == 0 or shape[1] == 0:
        raise InputError([f"{path}: shape {shape}: holds no vectors"])
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError([f"{path}: cannot read ({' '.join(str(exc).split())[:200]})"]) from None


def _read_ids(ids_file: Path, vectors: Path) -> list[str]:
    """One id per line (a final newline optional); empty or repeated ids are problems."""
    try:
        raw = ids_file.read_bytes()
    except OSError as exc:
        raise InputError(
            [
                f"{ids_file}: cannot read the ids of {vectors} ({exc.strerror or exc}); write one"
                " id per line in row order, or name the file"
            ]
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError([f"{ids_file}:{line}: not UTF-8 text"]) from None
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
