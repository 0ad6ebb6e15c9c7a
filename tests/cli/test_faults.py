"""Faults as they happen, on real processes: SIGKILL at seeded random moments, two runs at once,
stores that vanish. Whatever the moment, an output is absent, the old one or the whole new one;
a store stays intact and append-only, and a rerun finishes the job as if nothing had happened.
The whole file runs in well under a minute (each command takes a fraction of a second here)."""

from __future__ import annotations

import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from collection_fixtures import ENV, make_collection, pooled, workbench

from workbench.formats.golden import read_golden

KILLS = 6
"""Kills per fault: each at a seeded random moment within the command's own run time."""


def killed_at(argv: list[object], cwd: Path, delay: float) -> int:
    """Start `workbench argv`, SIGKILL it `delay` seconds later (if it still runs); its exit."""
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", *map(str, argv)],
        cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    return process.wait(timeout=30)


def timed(argv: list[object], cwd: Path) -> float:
    start = time.perf_counter()
    result = workbench(*argv, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return time.perf_counter() - start


def judgments(db: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute(
            "SELECT judgment_id, annotator, query_id, doc_id, grade FROM judgments"
            " ORDER BY judgment_id"
        ).fetchall()


def intact(db: Path) -> None:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def current(rows: list[tuple]) -> dict[tuple, int]:
    """Each (annotator, query, doc)'s latest grade: what the store means."""
    return {(a, q, d): g for _, a, q, d, g in rows}


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    make_collection(tmp_path)
    return tmp_path


def test_a_killed_static_simulate_writes_all_or_nothing(collection: Path) -> None:
    """The static queue's grades go in one transaction: a kill leaves none or all of them, and
    the rerun's store means what an uninterrupted run's does."""
    reference = pooled(collection, "ref.db")
    took = timed(["simulate", "--db", reference, "--oracle", "qrels.tsv"], collection)
    whole = current(judgments(reference))
    db = pooled(collection)
    rng = random.Random(26)
    for _ in range(KILLS):
        for name in ("s.db", "s.db-wal", "s.db-shm"):
            (collection / name).unlink(missing_ok=True)
        db = pooled(collection)
        killed_at(["simulate", "--db", db, "--oracle", "qrels.tsv"], collection,
                  rng.uniform(0.05, took * 1.2))  # fmt: skip
        intact(db)
        assert current(judgments(db)) in ({}, whole)
        assert workbench("simulate", "--db", db, "--oracle", "qrels.tsv",
                         cwd=collection).returncode == 0  # fmt: skip
        assert current(judgments(db)) == whole


def test_a_killed_adaptive_simulate_keeps_every_grade_and_its_rerun_finishes(
    collection: Path,
) -> None:
    """The adaptive walk commits grade by grade: after kills at random moments no committed row
    changed or vanished, none is half-made, and the rerun judges each query up to the cap, no
    passage twice."""
    argv: list[object] = ["simulate", "--db", "a.db", "--oracle", "qrels.tsv", "--per-query", "25"]
    reference = pooled(collection, "ref.db", "--policy", "adaptive")
    took = timed([*argv[:2], reference, *argv[3:]], collection)
    db = pooled(collection, "a.db", "--policy", "adaptive")
    rng = random.Random(2602)
    seen: list[tuple] = []
    for _ in range(KILLS):
        killed_at(argv, collection, rng.uniform(0.2, took))
        intact(db)
        rows = judgments(db)
        assert rows[: len(seen)] == seen, "a committed judgment changed or vanished"
        assert all(g is not None for *_, g in rows), "a half-made grade"
        seen = rows
    print(f"{len(seen)} rows after {KILLS} kills (an uninterrupted run: {took:.2f} s)")
    assert workbench(*argv, cwd=collection).returncode == 0
    rows = judgments(db)
    assert len({(a, q, d) for _, a, q, d, _ in rows}) == len(rows), "a passage judged twice"
    per_query = lambda rs: sorted(Counter(q for _, _, q, _, _ in rs).items())  # noqa: E731
    assert per_query(rows) == per_query(judgments(reference))


def test_a_killed_export_leaves_no_output_or_a_whole_one(collection: Path) -> None:
    db = pooled(collection)
    assert workbench("simulate", "--db", db, "--oracle", "qrels.tsv",
                     cwd=collection).returncode == 0  # fmt: skip
    argv: list[object] = ["export", "--db", db, "--golden", "g.yaml", "--qrels", "g.qrels"]
    took = timed(argv, collection)
    whole = (collection / "g.qrels").read_bytes()
    rng = random.Random(2601)
    for attempt in range(KILLS):
        for name in ("g.yaml", "g.qrels"):
            (collection / name).unlink(missing_ok=True)
        if attempt % 2:  # an old output in place: it is kept whole, or replaced whole
            (collection / "g.qrels").write_bytes(b"q0 0 old 1\n")
        killed_at(argv, collection, rng.uniform(0.02, took))
        qrels = collection / "g.qrels"
        assert not qrels.exists() or qrels.read_bytes() in (whole, b"q0 0 old 1\n")
        golden = collection / "g.yaml"
        if golden.exists():  # whole: it reads, and holds every judged pair
            pairs = sum(len(docs) for docs in read_golden(golden).qrels.values())
            assert pairs == len(whole.splitlines())
    assert workbench(*argv, cwd=collection).returncode == 0
    temps = [p.name for p in collection.iterdir() if p.name.endswith(".tmp")]
    assert temps == [], f"a killed writer's temp files stayed: {temps}"


def test_two_annotators_simulating_at_once_both_land_whole(collection: Path) -> None:
    db = pooled(collection)
    argv = [sys.executable, "-m", "workbench", "simulate", "--db", str(db), "--oracle",
            "qrels.tsv"]  # fmt: skip
    both = [
        subprocess.Popen([*argv, "--annotator", name], cwd=collection, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("ann", "bob")
    ]  # fmt: skip
    outcomes = [(p.wait(timeout=60), p.stderr.read() if p.stderr else "") for p in both]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    intact(db)
    rows = judgments(db)
    by = {name: {(q, d) for _, a, q, d, _ in rows if a == name} for name in ("ann", "bob")}
    assert by["ann"] == by["bob"] and len(by["ann"]) > 0, "an annotator's queue was cut short"
    assert len(rows) == len(by["ann"]) * 2, "a grade written twice"


def test_two_imports_at_once_both_land_and_neither_twice(collection: Path) -> None:
    db = pooled(collection)
    labels = collection / "labels.qrels"
    labels.write_text((collection / "qrels.tsv").read_text(encoding="utf-8"), encoding="utf-8")
    argv = [sys.executable, "-m", "workbench", "import-labels", "--db", str(db), "--role", "model"]
    both = [
        subprocess.Popen([*argv, "--as", name, str(labels)], cwd=collection, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("llm-a", "llm-b")
    ]  # fmt: skip
    assert [p.wait(timeout=60) for p in both] == [0, 0]
    intact(db)
    rows = judgments(db)
    assert len({(a, q, d) for _, a, q, d, _ in rows}) == len(rows), "a label written twice"
    assert {a for _, a, *_ in rows} == {"llm-a", "llm-b"}


def test_a_store_that_vanished_is_named_at_once(collection: Path) -> None:
    db = pooled(collection)
    db.unlink()
    for name in ("s.db-wal", "s.db-shm"):
        (collection / name).unlink(missing_ok=True)
    for argv in (
        ["coverage", "--db", db],
        ["export", "--db", db, "--qrels", "x.qrels"],
        ["simulate", "--db", db, "--oracle", "qrels.tsv"],
        ["eval", "--qrels", db, "--run", "s-runs/bm25.run"],
        ["report", "--db", db, "-o", "r.html"],
    ):
        result = workbench(*argv, cwd=collection, timeout=20)
        assert result.returncode == 2, (argv, result.stderr)
        assert "s.db" in result.stderr and "Traceback" not in result.stderr
        assert not db.exists(), f"{argv[0]} made a store where none was"
    assert not (collection / "x.qrels").exists() and not (collection / "r.html").exists()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_team_store_nobody_serves_is_named_at_once(tmp_path: Path) -> None:
    """A PostgreSQL URL whose server is gone: one line naming it (password masked), exit 2,
    within the connect timeout, for a reader and a writer alike."""
    url = f"postgresql://ann:S3cretPW@127.0.0.1:{free_port()}/study"
    make_collection(tmp_path)
    for argv in (["coverage", "--db", url], ["simulate", "--db", url, "--oracle", "qrels.tsv"]):
        start = time.perf_counter()
        result = workbench(*argv, cwd=tmp_path, timeout=60)
        assert result.returncode == 2, result.stderr
        assert "S3cretPW" not in result.stderr + result.stdout
        assert "127.0.0.1" in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) <= 2, result.stderr
        print(f"{argv[0]}: {time.perf_counter() - start:.1f} s")


def test_a_deleted_stores_leftover_wal_is_named_not_applied(collection: Path) -> None:
    """`rm s.db` with its -wal left: a new store there would take the old WAL and read as
    malformed; pool says which file is left instead, and changes nothing."""
    db = pooled(collection)
    with sqlite3.connect(db) as conn:  # a reader keeps the WAL from being checkpointed away
        conn.execute("SELECT 1 FROM judgments").fetchall()
        assert workbench("simulate", "--db", db, "--oracle", "qrels.tsv",
                         cwd=collection).returncode == 0  # fmt: skip
        wal = collection / "s.db-wal"
        if not wal.exists():
            wal.write_bytes(b"\0" * 32)
        db.unlink()
        result = workbench(
            "pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--systems", "bm25",
            "--db", "s.db", "--policy", "static", cwd=collection,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "s.db-wal" in result.stderr and "Traceback" not in result.stderr
    assert not db.exists()
