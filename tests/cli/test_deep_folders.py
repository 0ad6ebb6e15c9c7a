"""A corpus folder deeper than Python's recursion limit (issue 42, item 4): walked, not a
RecursionError (exit 70); one deeper than the system can name is exit 2 in one line. The
chains are made and removed through folder descriptors, since no path reaches their bottom."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from collection_fixtures import workbench


def make_chain(top: Path, depth: int, text: str) -> None:
    """`top`/d/d/.../d (`depth` folders) with `deep.md` at the bottom."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    leaf = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(leaf, text.encode())
    os.close(leaf)
    os.close(fd)


def remove_chain(top: Path) -> None:
    """Remove a chain `make_chain` made, bottom first (shutil.rmtree recurses, and fails on it)."""
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    while "d" in os.listdir(fds[-1]):
        fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
    for parent, child in zip(reversed(fds[:-1]), reversed(fds[1:]), strict=True):
        for name in os.listdir(child):
            os.unlink(name, dir_fd=child)
        os.close(child)
        os.rmdir("d", dir_fd=parent)
    for name in os.listdir(fds[0]):
        os.unlink(name, dir_fd=fds[0])
    os.close(fds[0])
    top.rmdir()


@pytest.fixture
def chains(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "aflatoxin"}) + "\n")
    yield tmp_path
    for top in ("deep", "deeper"):
        if (tmp_path / top).exists():
            remove_chain(tmp_path / top)


def pool(folder: Path, corpus: str) -> object:
    return workbench(
        "pool", "--corpus", corpus, "--queries", "queries.jsonl", "--systems", "bm25",
        "--db", "s.db", "--cache-dir", "cache", "--policy", "static", cwd=folder,
    )  # fmt: skip


def test_a_corpus_folder_1100_levels_deep_is_walked(chains: Path) -> None:
    make_chain(chains / "deep", 1100, "# Storage\n\naflatoxin in stored maize grain\n")
    for n in range(5):  # bm25 needs a word to be rare to rank it
        (chains / "deep" / f"top{n}.md").write_text(f"maize pests in field {n}\n")
    result = pool(chains, "deep")
    assert result.returncode == 0, result.stderr[-2000:]
    with sqlite3.connect(f"file:{chains / 's.db'}?mode=ro", uri=True) as conn:
        docs = {row[0] for row in conn.execute("SELECT doc_id FROM docs")}
    assert "d/" * 1100 + "deep.md#1" in docs


def test_a_corpus_folder_deeper_than_a_path_can_name_is_exit_2_in_one_line(chains: Path) -> None:
    make_chain(chains / "deeper", 2100, "aflatoxin\n")  # 'deeper/d/d/...': over 4,096 bytes
    result = pool(chains, "deeper")
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: deeper") and "Traceback" not in result.stderr
    assert len(lines[-1]) < 400 and not (chains / "s.db").exists()
