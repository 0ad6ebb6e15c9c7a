"""The commands the first fuzz suite left out, against hostile inputs: `report` (a hostile run,
a damaged store), `compare` into every format, `store copy` from a damaged store, and `pool
--embeddings` with hostile vector files. Each does its job or exits 2; never a traceback, never
a raw escape sequence, never a changed input, and on exit 2 nothing written where it writes."""

from __future__ import annotations

import io
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fuzz_fixtures import FUZZ, SUFFIX, TAMPERS, build_inputs, digest, run_main, tamper
from hostile import hostile_files, render
from hypothesis import example, given
from hypothesis import strategies as st

# name -> (kind of the hostile file, argv with {f} for it, the paths it writes)
CASES: dict[str, tuple[str, list[str], list[str]]] = {
    "report --run": ("run", ["report", "--db", "{db}", "--run", "{f}", "-o", "{tmp}/r.html"],
                     ["r.html"]),
    "compare --format html": ("run", ["compare", "--qrels", "{qrels}", "--run", "{run2}", "--run",
                                      "{f}", "--format", "html"], []),
    "compare --format json": ("qrels", ["compare", "--qrels", "{f}", "--run", "{run}", "--run",
                                        "{run2}", "--json"], []),
    "eval --format html golden": ("golden", ["eval", "--qrels", "{f}", "--run", "{run}",
                                             "--format", "html"], []),
}  # fmt: skip


def check(template: list[str], kind: str, data: bytes, writes: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build_inputs(folder)
        hostile = folder / f"hostile{SUFFIX[kind]}"
        hostile.write_bytes(data)
        values = {k: str(v) for k, v in paths.items()} | {"f": str(hostile), "tmp": tmp}
        argv = [part.format(**values) for part in template]
        watched = [hostile, *paths.values()]
        before = {p: digest(p) for p in watched}
        code, output = run_main(argv)
        assert code in (0, 1, 2), f"{argv}: exit {code}\n{output[-2000:]}"
        assert "Traceback" not in output, output[-2000:]
        assert "\x1b" not in output and "\x9b" not in output, f"raw escape in {output!r}"
        assert {p: digest(p) for p in watched} == before, "an input changed"
        if code == 2:
            assert all(not (folder / name).exists() for name in writes), "exit 2, output written"
            assert len(output.strip().splitlines()) >= 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_more_commands(name: str) -> None:
    kind, template, writes = CASES[name]

    @FUZZ
    @given(hostile_files(kind))
    @example((["escape_id", "markup_id"], render(kind, ["escape_id", "markup_id"])))
    @example((["surrogate_escape"], render(kind, ["surrogate_escape"])))
    @example((["invalid_utf8"], render(kind, ["invalid_utf8"])))
    def fuzz(case: tuple[list[str], bytes]) -> None:
        check(template, kind, case[1], writes)

    fuzz()


# -- damaged stores: report and store copy ---------------------------------------------------

STORE_READERS = {
    "report": (["report", "--db", "{db}", "--run", "{run}", "-o", "{tmp}/r.html"], ["r.html"]),
    "store copy": (["store", "copy", "{db}", "{tmp}/copy.db"], ["copy.db"]),
    "compare --db": (["compare", "--qrels", "{db}", "--run", "{run}", "--run", "{run2}"], []),
}


@pytest.mark.parametrize("how", TAMPERS)
@pytest.mark.parametrize("command", sorted(STORE_READERS))
def test_a_damaged_store_into_report_and_copy(command: str, how: str) -> None:
    template, writes = STORE_READERS[command]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build_inputs(folder)
        tamper(paths["db"], how)
        before = digest(paths["db"])
        values = {k: str(v) for k, v in paths.items()} | {"tmp": tmp}
        code, output = run_main([part.format(**values) for part in template])
        assert code in (0, 1, 2), f"exit {code}: {output[-2000:]}"
        assert "Traceback" not in output and "\x1b" not in output
        assert digest(paths["db"]) == before, "a command that reads the store changed it"
        if code == 2:
            assert all(not (folder / name).exists() for name in writes), "exit 2, output written"


# -- pool --embeddings: hostile .npy files ----------------------------------------------------


def npy_bytes(rows: int = 5, dim: int = 8, dtype: str = "<f4") -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.random.default_rng(0).standard_normal((rows, dim)).astype(dtype))
    return buffer.getvalue()


def header_of(data: bytes) -> tuple[int, str]:
    """(offset of the array's data, the header's dict text) of a version-1 .npy."""
    length = struct.unpack("<H", data[8:10])[0]
    return 10 + length, data[10 : 10 + length].decode("latin-1")


def with_header(data: bytes, header: str) -> bytes:
    start, _ = header_of(data)
    text = header.encode("latin-1", "replace")
    return data[:8] + struct.pack("<H", len(text)) + text + data[start:]


HEADERS = [
    "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 9999999999), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (-5, 8), }",
    "{'descr': '|O', 'fortran_order': False, 'shape': (5, 8), }",
    "{'descr': '<U8', 'fortran_order': False, 'shape': (5, 8), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 8, 1), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 8), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 0), }",
    "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (5, 8), }",
    "__import__('os').system('true')",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 8), 'x': \x1b[31m }",
    "{" * 5000,
    "",
]


@st.composite
def hostile_vectors(draw: st.DrawFn) -> tuple[str, bytes]:
    """A damaged vectors file: a lying header, cut bytes, flipped bytes, non-finite values."""
    data = npy_bytes(dtype=draw(st.sampled_from(["<f4", "<f8", "<f2", ">f4", "<i4"])))
    how = draw(st.sampled_from(["header", "cut", "flip", "nonfinite", "garbage"]))
    if how == "header":
        return how, with_header(data, draw(st.sampled_from(HEADERS)))
    if how == "cut":
        return how, data[: draw(st.integers(0, len(data) - 1))]
    if how == "flip":
        at = draw(st.integers(0, len(data) - 1))
        return how, data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
    if how == "nonfinite":
        array = np.load(io.BytesIO(npy_bytes())).copy()
        array[draw(st.integers(0, 4)), draw(st.integers(0, 7))] = draw(
            st.sampled_from([np.nan, np.inf, -np.inf, 0.0])
        )
        if draw(st.booleans()):
            array[draw(st.integers(0, 4))] = 0.0  # a row with no direction
        buffer = io.BytesIO()
        np.save(buffer, array)
        return how, buffer.getvalue()
    return how, draw(st.binary(max_size=300))


IDS_FILES = [
    "d1\nd2\nd3\nd4\nd5\n",  # the good one
    "d1\nd2\nd3\nd4\n",  # one short
    "d1\nd1\nd3\nd4\nd5\n",  # a duplicate
    "d1\nd2\nd3\nd4\nd5\nd6\n",  # an id the corpus lacks
    "d1\nd\x1b[31m2\nd3\nd4\nd5\n",  # an escape sequence
    "",
]


def check_vectors(data: bytes, ids: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build_inputs(folder)
        vectors, ids_file, queries_vectors = folder / "e.npy", folder / "e.ids", folder / "q.npy"
        vectors.write_bytes(data)
        ids_file.write_text(ids, encoding="utf-8")
        np.save(queries_vectors, np.random.default_rng(1).standard_normal((2, 8)).astype("<f4"))
        (folder / "q.ids").write_text("q1\nq2\n", encoding="utf-8")
        out_db = folder / "out.db"
        argv = ["pool", "--corpus", str(paths["corpus"]), "--queries", str(paths["queries"]),
                "--systems", "dense", "--embeddings", str(vectors), "--embeddings-ids",
                str(ids_file), "--query-embeddings", str(queries_vectors), "--db", str(out_db),
                "--cache-dir", f"{tmp}/c", "--policy", "static"]  # fmt: skip
        watched = [vectors, ids_file, queries_vectors, *paths.values()]
        before = {p: digest(p) for p in watched}
        code, output = run_main(argv)
        assert code in (0, 2), f"exit {code}\n{output[-2000:]}"
        assert "Traceback" not in output, output[-2000:]
        assert "\x1b" not in output and "\x9b" not in output, f"raw escape in {output!r}"
        assert {p: digest(p) for p in watched} == before, "an input changed"
        if code == 2:
            assert not out_db.exists(), "exit 2 but a store was written"


def test_the_good_vectors_pool() -> None:
    """The baseline the hostile cases mutate pools (so the fuzz does not pass by always
    failing for another reason)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build_inputs(folder)
        np.save(folder / "e.npy", np.load(io.BytesIO(npy_bytes())))
        (folder / "e.ids").write_text(IDS_FILES[0], encoding="utf-8")
        np.save(folder / "q.npy", np.ones((2, 8), dtype="<f4"))
        (folder / "q.ids").write_text("q1\nq2\n", encoding="utf-8")
        code, output = run_main(
            ["pool", "--corpus", str(paths["corpus"]), "--queries", str(paths["queries"]),
             "--systems", "dense", "--embeddings", str(folder / "e.npy"), "--query-embeddings",
             str(folder / "q.npy"), "--db", str(folder / "out.db"), "--cache-dir",
             f"{tmp}/c", "--policy", "static"]  # fmt: skip
        )
        assert code == 0, output
        assert (folder / "out.db").is_file()


@FUZZ
@given(hostile_vectors(), st.sampled_from(IDS_FILES))
@example(("header", with_header(npy_bytes(), HEADERS[0])), IDS_FILES[0])
@example(("header", with_header(npy_bytes(), HEADERS[9])), IDS_FILES[0])
@example(("good", npy_bytes()), IDS_FILES[4])
def test_fuzz_pool_embeddings(case: tuple[str, bytes], ids: str) -> None:
    check_vectors(case[1], ids)
