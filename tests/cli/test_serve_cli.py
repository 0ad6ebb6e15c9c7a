"""`workbench serve token` and `serve`'s refusals, on SQLite and PostgreSQL: a URL per
annotator whose token the store keeps only as a hash; a new token replaces the old; --revoke
ends it; a store made before tokens opens unchanged; every bad input exits 2 naming what,
never with a traceback and never echoing a token. (The browser side: tests/web.)"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import uuid
from pathlib import Path

import psycopg
import pytest
from conftest import PG_URL, raw_execute
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.model import Judgment
from workbench.core.serve_tokens import TokenHolder, token_hash
from workbench.store import open_store


def token_of(url: str) -> str:
    assert "/#key=" in url, url
    return url.rsplit("#key=", 1)[1]


def serve(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["serve", *args])
    said = capsys.readouterr()
    return code, said.out, said.err


def table_text(location: str) -> str:
    """Every value of the serve_tokens table, as text."""
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            rows = conn.execute("SELECT * FROM serve_tokens").fetchall()
    else:
        import sqlite3

        conn = sqlite3.connect(location)
        rows = conn.execute("SELECT * FROM serve_tokens").fetchall()
        conn.close()
    return repr(rows)


def test_a_token_per_annotator_kept_as_its_hash_rotated_and_revoked(
    store_location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    build_store(store_location).close()
    code, out, err = serve(capsys, "token", "--db", store_location, "--annotator", "alice")
    assert code == 0, err
    first = token_of(out.strip())
    assert out.startswith("http://127.0.0.1:8000/#key=") and len(first) >= 40
    assert first not in err and "alice alone" in err
    stored = table_text(store_location)
    assert first not in stored and hashlib.sha256(first.encode()).hexdigest() in stored
    with open_store(store_location) as store:
        assert store.serve_token_holder(token_hash(first)) == TokenHolder("alice", "human")
    _, out, _ = serve(capsys, "token", "--db", store_location, "--annotator", "alice",
                      "--url", "https://judge.example.org/study")  # fmt: skip
    second = token_of(out.strip())
    assert out.startswith("https://judge.example.org/study/#key=")
    code, out, _ = serve(capsys, "token", "--db", store_location, "--annotator", "bob",
                         "--adjudicator")  # fmt: skip
    with open_store(store_location) as store:
        assert store.serve_token_holder(token_hash(first)) is None  # rotated
        assert store.serve_token_holder(token_hash(second)) == TokenHolder("alice", "human")
        assert store.serve_token_holder(token_hash(token_of(out.strip()))).role == "adjudicator"
    code, out, _ = serve(capsys, "token", "--db", store_location, "--annotator", "alice",
                         "--revoke")  # fmt: skip
    assert code == 0 and "revoked" in out
    with open_store(store_location) as store:
        assert store.serve_token_holder(token_hash(second)) is None
        assert store.serve_tokens() == {"alice": ("human", False), "bob": ("adjudicator", True)}
    code, out, _ = serve(capsys, "token", "--db", store_location, "--annotator", "alice",
                         "--revoke")  # fmt: skip
    assert code == 0 and "no live URL" in out


def test_a_store_made_before_tokens_opens_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    build_store(db).close()
    before = db.read_bytes()
    with open_store(db, read_only=True) as store:
        assert store.serve_token_holder(token_hash("x" * 43)) is None
        assert store.serve_tokens() == {}
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "args, said",
    [
        (["token"], "--annotator NAME is required"),
        (["token", "--annotator", "a b"], "is not a valid name"),
        (["--annotator", "alice"], "--annotator: options of `workbench serve token`"),
        (["token", "--annotator", "alice", "--url", "ftp://x"], "expected http://"),
        (["token", "--annotator", "alice", "--url", "http://h/#key=1"], "without ?query"),
        (["token", "--annotator", "alice", "--lead", "--adjudicator"], "not allowed with"),
        (["--certfile", "cert.pem"], "--certfile and --keyfile: give both"),
        (["--certfile", "nope.pem", "--keyfile", "nope.key"], "--certfile nope.pem: no such"),
        (["--port", "70000"], "is not a port"),
        (["token", "--annotator", "bob", "--adjudicator"], "already holds human judgments"),
    ],
)
def test_bad_input_exits_2_naming_it(
    args: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "s.db")
    with build_store(db) as store:
        store.add_judgment(Judgment("bob", "q0", "d0-000", 2))
    capsys.readouterr()
    try:
        code = main(["serve", *args, "--db", db])
    except SystemExit as stop:  # argparse's own refusals
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err and "Traceback" not in err


def test_serve_on_a_busy_port_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    build_store(db).close()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = serve(capsys, "--db", db, "--port", str(port))
    assert code == 2 and f"--port {port}: cannot listen there" in err


def test_the_served_app_writes_through_the_annotators_own_login(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """alice's app process opens the store as her own login (`SET ROLE` at connection), so the
    database's checks on her login hold for the served app too."""
    from workbench.core.store_url import StoreLocation
    from workbench.web.server import SERVED_ENV, JudgingServer, ServeConfig

    build_store(pg_url).close()
    name = f"alice{uuid.uuid4().hex[:6]}"
    capsys.readouterr()
    assert main(["store", "role-sql", "--db", pg_url, "--annotator", name]) == 0
    sql = capsys.readouterr().out
    login = sql.split(":", 1)[0].removeprefix("-- ")
    raw_execute(pg_url, sql)
    try:
        code, _, err = serve(capsys, "token", "--db", pg_url, "--annotator", name)
        assert code == 0, err
        config = ServeConfig(StoreLocation(pg_url), "127.0.0.1", 8000, "http://x/", None, 1,
                             "python", "")  # fmt: skip
        with open_store(pg_url) as store:
            env = asyncio.run(JudgingServer(config, store)._app_env(TokenHolder(name, "human")))
        assert "role%3D" + login in env[SERVED_ENV["db"]]
        with open_store(env[SERVED_ENV["db"]]) as as_alice:
            own = as_alice.own_login()
            assert own is not None and own.annotator == name
            with pytest.raises(Exception, match="writes"):  # her login writes her rows only
                as_alice.add_judgment(Judgment("someone-else", "q0", "d0-000", 1))
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f'DROP OWNED BY "{login}"')
            admin.execute(f'DROP ROLE "{login}"')
