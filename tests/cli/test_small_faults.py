"""The smaller faults of issue 42, item 7, each on real processes and files: a full disk under
the store is said as such; a pool that fails leaves no store it made; a store on a read-only
file system is explained; CR-only line ends; a query id starting with '#'; ids that differ only
by Unicode normalisation are one id (NFC at read time), zero-width characters shown."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from collection_fixtures import make_collection, workbench
from small_disk import small_disk

PAGE = 4096


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    make_collection(tmp_path, docs=300, queries=6)
    return tmp_path


def pool(folder: Path, *extra: object) -> subprocess.CompletedProcess[str]:
    return workbench("pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl",
                     "--systems", "bm25", "--cache-dir", "cache", "--policy", "static",
                     *extra, cwd=folder)  # fmt: skip


def test_a_full_disk_under_the_store_is_said_and_leaves_no_store(folder: Path) -> None:
    with small_disk(folder / "disk", 44 * PAGE) as disk:  # the empty store, not the pool
        if disk is None:
            pytest.skip("mounting a tmpfs needs root")
        result = pool(folder, "--db", "disk/s.db", "--runs-dir", "runs")
        assert result.returncode == 2, result.stderr[-800:]
        last = result.stderr.strip().splitlines()[-1]
        assert "disk is full" in last and "damaged" not in last, last
        assert list(disk.iterdir()) == []  # the store this pool made is gone, -wal and all


def test_a_run_file_that_does_not_fit_leaves_no_empty_store(folder: Path) -> None:
    with small_disk(folder / "disk", 2 * PAGE) as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs needs root")
        result = pool(folder, "--db", "s.db", "--runs-dir", "disk/runs")
        assert result.returncode == 2 and "cannot write" in result.stderr, result.stderr[-800:]
        assert not (folder / "s.db").exists() and not (folder / "s.db-wal").exists()


def test_a_store_on_a_read_only_file_system_is_explained(folder: Path) -> None:
    with small_disk(folder / "disk", 256 * PAGE) as disk:
        if disk is None:
            pytest.skip("mounting a tmpfs needs root")
        assert pool(folder, "--db", "disk/s.db", "--runs-dir", "runs").returncode == 0
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        for argv in (["coverage", "--db", "disk/s.db"], ["export", "--db", "disk/s.db",
                     "--qrels", "out.qrels"], ["simulate", "--db", "disk/s.db", "--oracle",
                     "qrels.tsv"]):  # fmt: skip
            result = workbench(*argv, cwd=folder)
            assert result.returncode == 2, result.stderr
            assert "read-only file system" in result.stderr, result.stderr


def test_a_qrels_file_with_cr_only_line_ends_is_read(tmp_path: Path) -> None:
    (tmp_path / "mac.qrels").write_bytes(b"# judged by hand\rq1 0 d1 1\rq1 0 d2 0\rq2 0 d3 2\r")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2.0 s\nq2 Q0 d3 1 1.0 s\n")
    result = workbench("eval", "--qrels", "mac.qrels", "--run", "r.run", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    per_query = json.loads(result.stdout)["runs"]["s"]["per_query"]
    assert per_query["q1"]["R@10"] == 1.0 and per_query["q2"]["R@10"] == 1.0


def test_a_query_id_starting_with_hash_is_refused_at_its_line_before_any_system_runs(
    folder: Path,
) -> None:
    with open(folder / "queries.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({"_id": "#q9", "text": "w1 w2"}) + "\n")
    result = pool(folder, "--db", "s.db")
    assert result.returncode == 2, result.stderr
    assert "queries.jsonl:7:" in result.stderr and "'#'" in result.stderr, result.stderr
    assert "bm25 tokenize" not in result.stderr and not (folder / "s.db").exists()
    assert not (folder / "cache").exists()


def test_ids_are_read_as_nfc_so_nfd_and_nfc_spellings_are_one_id(tmp_path: Path) -> None:
    (tmp_path / "q.qrels").write_text("caf\u00e9 0 d\u00e9j\u00e0 1\nq2 0 x 1\n")
    (tmp_path / "r.run").write_text("cafe\u0301 Q0 de\u0301ja\u0300 1 2.0 s\nq2 Q0 x 1 1.0 s\n")
    result = workbench("eval", "--qrels", "q.qrels", "--run", "r.run", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["runs"]["s"]["per_query"]["caf\u00e9"]["R@10"] == 1.0
    (tmp_path / "twice.qrels").write_text("q1 0 \u00e9 1\nq1 0 e\u0301 0\n")
    result = workbench("eval", "--qrels", "twice.qrels", "--run", "r.run", cwd=tmp_path)
    assert result.returncode == 2 and "twice.qrels:2:" in result.stderr, result.stderr


def test_an_id_with_a_zero_width_character_is_shown_with_it_visible(tmp_path: Path) -> None:
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\nq\u200b1 0 d1 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2.0 s\n")
    result = workbench("eval", "--qrels", "q.qrels", "--run", "r.run", cwd=tmp_path)
    assert "\u200b" not in result.stdout + result.stderr
    assert "q\\u200b1" in result.stdout + result.stderr, result.stdout


def test_a_query_no_system_retrieves_gets_its_random_sample(folder: Path) -> None:
    """It got none: pool said 'fewer where the pool already holds the whole corpus' (it held
    a few of 300), and coverage asked for --sample although --sample 5 was given."""
    with open(folder / "queries.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({"_id": "q_none", "text": "zzz unheard words"}) + "\n")
    result = pool(folder, "--db", "s.db", "--sample", "5")
    assert result.returncode == 0, result.stderr
    assert "fewer where" not in result.stdout + result.stderr
    conn = sqlite3.connect(f"file:{folder / 's.db'}?mode=ro", uri=True)
    with conn:
        drawn = conn.execute(
            "SELECT count(*) FROM pool WHERE query_id = 'q_none' AND stratum != 'pool'"
        ).fetchone()[0]
    conn.close()
    assert drawn == 5
    coverage = workbench("coverage", "--db", "s.db", "--json", cwd=folder)
    assert coverage.returncode == 0, coverage.stderr
    assert "--sample" not in json.dumps(json.loads(coverage.stdout)["queries"]["q_none"])
