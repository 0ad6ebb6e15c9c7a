"""`workbench pool --embeddings`: vectors the user brings stand in for encoding; every unusable
file exits 2 naming the file and the row, line or field, and no input is ever written."""

from __future__ import annotations

import os
import pickle
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from pool_fixtures import make_collection, pool_cli

from workbench.formats import read_corpus, read_queries, read_run


@pytest.fixture
def given(tmp_path: Path) -> dict[str, Path]:
    """The pool test collection with 8-dimensional passage and query vectors (rows shuffled,
    so the ids file, not the corpus order, says whose row is whose)."""
    corpus, queries = make_collection(tmp_path)
    rng = np.random.default_rng(3)
    doc_ids = [d.doc_id for d in read_corpus(corpus)][::-1]
    query_ids = [q.query_id for q in read_queries(queries)]
    np.save(tmp_path / "docs.npy", rng.standard_normal((len(doc_ids), 8)).astype(np.float32))
    (tmp_path / "docs.ids").write_text("".join(f"{d}\n" for d in doc_ids), encoding="utf-8")
    np.save(tmp_path / "queries.npy", rng.standard_normal((len(query_ids), 8)))
    (tmp_path / "query-ids.txt").write_text("\n".join(query_ids), encoding="utf-8")
    return {"corpus": corpus, "queries": queries, "docs": tmp_path / "docs.npy",
            "query_vectors": tmp_path / "queries.npy", "query_ids": tmp_path / "query-ids.txt",
            "db": tmp_path / "pool.db"}  # fmt: skip


def pool_given(given: dict[str, Path], *extra: str | Path) -> int:
    return pool_cli(
        "--corpus", given["corpus"], "--queries", given["queries"], "--db", given["db"],
        "--systems", "dense", "--query-embeddings", given["query_vectors"],
        "--query-embeddings-ids", given["query_ids"], *extra,
    )  # fmt: skip


def test_the_dense_run_is_the_cosine_ranking_of_the_given_vectors(given):
    assert pool_given(given, "--embeddings", given["docs"]) == 0
    doc_ids = given["docs"].with_suffix(".ids").read_text().split()
    docs = np.load(given["docs"]).astype(np.float64)
    queries = np.load(given["query_vectors"])
    run = read_run(given["db"].parent / "pool-runs" / "dense.run")
    for row, query_id in enumerate(given["query_ids"].read_text().split()):
        cosine = docs @ queries[row] / np.linalg.norm(docs, axis=1) / np.linalg.norm(queries[row])
        expected = [doc_ids[i] for i in np.argsort(-cosine)]  # all 30: runs go 100 deep
        assert run.rankings()[query_id] == expected
        top = run.scores[query_id][expected[0]]
        assert top == pytest.approx(cosine.max(), abs=1e-6)
    from workbench.store import Store

    with Store(given["db"]) as store:  # the pooling records whose vectors made the dense run
        params = store.poolings()[0]["params"]
    assert params["embeddings"] == str(given["docs"])
    assert "encoder" not in params  # no model ran: both sides' vectors were given


def test_an_ids_file_can_be_named(given, tmp_path):
    ids = tmp_path / "elsewhere.txt"
    given["docs"].with_suffix(".ids").rename(ids)
    assert pool_given(given, "--embeddings", given["docs"]) == 2
    assert pool_given(given, "--embeddings", given["docs"], "--embeddings-ids", ids) == 0


def save(path: Path, array: object) -> Path:
    np.save(path, array, allow_pickle=True)
    return path


def edit_ids(given: dict[str, Path], change) -> None:  # type: ignore[no-untyped-def]
    path = given["docs"].with_suffix(".ids")
    lines = path.read_text().split("\n")[:-1]
    path.write_bytes(change(lines) if callable(change) else change)


@pytest.mark.parametrize(
    "damage, expected",
    [
        ("missing", "docs.npy: no such file"),
        ("text", "docs.npy: not a .npy array as numpy.save writes one"),
        ("pickle", "docs.npy: dtype object: expected floating-point vectors"),
        ("flat", "docs.npy: shape (30,): expected 2 dimensions"),
        ("ints", "docs.npy: dtype int64: expected floating-point vectors"),
        ("nan", "docs.npy: row 3 (passage 'storage6') holds NaN or inf"),
        ("zero", "docs.npy: row 0 (passage 'storage9') is all zeros"),
        ("rows", "docs.ids: 30 ids for the 29 rows of"),
        ("repeat", "docs.ids:2: id 'storage9' repeats line 1"),
        ("empty", "docs.ids:5: empty id"),
        ("unknown", "docs.ids:1: passage id 'storage99' is not among the passages"),
        ("uncovered", "docs.ids: 1 passage has no vector (first: 'storage9')"),
        ("latin1", "docs.ids:3: not UTF-8 text"),
        ("no-ids", "docs.ids: cannot read the ids of"),
        ("dims", "queries.npy: 8-dimensional vectors, but the passages'"),
    ],
)
def test_an_unusable_vectors_file_exits_2_naming_it(given, capsys, damage, expected):
    docs = given["docs"]
    matrix = np.load(docs)
    if damage == "missing":
        docs.unlink()
    elif damage == "text":
        docs.write_text("0.1 0.2\n")
    elif damage == "pickle":
        save(docs, np.array([pickle.dumps(1)] * 30, dtype=object).reshape(30, 1))
    elif damage == "flat":
        save(docs, matrix[:, 0])
    elif damage == "ints":
        save(docs, np.ones((30, 8), dtype=np.int64))
    elif damage == "nan":
        matrix[3, 2] = np.nan
        save(docs, matrix)
    elif damage == "zero":
        matrix[0] = 0
        save(docs, matrix)
    elif damage == "rows":
        save(docs, matrix[:-1])
    elif damage == "repeat":
        edit_ids(given, lambda lines: ("\n".join([lines[0], *lines[:-1]]) + "\n").encode())
    elif damage == "empty":
        edit_ids(given, lambda lines: ("\n".join(lines[:4] + [""] + lines[5:]) + "\n").encode())
    elif damage == "unknown":
        edit_ids(given, lambda lines: ("\n".join(["storage99", *lines[1:]])).encode())
    elif damage == "uncovered":
        edit_ids(given, lambda lines: ("\n".join(["x", *lines[1:]])).encode())
    elif damage == "latin1":
        edit_ids(
            given, lambda lines: "\n".join([*lines[:2], "caf\xe9", *lines[3:]]).encode("latin-1")
        )
    elif damage == "no-ids":
        docs.with_suffix(".ids").unlink()
    elif damage == "dims":
        save(docs, np.concatenate([matrix, matrix], axis=1))
    before = {p: p.read_bytes() for p in docs.parent.iterdir() if p.is_file()}
    assert pool_given(given, "--embeddings", docs) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert not given["db"].exists()
    assert {p: p.read_bytes() for p in docs.parent.iterdir() if p.is_file()} == before


def test_options_that_need_each_other_and_an_input_as_output(given, capsys):
    assert pool_cli("--corpus", given["corpus"], "--queries", given["queries"], "--db",
                    given["db"], "--query-embeddings", given["query_vectors"]) == 2  # fmt: skip
    assert "--query-embeddings: needs --embeddings" in capsys.readouterr().err
    code = pool_cli("--corpus", given["corpus"], "--queries", given["queries"], "--db",
                    given["db"], "--systems", "bm25", "--embeddings", given["docs"])  # fmt: skip
    assert code == 2
    assert "add dense to --systems" in capsys.readouterr().err
    before = given["docs"].read_bytes()
    given["db"] = given["docs"]
    assert pool_given(given, "--embeddings", given["docs"]) == 2
    assert "docs.npy: not a workbench judgments store" in capsys.readouterr().err
    assert given["docs"].read_bytes() == before


def test_without_query_vectors_an_unloadable_model_skips_dense_with_why(given, tmp_path, capsys):
    code = pool_cli(
        "--corpus", given["corpus"], "--queries", given["queries"], "--db", given["db"],
        "--systems", "bm25,dense", "--embeddings", given["docs"],
        "--dense-model", tmp_path / "no-such-model",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "dense  SKIPPED" in out


def ranking_of(given: dict[str, Path]) -> dict[str, list[str]]:
    return read_run(given["db"].parent / "pool-runs" / "dense.run").rankings()


def reset(given: dict[str, Path]) -> None:
    given["db"].unlink()
    for run in (given["db"].parent / "pool-runs").iterdir():
        run.unlink()


@pytest.mark.parametrize(
    "dtype, factor",
    [(np.float64, 1e300), (np.float64, 1e-300), (np.float32, 1e20), (np.float32, 1e-40),
     (np.float16, 1.0), (np.longdouble, 1e300)],
)  # fmt: skip
def test_vectors_near_the_ends_of_their_type_rank_as_the_plain_ones(given, capsys, dtype, factor):
    """Rows are scaled to length 1 in float64 after dividing by their largest value: huge or
    tiny values neither overflow nor underflow, and numpy prints no warning."""
    assert pool_given(given, "--embeddings", given["docs"]) == 0
    plain = ranking_of(given)
    reset(given)
    capsys.readouterr()
    matrix = np.load(given["docs"]).astype(np.float64)
    if dtype is np.float16:
        matrix = matrix.astype(np.float16).astype(np.float64)
    np.save(given["docs"], (matrix.astype(dtype) * dtype(factor)).astype(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pool_given(given, "--embeddings", given["docs"]) == 0
    err = capsys.readouterr().err
    assert "Warning" not in err and "Traceback" not in err
    scaled = ranking_of(given)
    assert scaled == plain
    run = read_run(given["db"].parent / "pool-runs" / "dense.run")
    for scores in run.scores.values():
        assert all(np.isfinite(v) and -1.0001 <= v <= 1.0001 for v in scores.values())
        assert max(abs(v) for v in scores.values()) > 0.1


def test_a_subnormal_row_has_a_direction(given):
    matrix = np.load(given["docs"]).astype(np.float64)
    matrix[0] = 0
    matrix[0, 2] = 5e-324  # the smallest float64 above zero: points along axis 2
    np.save(given["docs"], matrix)
    assert pool_given(given, "--embeddings", given["docs"]) == 0
    queries = np.load(given["query_vectors"])
    run = read_run(given["db"].parent / "pool-runs" / "dense.run")
    first = given["docs"].with_suffix(".ids").read_text().split()[0]
    for row, query_id in enumerate(given["query_ids"].read_text().split()):
        cosine = queries[row, 2] / np.linalg.norm(queries[row])
        assert run.scores[query_id][first] == pytest.approx(cosine, abs=1e-6)


def test_a_column_major_file_reads_as_the_same_rows(given):
    assert pool_given(given, "--embeddings", given["docs"]) == 0
    plain = ranking_of(given)
    reset(given)
    np.save(given["docs"], np.asfortranarray(np.load(given["docs"])))
    assert np.load(given["docs"]).flags.f_contiguous
    assert pool_given(given, "--embeddings", given["docs"]) == 0
    assert ranking_of(given) == plain


def npy_with_shape(path: Path, shape: str, data: bytes = b"\0" * 960) -> None:
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}".encode("latin1")
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data)


@pytest.mark.parametrize(
    "shape, expected",
    [
        ("(30, -8)", "docs.npy: shape (30, -8): a dimension is negative"),
        ("(-30, 8)", "docs.npy: shape (-30, 8): a dimension is negative"),
        (f"(30, {2**70})", f"docs.npy: shape (30, {2**70}): needs"),
        (f"(30, {2**62})", f"docs.npy: shape (30, {2**62}): needs"),
        ("(30, 9)", "docs.npy: shape (30, 9): needs 1,080 bytes of float32 values, but the file"
                    " holds 960"),
        ("(30, 0)", "docs.npy: shape (30, 0): holds no vectors"),
        ("(30, 'x')", "docs.npy: not a .npy array as numpy.save writes one"),
        ("(30, 8", "docs.npy: not a .npy array as numpy.save writes one"),
    ],
)  # fmt: skip
def test_a_header_that_lies_exits_2_naming_the_shape(given, capsys, shape, expected):
    npy_with_shape(given["docs"], shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would be an exit 70
        assert pool_given(given, "--embeddings", given["docs"]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and "Warning" not in err
    assert not given["db"].exists()


def test_a_file_cut_short_after_its_header_exits_2(given, capsys):
    """The header's promise is checked against the file's size; reading stops at the end."""
    data = given["docs"].read_bytes()
    given["docs"].write_bytes(data[: len(data) - 4])
    assert pool_given(given, "--embeddings", given["docs"]) == 2
    err = capsys.readouterr().err
    assert "docs.npy: shape (30, 8): needs 960 bytes" in err and "Traceback" not in err


@pytest.mark.parametrize("which", ["embeddings", "embeddings-ids", "query-embeddings",
                                   "query-embeddings-ids"])  # fmt: skip
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_only_regular_files_are_read(given, tmp_path, capsys, which, kind):
    """A pipe would wait forever and /dev/zero would fill memory: both are refused at once."""
    if kind == "fifo":
        special = tmp_path / "pipe"
        os.mkfifo(special)
        expected = f"{special}: not a regular file"
    elif kind == "device":
        special = Path("/dev/zero")
        expected = "/dev/zero: not a regular file"
    else:
        special = tmp_path / "folder"
        special.mkdir()
        expected = f"{special}: is a folder"
    paths = {"embeddings": given["docs"], "embeddings-ids": given["docs"].with_suffix(".ids"),
             "query-embeddings": given["query_vectors"],
             "query-embeddings-ids": given["query_ids"]}  # fmt: skip
    paths[which] = special
    code = pool_cli(
        "--corpus", given["corpus"], "--queries", given["queries"], "--db", given["db"],
        "--systems", "dense", *(x for k, v in paths.items() for x in (f"--{k}", v)),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and expected in err and "Traceback" not in err
    assert not given["db"].exists()


def test_messages_say_query_and_queries(given, capsys):
    lines = given["query_ids"].read_text().split("\n")
    given["query_ids"].write_text("\n".join(["q-unknown", *lines[1:]]))
    assert pool_given(given, "--embeddings", given["docs"]) == 2
    err = capsys.readouterr().err
    assert f"1 query has no vector (first: {lines[0]!r})" in err
    assert "query id 'q-unknown' is not among the queries" in err
    assert "querys" not in err


def test_with_both_vector_files_no_model_runs_so_any_device_is_fine(given, monkeypatch):
    """--device cuda asks where models run; given query vectors, dense runs none."""
    from workbench.retrieval import encoder_choice

    monkeypatch.setattr(encoder_choice, "cuda_visible", lambda: False)
    assert pool_given(given, "--embeddings", given["docs"], "--device", "cuda") == 0
    reset(given)
    code = pool_given(given, "--embeddings", given["docs"], "--device", "cuda",
                      "--systems", "dense,rerank")  # fmt: skip
    assert code == 2  # rerank runs a model: the device is checked


def test_without_query_vectors_the_queries_are_encoded_on_the_chosen_encoder(
    given, monkeypatch, tmp_path
):
    from workbench.formats.vectors import GivenVectors, read_vectors
    from workbench.retrieval import encoders
    from workbench.retrieval.vectors import VectorsRetriever

    seen: dict[str, object] = {}

    class Fake:
        def __init__(self, resolved, variant="torch", device=None, cache_dir=None, *rest):
            seen.update(variant=variant, device=device, cache_dir=cache_dir)

        def embed(self, texts):
            return np.ones((len(texts), 8), dtype=np.float32) / np.sqrt(8)

    monkeypatch.setattr(encoders, "SentenceEncoder", Fake)
    ids = given["docs"].with_suffix(".ids").read_text().split()
    docs = read_vectors(given["docs"], None, ids, "passage")
    model = str(tmp_path)  # a folder: a model that may load (one named nowhere is skipped at once)
    retriever = VectorsRetriever(GivenVectors(docs), model, None, "onnx", "cuda", "/c")
    queries = read_queries(given["queries"])
    run = retriever.search(queries, 5)
    assert seen == {"variant": "onnx", "device": "cuda", "cache_dir": "/c"}
    assert set(run.scores) == {q.query_id for q in queries}


def test_a_file_that_shrinks_while_read_is_a_problem_not_a_crash(given, tmp_path):
    """The rows are read, not memory-mapped: a file cut short by another process after its
    header was checked ends the read with a problem naming it (a mapping would SIGBUS)."""
    from workbench.core.errors import InputError
    from workbench.formats import vectors

    ids = given["docs"].with_suffix(".ids").read_text().split()
    np.save(given["docs"], np.ones((30, 4096)))  # 960 KiB: more than a read buffers ahead
    real = vectors._read_header

    def header_then_cut(handle, path):  # type: ignore[no-untyped-def]
        found = real(handle, path)
        os.truncate(path, 500_000)
        return found

    original = vectors._read_header
    vectors._read_header = header_then_cut
    try:
        with pytest.raises(InputError) as caught:
            vectors.read_vectors(given["docs"], None, ids, "passage")
    finally:
        vectors._read_header = original
    assert "docs.npy: ends before the data its header announces" in str(caught.value.problems)
