"""One rule for what a store location is (issue 42, item 1): a path is opened as that path, never
as a SQLite URI, or refused before anything is opened. SQLite here is built with URI names on
(SQLITE_USE_URI), so `file:NAME` given to a plain connect opens NAME: each case checks, with
real processes and files, that no byte of another file changes and no stray file appears."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from collection_fixtures import make_collection, pooled, workbench


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def foreign(path: Path) -> Path:
    """Someone else's SQLite file (rollback journal, not WAL): its bytes must never change."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rwc", uri=True)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    make_collection(tmp_path, docs=40, queries=2)
    return tmp_path


POOL = ("pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--systems", "bm25",
        "--cache-dir", "cache", "--policy", "static")  # fmt: skip


@pytest.mark.parametrize(
    "name", ["file:other.db", "file:other.db?mode=rwc", "FILE:other.db", "file:./other.db"]
)
def test_pool_refuses_a_uri_name_and_leaves_the_file_it_names_alone(folder, name) -> None:
    victim = foreign(folder / "other.db")
    before, files = digest(victim), listing(folder)
    result = workbench(*POOL, "--db", name, cwd=folder)
    assert result.returncode == 2, result.stderr
    assert "URI" in result.stderr and "./" in result.stderr and "Traceback" not in result.stderr
    assert digest(victim) == before
    assert listing(folder) == files  # no store named `file:other.db`, no -wal, no runs folder


def test_store_copy_refuses_a_uri_destination(folder) -> None:
    base = pooled(folder, "base.db")
    victim = foreign(folder / "other.db")
    before, files = digest(victim), listing(folder)
    result = workbench("store", "copy", base, "file:other.db", cwd=folder)
    assert result.returncode == 2 and "URI" in result.stderr, result.stderr
    assert digest(victim) == before and listing(folder) == files


@pytest.mark.parametrize("command", [("coverage",), ("export", "--qrels", "out.qrels"),
                                     ("simulate", "--oracle", "qrels.tsv")])  # fmt: skip
def test_a_uri_name_for_a_store_is_refused_by_readers_and_writers(folder, command) -> None:
    store = pooled(folder, "y.db")
    before, files = digest(store), listing(folder)
    result = workbench(*command, "--db", "file:y.db", cwd=folder)
    assert result.returncode == 2 and "URI" in result.stderr, result.stderr
    assert digest(store) == before and listing(folder) == files


def test_pool_into_a_uri_named_store_is_refused_not_written_into_the_other(folder) -> None:
    store = pooled(folder, "y.db")
    before = digest(store)
    result = workbench(*POOL, "--db", "file:y.db", cwd=folder)
    assert result.returncode == 2 and "into" not in result.stdout, result.stdout
    assert digest(store) == before


@pytest.mark.parametrize("name", [":memory:", "file:rel.db?mode=memory", "file::memory:", ""])
def test_memory_names_leave_no_files(folder, name) -> None:
    files = listing(folder)
    result = workbench(*POOL, "--db", name, cwd=folder)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert listing(folder) == files


def test_a_file_really_named_so_is_opened_as_that_path(folder) -> None:
    """`./file:x.db` names a file called `file:x.db`: pooled there, and into no other file, even
    inside a folder named like a URI (SQLite's temporary and journal names beside it too)."""
    (folder / "file:dir").mkdir()
    (folder / "dir").mkdir()
    victim = foreign(folder / "x.db")
    before = digest(victim)
    for name in ("./file:x.db", "./file:dir/s.db"):
        result = workbench(*POOL, "--db", name, cwd=folder)
        assert result.returncode == 0, result.stderr
        simulated = workbench("simulate", "--db", name, "--oracle", "qrels.tsv", cwd=folder)
        assert simulated.returncode == 0, simulated.stderr
    assert (folder / "file:x.db").is_file() and (folder / "file:dir" / "s.db").is_file()
    assert digest(victim) == before and not any((folder / "dir").iterdir())
    exported = workbench("export", "--db", "./file:x.db", "--qrels", "-", cwd=folder)
    assert exported.returncode == 0 and exported.stdout.strip(), exported.stderr
