"""`workbench pool --embeddings`: vectors the user brings stand in for encoding; every unusable
file exits 2 naming the file and the row, line or field, and no input is ever written."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from test_pool_cli import make_collection, pool_cli

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
        assert store.poolings()[0]["params"]["embeddings"] == str(given["docs"])


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
        ("missing", "docs.npy: cannot read (No such file or directory)"),
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
        ("uncovered", "docs.ids: 1 passages have no vector (first: 'storage9')"),
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
