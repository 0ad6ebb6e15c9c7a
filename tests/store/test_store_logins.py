"""PostgreSQL URLs as a hostile user meets them: URLs and keyword strings whose passwords must
never show; `store copy` into its own source spelled otherwise, and a server that goes away in
the middle of a copy. One annotator's own login: test_store_own_logins.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pg_proxy import CuttableProxy
from tui_fixtures import build_store

from workbench.cli import main
from workbench.store import open_store

ROOT = Path(__file__).resolve().parents[2]


# -- passwords in URLs and keyword strings ----------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


def test_no_part_of_a_password_is_shown_however_the_url_is_written(tmp_path):
    for url in (
        "postgresql://u:S3cret@PW@nohost.invalid/x",
        "postgresql://u:S3cr/etPW@127.0.0.1:1/x",
        "postgresql://u:S3cr?etPW@127.0.0.1:1/x",
        "postgresql://u:S3cr@et@PW@127.0.0.1:1/x?sslmode=disable",
    ):
        for args in (["coverage", "--db", url], ["store", "copy", url, "x.db"]):
            done = _cli(*args, cwd=tmp_path)
            said = done.stdout + done.stderr
            assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, said
            assert not any(part in said for part in ("S3cr", "etPW", "PW")), said
            assert "percent-encoded" in said
    assert list(tmp_path.iterdir()) == []


def test_a_keyword_connection_string_is_refused_and_never_made_a_file(tmp_path):
    dsn = "host=127.0.0.1 port=5432 dbname=test user=u password=S3cretPW"
    quoted = "dbname=test password='S3cret PW'"
    source = tmp_path / "src.db"
    build_store(source, queries=1, per_query=2).close()
    before = sorted(p.name for p in tmp_path.iterdir())
    for args in (
        ["coverage", "--db", dsn],
        ["coverage", "--db", quoted],
        ["export", "--db", dsn, "--qrels", "out.qrels"],
        ["store", "copy", str(source), dsn],
        ["store", "copy", dsn, "x.db"],
        ["pool", "--corpus", str(ROOT / "corpora/demo"), "--queries",
         str(ROOT / "corpora/demo/queries.jsonl"), "--db", dsn],
    ):  # fmt: skip
        done = _cli(*args, cwd=tmp_path)
        said = done.stdout + done.stderr
        assert done.returncode == 2 and "S3cret" not in said and "PW" not in said, said
        assert "postgresql://" in said, said
    # SQLite's own -wal/-shm beside the source (a read-only open cannot remove them) aside,
    # no file appeared: none named after the connection string
    after = [p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))]
    assert sorted(after) == before


# -- store copy into itself; a server gone mid-copy --------------------------------------------


def test_store_copy_into_its_own_source_spelled_otherwise_is_refused(tmp_path, pg_url):
    source = tmp_path / "a.db"
    build_store(source, queries=1, per_query=2).close()
    (tmp_path / "link.db").symlink_to(source)
    os.link(source, tmp_path / "hard.db")
    (tmp_path / "sub").mkdir()
    before = source.read_bytes()
    for other in ("link.db", "hard.db", "sub/../a.db", "./a.db", str(source)):
        for append in ([], ["--append"]):
            done = _cli("store", "copy", "a.db", other, *append, cwd=tmp_path)
            assert done.returncode == 2 and "is the source" in done.stderr, (other, done.stderr)
    assert source.read_bytes() == before
    build_store(pg_url, queries=1, per_query=2).close()
    proxy = CuttableProxy(("127.0.0.1", 5432))
    try:
        for other in (
            pg_url.replace("127.0.0.1", "localhost"),
            pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}"),
            pg_url + "&application_name=other",
        ):
            assert main(["store", "copy", pg_url, other, "--append"]) == 2
    finally:
        proxy.close()
    with open_store(pg_url) as store:
        assert len(store.pool()) == 2 and store.judgments() == []


class CuttingProxy(CuttableProxy):
    """Cuts every connection once the clients have sent `after` bytes: the server goes away
    at a point the test chooses, in the middle of a copy's writes."""

    def __init__(self, target: tuple[str, int], after: int):
        self.after, self.sent = after, 0
        super().__init__(target)

    def _pipe(self, source, sink) -> None:  # type: ignore[no-untyped-def,override]
        try:
            while data := source.recv(65536):
                if sink.getpeername() == self.target:
                    self.sent += len(data)
                    if self.sent > self.after:
                        break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(2)
            except OSError:
                pass
        if self.sent > self.after:
            self.cut()


def test_a_server_gone_in_the_middle_of_a_copy_is_one_line(tmp_path, pg_url):
    source = tmp_path / "src.db"
    build_store(source, queries=10, per_query=100).close()
    proxy = CuttingProxy(("127.0.0.1", 5432), after=60_000)
    try:
        url = pg_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        done = _cli("store", "copy", str(source), url, cwd=tmp_path)
    finally:
        proxy.close()
    assert proxy.sent > 60_000  # it was cut during the copy's writes
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "cannot reach the PostgreSQL server" in done.stderr
    assert "Pipeline" not in done.stderr and "ignored" not in done.stderr
    with open_store(pg_url) as store:  # one transaction: nothing of it landed
        assert store.pool() == []
