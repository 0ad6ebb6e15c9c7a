"""The team store on a real PostgreSQL server: what only it has (URLs and their passwords, a
server that goes away, an annotator's login) and the copy between backends."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from conftest import PG_URL, raw_execute, schema_url
from pg_proxy import CuttableProxy
from tui_fixtures import build_store, run_async, screen_text, settle

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.core.model import Doc, Judgment, Query
from workbench.store import open_store
from workbench.store.postgres import NoStore


def test_a_password_never_appears_in_an_error(capsys):
    url = "postgresql://alice:hunter2@127.0.0.1:1/team"
    assert main(["coverage", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "hunter2" not in err and "alice:***@127.0.0.1:1/team" in err
    assert "cannot reach the PostgreSQL server" in err
    query_style = "postgresql://127.0.0.1:1/team?user=alice&password=hunter2"
    assert main(["export", "--db", query_style, "--qrels", "/dev/null"]) == 2
    assert "hunter2" not in capsys.readouterr().err
    for url in (
        "postgresql://alice:hu#nter2@127.0.0.1:1/team",
        "postgresql://alice:hun/ter2@127.0.0.1:1/team",
        "postgresql://alice:hunter2@ss@127.0.0.1:1/team",
        "postgresql://alice:hun%zzter2@127.0.0.1:1/team",
        "postgresql://127.0.0.1:1/team?sslpassword=hunter2",
        "postgresql://127.0.0.1:1/team?pass%77ord=hunter2",
    ):
        main(["coverage", "--db", url])
        main(["eval", "--qrels", url, "--run", "/dev/null"])
        out = capsys.readouterr()
        assert "hunter2" not in out.out + out.err and "ter2" not in out.out + out.err, url


def test_no_store_and_someone_elses_tables_are_refused_untouched(pg_url, capsys):
    with pytest.raises(NoStore, match="no workbench judgments store"):
        open_store(pg_url)
    raw_execute(pg_url, "CREATE TABLE theirs (x int)")
    with pytest.raises(InputError, match="holds other tables"):
        open_store(pg_url, create=True)
    raw_execute(pg_url, "INSERT INTO theirs VALUES (1)")  # still theirs, still there


def test_nul_in_a_passage_is_refused_by_name_and_nothing_is_written(pg_url):
    with open_store(pg_url, create=True) as store:
        with pytest.raises(InputError, match="NUL character"):
            store.add_docs([Doc("ok", "fine"), Doc("bad", "a\x00b")])
        assert store.docs(["ok", "bad"]) == {}


def test_a_newer_schema_is_refused(pg_url):
    open_store(pg_url, create=True).close()
    raw_execute(pg_url, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(InputError, match="newer than this workbench supports"):
        open_store(pg_url)


def test_the_annotator_login_adds_judgments_and_can_change_none(pg_url, capsys):
    schema = pg_url.rsplit("%3D", 1)[1]
    build_store(pg_url, queries=1, per_query=2).close()
    assert main(["store", "role-sql", "--schema", schema]) == 0
    role = f"wbtest_annotator_{uuid.uuid4().hex[:8]}"
    sql = capsys.readouterr().out.replace("workbench_annotator", role)
    try:
        raw_execute(pg_url, sql)  # the whole script, as psql -f runs it
        as_annotator = pg_url.replace("postgresql://", f"postgresql://{role}@")
        with open_store(as_annotator) as store:
            store.add_judgment(Judgment("ann", "q0", "d0-000", 2))
            assert store.claim("ann", "q0", "d0-001")
            with pytest.raises(Exception, match="append-only|permission denied"):
                raw_execute(as_annotator, "UPDATE judgments SET grade = 0")
            with pytest.raises(Exception, match="permission denied"):
                raw_execute(as_annotator, "DELETE FROM pool")
            assert [j.grade for j in store.judgments()] == [2]
    finally:
        raw_execute(PG_URL, f"DROP OWNED BY {role}")
        raw_execute(PG_URL, f"DROP ROLE {role}")


def test_store_copy_there_and_back_is_lossless(pg_url, tmp_path: Path, capsys):
    source = tmp_path / "src.db"
    with build_store(source, queries=2, per_query=3) as store:
        store.add_queries([Query("q[/]", "hostile \x1b[2J [b]x[/b]", "nar")])
        store.add_judgment(Judgment("a", "q0", "d0-000", 3, note="ok \x1b]2;T\x07"))
        store.add_judgment(Judgment("a", "q0", "d0-000", None))
        store.set_required_judges({("q0", "d0-001"): 2})
        store.claim("a", "q0", "d0-002")
    assert main(["store", "copy", str(source), pg_url]) == 0
    there = capsys.readouterr().out
    assert "DIFFERS" not in there and "judgments" in there
    back = tmp_path / "back.db"
    assert main(["store", "copy", pg_url, str(back)]) == 0
    again = capsys.readouterr().out
    sums = [line.split()[3:5] for line in there.splitlines() if line.startswith("  ")]
    assert sums == [line.split()[3:5] for line in again.splitlines() if line.startswith("  ")]
    with open_store(source) as a, open_store(back) as b:
        assert a.judgments() == b.judgments() and a.pool() == b.pool()
        assert a.queries() == b.queries() and a.claims() == b.claims()
    with open_store(pg_url) as store:  # ids go on after the copied ones
        assert store.add_judgment(Judgment("b", "q0", "d0-001", 1)) == 3
    # a destination with rows is refused, unless --append
    assert main(["store", "copy", str(source), pg_url]) == 2
    assert "--append" in capsys.readouterr().err
    assert main(["store", "copy", str(source), str(source)]) == 2


@run_async
async def test_the_app_keeps_a_grade_while_the_server_is_gone(pg_url) -> None:
    from workbench.tui.app import JudgeApp

    build_store(pg_url, queries=1, per_query=5).close()
    proxy = CuttableProxy(("127.0.0.1", 5432))
    via_proxy = schema_url(pg_url.rsplit("%3D", 1)[1]).replace(
        "127.0.0.1:5432", f"127.0.0.1:{proxy.port}"
    )
    store = open_store(via_proxy)
    app = JudgeApp(store, "a")
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            await pilot.press("2")
            await settle(pilot, app)
            proxy.cut()
            await pilot.press("3")
            for _ in range(200):
                await pilot.pause(0.02)
                if "store unreachable: retrying…" in screen_text(app):
                    break
            text = screen_text(app)
            assert "store unreachable: retrying…" in text
            assert "grade 3 for d0-001 kept, not saved" in text
            with open_store(pg_url) as check:
                assert [j.grade for j in check.judgments()] == [2]
            proxy.restore()
            await settle(pilot, app)
            assert "Connected again" in screen_text(app)
            proxy.cut()  # gone again: two q leave without the grade that cannot be saved
            await pilot.press("1")
            for _ in range(200):
                await pilot.pause(0.02)
                if app.writer.retrying:
                    break
            await pilot.press("q")
            await pilot.pause(0.2)
            assert app.is_running and app._quit_asked  # waiting for the grade to be saved
            await pilot.press("q")
            for _ in range(200):
                await pilot.pause(0.02)
                if not app.is_running:
                    break
            assert not app.is_running and app.writer.abandoned
        with open_store(pg_url) as check:
            assert [(j.doc_id, j.grade) for j in check.judgments()] == [
                ("d0-000", 2),
                ("d0-001", 3),
            ]
    finally:
        app.writer.abandon()  # a failed check must not leave the store thread retrying
        store.close()
        proxy.close()
