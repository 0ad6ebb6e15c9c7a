"""Stores and inputs in hostile states, through real processes: a pipe where a file should be,
a store another process holds locked, a store in a folder this user cannot write, someone
else's SQLite file, damaged values. Each is exit 2 with one line, at once or after a bounded
wait that is said on stderr; a command that only reads never changes the file."""

from __future__ import annotations

import hashlib
import os
import select
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.store import Store

QRELS = "q1 0 d0 2\nq1 0 d1 1\nq2 0 d2 1\n"
RUN = "q1 Q0 d0 1 2.0 s\nq1 Q0 d1 2 1.0 s\n"
HOLDER = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "conn.execute('BEGIN EXCLUSIVE')\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
    "conn.execute('COMMIT')\n"
)
"""Holds the store's write lock (BEGIN EXCLUSIVE) until a line arrives on its stdin."""


def make_store(path: Path) -> Path:
    with Store(path, create=True) as store:
        store.add_queries([Query("q1", "first"), Query("q2", "second")])
        store.add_docs(Doc(f"d{i}", f"text {i}") for i in range(10))
        pooling = store.record_pooling(["bm25"], 4, "static", 0, {})
        store.add_pool_entries(
            [
                PoolEntry(q, f"d{i}", i, provenance=(Provenance("bm25", i + 1, 1.0),))
                for q in ("q1", "q2")
                for i in range(4)
            ],
            pooling,
        )
        store.add_judgment(Judgment("alice", "q1", "d0", 2))
        store.add_judgment(Judgment("bob", "q1", "d0", 1))
        store.set_meta("corpus_size", "10")
    return path


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "q.qrels").write_text(QRELS)
    (tmp_path / "r.run").write_text(RUN)
    return tmp_path


def workbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    """The command's one error line (exit 2, no traceback, no internal error)."""
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    return lines[0]


# -- a pipe where a file should be -----------------------------------------------------------------

PIPE_CASES = {
    "coverage --db": ["coverage", "--db", "PIPE"],
    "export --db": ["export", "--db", "PIPE", "--qrels", "out.qrels"],
    "report --db": ["report", "--db", "PIPE", "-o", "out.html"],
    "import-labels --db": ["import-labels", "--db", "PIPE", "--as", "lab", "q.qrels"],
    "simulate --db": ["simulate", "--db", "PIPE", "--oracle", "q.qrels"],
    "store copy SOURCE": ["store", "copy", "PIPE", "copy.db"],
    "eval --qrels": ["eval", "--qrels", "PIPE", "--run", "r.run"],
    "eval --run": ["eval", "--qrels", "q.qrels", "--run", "PIPE"],
    "agree LABELS": ["agree", "PIPE", "q.qrels"],
    "simulate --oracle": ["simulate", "--db", "s.db", "--oracle", "PIPE"],
}


@pytest.mark.parametrize("case", list(PIPE_CASES))
@pytest.mark.parametrize("link", [False, True], ids=["fifo", "link to fifo"])
def test_a_pipe_given_as_an_input_is_refused_at_once(files, case, link):
    """Opening a FIFO for reading waits for a writer, forever: it is refused unopened (a hang
    fails this test through the subprocess timeout instead of hanging the suite)."""
    make_store(files / "s.db")
    os.mkfifo(files / "fifo")
    name = "fifo"
    if link:
        (files / "link").symlink_to(files / "fifo")
        name = "link"
    args = [name if a == "PIPE" else a for a in PIPE_CASES[case]]
    line = one_error(workbench(*args, cwd=files, timeout=30))
    assert f"{name}: not a regular file" in line
    assert not (files / "copy.db").exists() and not (files / "out.qrels").exists()


# -- a store another process holds locked ----------------------------------------------------------


class Holder:
    """Another process holding the store's write lock until `release`."""

    def __init__(self, path: Path):
        self.child = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.child.stdout is not None and self.child.stdout.readline() == "held\n"

    def release(self) -> None:
        if self.child.poll() is None:
            assert self.child.stdin is not None
            self.child.stdin.write("done\n")
            self.child.stdin.close()
            assert self.child.wait(timeout=30) == 0

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()


def lock_notice(child: subprocess.Popen[str], timeout: float = 30) -> str:
    """The first line the child writes on stderr about the lock (failing rather than waiting
    past `timeout` for it)."""
    assert child.stderr is not None
    while True:
        ready, _, _ = select.select([child.stderr], [], [], timeout)
        assert ready, "the command said nothing of the lock while the store stayed locked"
        line = child.stderr.readline()
        assert line, "the command ended without a word of the lock"
        if "lock" in line:
            return line


LOCKED_WRITERS = {
    "import-labels": ["import-labels", "--db", "s.db", "--as", "lab", "q.qrels"],
    "simulate": ["simulate", "--db", "s.db", "--oracle", "q.qrels", "--budget", "3"],
    "assign": ["assign", "--db", "s.db", "--overlap", "0.5"],
}


@pytest.mark.parametrize("command", list(LOCKED_WRITERS))
def test_a_locked_store_is_said_at_once_and_waited_for(files, command):
    """While another process holds the lock the command says so on stderr (and waits); once
    the lock is released it does its job. No ten silent minutes."""
    make_store(files / "s.db")
    with Holder(files / "s.db") as holder:
        child = subprocess.Popen(
            [sys.executable, "-m", "workbench", *LOCKED_WRITERS[command]],
            cwd=files,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = lock_notice(child)
            assert "another process holds the store's write lock; waiting up to 60 s" in line
            assert child.poll() is None  # still waiting: the holder has not let go
            holder.release()
            _, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == 0, err
    with Store(files / "s.db", read_only=True) as store:
        if command == "assign":
            assert store.required_judges()
        else:
            assert len(store.judgments()) > 2


def test_the_wait_for_a_locked_store_is_bounded(files):
    """WORKBENCH_LOCK_WAIT bounds the wait; then exit 2 saying the store is locked, nothing
    written."""
    make_store(files / "s.db")
    with Holder(files / "s.db"):
        done = workbench(
            *LOCKED_WRITERS["import-labels"], cwd=files, env={"WORKBENCH_LOCK_WAIT": "1"}
        )
    line = one_error(done)
    assert "s.db: store is locked by another process; try again when it is done" in line
    with Store(files / "s.db", read_only=True) as store:
        assert "lab" not in store.annotators()


@pytest.mark.parametrize("value", ["soon", "-1", "nan"])
def test_a_lock_wait_that_is_not_seconds_is_refused(files, value):
    make_store(files / "s.db")
    line = one_error(workbench("coverage", "--db", "s.db", cwd=files,
                               env={"WORKBENCH_LOCK_WAIT": value}))  # fmt: skip
    assert "WORKBENCH_LOCK_WAIT" in line and "not a number of seconds" in line


@pytest.mark.parametrize(
    "command",
    [["coverage", "--db", "s.db"], ["export", "--db", "s.db", "--qrels", "o.qrels"],
     ["eval", "--qrels", "s.db", "--run", "r.run"]],
    ids=["coverage", "export", "eval"],
)  # fmt: skip
def test_a_reader_of_a_locked_rollback_journal_store_says_it_is_locked(files, command):
    """A store in rollback-journal mode held by BEGIN EXCLUSIVE blocks readers too: they say
    it is locked (never 'not a workbench judgments store'), and wait a bounded time."""
    make_store(files / "s.db")
    conn = sqlite3.connect(files / "s.db")
    assert conn.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    conn.close()
    with Holder(files / "s.db"):
        done = workbench(*command, cwd=files, env={"WORKBENCH_LOCK_WAIT": "1"})
    line = one_error(done)
    assert "store is locked by another process" in line
    assert "not a workbench" not in done.stderr


def test_a_reader_of_a_wal_store_is_not_blocked_by_a_writer(files):
    make_store(files / "s.db")
    with Holder(files / "s.db"):
        done = workbench("coverage", "--db", "s.db", cwd=files, env={"WORKBENCH_LOCK_WAIT": "0"})
    assert done.returncode == 0, done.stderr
    assert "lock" not in done.stderr


# -- a store in a folder this user cannot write ----------------------------------------------------


def as_unprivileged(command: list[str]) -> list[str]:
    """`command` run so that a folder's mode binds it: as root, without the capabilities that
    bypass file modes (setpriv); as anyone else, as is."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot bind")
    drop = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", "--", *command]


def test_a_wal_store_in_a_read_only_folder_is_explained(files):
    """SQLite cannot open a WAL store without creating its -shm file beside it: a reader in a
    folder it cannot write is told exactly that, not 'not a workbench judgments store'."""
    folder = files / "readonly"
    folder.mkdir()
    make_store(folder / "s.db")
    folder.chmod(0o555)
    try:
        done = subprocess.run(
            as_unprivileged([sys.executable, "-m", "workbench", "coverage", "--db", "s.db"]),
            cwd=folder, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    if done.returncode == 0:
        pytest.skip("this filesystem lets the reader create s.db-shm in a read-only folder")
    line = one_error(done)
    assert "s.db: its folder is read-only to this user" in line and "s.db-shm" in line
    assert "not a workbench" not in done.stderr


def test_a_read_only_store_file_is_read_and_not_written(files):
    """A store file this user may only read: the readers work; a writer says it is read-only."""
    make_store(files / "s.db")
    (files / "s.db").chmod(0o444)
    command = [sys.executable, "-m", "workbench"]
    read = subprocess.run(as_unprivileged([*command, "coverage", "--db", "s.db"]), cwd=files,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert read.returncode == 0, read.stderr
    write = subprocess.run(
        as_unprivileged([*command, "import-labels", "--db", "s.db", "--as", "lab", "q.qrels"]),
        cwd=files, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "s.db: read-only to this user: cannot write to it" in one_error(write)


# -- someone else's SQLite file --------------------------------------------------------------------

READERS = {
    "coverage": ["coverage", "--db", "m.db"],
    "export": ["export", "--db", "m.db", "--qrels", "o.qrels"],
    "eval": ["eval", "--qrels", "m.db", "--run", "r.run"],
    "report": ["report", "--db", "m.db", "-o", "r.html"],
    "agree": ["agree", "--db", "m.db"],
    "store copy": ["store", "copy", "m.db", "copy.db"],
    "import-labels": ["import-labels", "--db", "m.db", "--as", "lab", "q.qrels"],
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("meta", [{}, {"schema_version": "1"}], ids=["meta", "schema_version"])
def test_someone_elses_sqlite_file_is_left_byte_for_byte(files, meta):
    """A SQLite file with a meta(key, value) table (even one that says schema_version 1) is
    refused by every command, readers and writers, and its bytes stay as they were (it was
    switched to WAL before)."""
    conn = sqlite3.connect(files / "m.db")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    conn.commit()
    conn.close()
    before = sha256(files / "m.db")
    for name, args in READERS.items():
        line = one_error(workbench(*args, cwd=files))
        assert "m.db: " in line and "not a workbench judgments store" in line, name
        assert sha256(files / "m.db") == before, f"{name} changed the file"
    assert not (files / "copy.db").exists()


def test_the_read_only_commands_never_change_a_store(files):
    """Even a store of ours in rollback-journal mode (copied from elsewhere, say) is not
    switched to WAL by a command that only reads."""
    make_store(files / "m.db")
    conn = sqlite3.connect(files / "m.db")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    before = sha256(files / "m.db")
    for name, args in READERS.items():
        if name == "import-labels":
            continue
        done = workbench(*args, cwd=files)
        assert done.returncode == 0, (name, done.stderr)
        assert sha256(files / "m.db") == before, f"{name} changed the store"


# -- damaged values --------------------------------------------------------------------------------

DAMAGE = {
    "grade 'abc'": (
        "UPDATE judgments SET grade = 'abc' WHERE judgment_id = 1",
        "table judgments, row (judgment_id 1): grade 'abc' is not an integer",
    ),
    "inclusion probability 0": (
        "UPDATE pool SET inclusion_prob = 0 WHERE query_id = 'q1' AND doc_id = 'd1'",
        "table pool, row (query_id 'q1', doc_id 'd1'): inclusion_prob 0.0 is not a probability",
    ),
    "bad params JSON": (
        "UPDATE poolings SET params = '{bad'",
        "table poolings, row (pooling_id 1): params '{bad' is not JSON",
    ),
    "systems not a list": (
        "UPDATE poolings SET systems = '3'",
        "table poolings, row (pooling_id 1): systems '3' is not a JSON list of strings",
    ),
    "rank as text": (
        "UPDATE provenance SET rank = 'x' WHERE query_id = 'q1' AND doc_id = 'd1'",
        "table provenance, row (query_id 'q1', doc_id 'd1', system 'bm25'): rank 'x'",
    ),
    "graded_at NULL": (
        None,
        "table judgments, row (judgment_id 1): graded_at NULL is not a finite number",
    ),
}


def damage(path: Path, sql: str | None) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER judgments_append_only_update")
    if sql is None:  # a NULL where the schema says NOT NULL: a store built by other hands
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, 'graded_at REAL NOT NULL',"
            " 'graded_at REAL') WHERE name = 'judgments'"
        )
        conn.close()
        conn = sqlite3.connect(path, isolation_level=None)
        sql = "UPDATE judgments SET graded_at = NULL WHERE judgment_id = 1"
    conn.execute(sql)
    conn.close()


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_store_value_is_one_line_naming_table_row_and_field(files, case):
    sql, expected = DAMAGE[case]
    make_store(files / "s.db")
    damage(files / "s.db", sql)
    commands = {
        "export": ["export", "--db", "s.db", "--qrels", "o.qrels", "--golden", "g.yaml"],
        "report": ["report", "--db", "s.db", "-o", "r.html"],
    }
    if not case.startswith(("bad params", "systems")):  # poolings are read by these two only
        commands["coverage"] = ["coverage", "--db", "s.db"]
        commands["eval"] = ["eval", "--qrels", "s.db", "--run", "r.run"]
    for name, args in commands.items():
        line = one_error(workbench(*args, cwd=files))
        assert line.startswith("error: s.db: ") and expected in line, (name, line)
    assert not {"o.qrels", "g.yaml", "r.html"} & {p.name for p in files.iterdir()}
