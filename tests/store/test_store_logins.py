"""PostgreSQL logins and URLs as a hostile user meets them: one annotator's own login
(`store role-sql --annotator`), which the database itself keeps to that annotator's rows;
URLs and keyword strings whose passwords must never show; `store copy` into its own source
spelled otherwise, and a server that goes away in the middle of a copy."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from conftest import PG_URL, raw_execute
from pg_proxy import CuttableProxy
from tui_fixtures import build_store, run_async, screen_text, settle

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.core.model import Judgment, Role
from workbench.store import open_store
from workbench.store.pg_schema import login_of

ROOT = Path(__file__).resolve().parents[2]


def _schema(pg_url: str) -> str:
    return pg_url.rsplit("%3D", 1)[1]


def _make_login(pg_url: str, capsys, *args: str) -> str:  # type: ignore[no-untyped-def]
    """Run `store role-sql` as the owner would (the whole script, as psql -f does); returns
    the URL connecting as the new login."""
    capsys.readouterr()
    assert main(["store", "role-sql", "--schema", _schema(pg_url), *args]) == 0
    raw_execute(pg_url, capsys.readouterr().out)
    name = args[args.index("--annotator") + 1]
    return pg_url.replace("postgresql://", f"postgresql://{login_of(name)}@")


def _drop_logins(*names: str) -> None:
    for name in names:
        role = login_of(name)
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                admin.execute(f'DROP OWNED BY "{role}"')
                admin.execute(f'DROP ROLE "{role}"')


def _refused(url: str, sql: str) -> str:
    with pytest.raises(psycopg.Error) as caught:
        raw_execute(url, sql)
    return str(caught.value)


@pytest.fixture
def names() -> list[str]:
    """Annotator names unique to the test (roles are cluster-wide), dropped afterwards."""
    tag = uuid.uuid4().hex[:8]
    made = [f"ann{tag}", f"Bob.{tag}@x", f"adj{tag}"]
    yield made
    _drop_logins(*made)


def test_an_annotators_own_login_writes_that_annotators_rows_only(pg_url, capsys, names):
    ann, bob, _ = names
    build_store(pg_url, queries=1, per_query=3).close()
    with open_store(pg_url) as owner:
        owner.claim(bob, "q0", "d0-002")
    as_ann = _make_login(pg_url, capsys, "--annotator", ann)
    as_bob = _make_login(pg_url, capsys, "--annotator", bob)  # a second login: same SQL again
    with open_store(as_ann) as store:  # the store's own operations, as the app makes them
        assert store.claim(ann, "q0", "d0-000")
        store.add_judgment(Judgment(ann, "q0", "d0-000", 2, graded_at=1.0))
        store.add_judgment(Judgment(ann, "q0", "d0-000", None, graded_at=2.0))  # undo
        store.add_judgment(Judgment(ann, "q0", "d0-000", 1, note="a note", graded_at=3.0))
        assert store.renew_claim(ann)
        store.release_claim(ann)
        assert store.claims() == {bob: ("q0", "d0-002")}
        with pytest.raises(InputError, match=f"writes as annotator {ann} \\(role human\\) only"):
            store.add_judgment(Judgment(bob, "q0", "d0-001", 0))
        with pytest.raises(InputError, match="refused a (annotators|judgments) row"):
            store.add_judgment(Judgment(ann, "q0", "d0-001", 3, role=Role.ADJUDICATOR))
        with pytest.raises(InputError, match="refused a claims row"):
            store.claim(bob, "q0", "d0-001")
    schema = _schema(pg_url)
    refused = [
        f"INSERT INTO judgments (annotator, role, query_id, doc_id, grade, graded_at)"
        f" VALUES ('{bob}', 'human', 'q0', 'd0-001', 3, 1)",
        "INSERT INTO judgments (annotator, role, query_id, doc_id, grade, graded_at)"
        f" VALUES ('{ann}', 'adjudicator', 'q0', 'd0-001', 3, 1)",
        f"INSERT INTO annotators VALUES ('{bob}', 'human', 1)",
        f"INSERT INTO annotators VALUES ('{ann}', 'adjudicator', 1)",
        f"INSERT INTO claims VALUES ('{bob}', 'q0', 'd0-001', 1e12)",
        f"UPDATE claims SET claimed_at = 1e12 WHERE annotator = '{bob}'",
        f"UPDATE claims SET annotator = '{ann}'",
        "DELETE FROM claims",
        "INSERT INTO draws (query_id, doc_id, prob, spread, predicted, p, reserve, excluded,"
        f" annotator, drawn_at) VALUES ('q0', 'd0-001', 1, 0, 0, 1, 0, '[]', '{bob}', 1)",
        f"INSERT INTO {schema}.workbench_logins VALUES ('someone', '{bob}', 'human')",
        f"DELETE FROM {schema}.workbench_logins",
        "DROP TRIGGER judgments_own_rows ON judgments",
        "ALTER TABLE judgments DISABLE TRIGGER judgments_own_rows",
    ]
    for sql in refused:  # the database refuses them, whatever client sends them
        said = _refused(as_ann, sql)
        assert any(m in said for m in ("writes as annotator", "must be owner", "denied")), sql
    # a table of the same name in the session's own temporary schema changes nothing
    with psycopg.connect(as_ann, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE workbench_logins (login TEXT, annotator TEXT, role TEXT)")
        conn.execute("SET search_path TO pg_temp, " + schema)
        with pytest.raises(psycopg.Error, match="writes as annotator"):
            conn.execute(
                "INSERT INTO judgments (annotator, role, query_id, doc_id, grade, graded_at)"
                f" VALUES ('{bob}', 'human', 'q0', 'd0-001', 3, 1)"
            )
    with open_store(as_bob) as store:  # the other login: its own rows only, too
        store.add_judgment(Judgment(bob, "q0", "d0-001", 3))
        with pytest.raises(InputError, match="writes as annotator"):
            store.add_judgment(Judgment(ann, "q0", "d0-001", 0))
    shared = f"wbtest_shared_{uuid.uuid4().hex[:8]}"  # the shared login works as before
    assert main(["store", "role-sql", "--schema", schema]) == 0
    try:
        raw_execute(pg_url, capsys.readouterr().out.replace("workbench_annotator", shared))
        with open_store(pg_url.replace("postgresql://", f"postgresql://{shared}@")) as store:
            store.add_judgment(Judgment("dave", "q0", "d0-002", 2))
    finally:
        raw_execute(PG_URL, f"DROP OWNED BY {shared}")
        raw_execute(PG_URL, f"DROP ROLE {shared}")
    with open_store(pg_url) as owner:  # the owner's login writes as before
        owner.add_judgment(Judgment("carol", "q0", "d0-002", 1, role=Role.ADJUDICATOR))
        assert [(j.annotator, j.grade) for j in owner.judgments()] == [
            (ann, 2), (ann, None), (ann, 1), (bob, 3), ("dave", 2), ("carol", 1)
        ]  # fmt: skip
        assert owner.judgments()[2].note == "a note"


def test_the_adjudicators_login_writes_adjudicator_rows_only(pg_url, capsys, names):
    _, _, adj = names
    build_store(pg_url, queries=1, per_query=2).close()
    as_adj = _make_login(pg_url, capsys, "--annotator", adj, "--adjudicator")
    with open_store(as_adj) as store:
        store.add_judgment(Judgment(adj, "q0", "d0-000", 2, role=Role.ADJUDICATOR))
        with pytest.raises(InputError, match="role adjudicator"):
            store.add_judgment(Judgment(adj, "q0", "d0-001", 2))
    assert main(["store", "role-sql", "--adjudicator"]) == 2  # names no annotator
    assert "--annotator" in capsys.readouterr().err


@run_async
async def test_the_app_grades_undoes_notes_and_claims_under_an_own_login(
    pg_url, capsys, names
) -> None:
    from workbench.tui.app import JudgeApp

    ann = names[0]
    build_store(pg_url, queries=1, per_query=3).close()
    store = open_store(_make_login(pg_url, capsys, "--annotator", ann))
    app = JudgeApp(store, ann)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            for key in ("2", "k", "u", "n", "o", "k", "enter", "3"):
                await pilot.press(key)
                await settle(pilot, app)
            assert app.writer.wait_idle()
            assert "refused" not in screen_text(app) and "Error" not in screen_text(app)
            with open_store(pg_url) as owner:
                assert ann in owner.claims()
            await pilot.press("q")
            await settle(pilot, app)
    finally:
        app.writer.abandon()
        store.close()
    with open_store(pg_url) as owner:
        rows = owner.judgments()
        assert {j.annotator for j in rows} == {ann} and len(rows) >= 3
        assert None in [j.grade for j in rows] and "ok" in {j.note for j in rows}
        assert owner.claims() == {}  # released when the app ended


def test_login_names_are_safe_and_distinct():
    names = ["alice", "Alice", "ALICE", "al.ice", "al_ice", "ä" * 64, "x" * 64, "a-b", "a+b"]
    logins = [login_of(n) for n in names]
    assert len(set(logins)) == len(names)
    assert all(len(n.encode()) <= 63 and n.isascii() and n == n.lower() for n in logins)
    assert login_of("alice") == "wb_alice"
    for bad in ("", "a'b", 'a"b', "a b", "a;b", "\x1b[2J"):
        with pytest.raises(SystemExit) as exited:
            main(["store", "role-sql", "--annotator", bad])
        assert exited.value.code == 2


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
