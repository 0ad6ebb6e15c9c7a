"""One annotator's own PostgreSQL login (`store role-sql --annotator NAME --db STORE`), as a team
lead meets it: the database keeps the login to that annotator's checked rows (name, role, a grade
of the study's scale, a pooled item, the server's time) and to that annotator's judgments when
reading; the script can be run again, per study, with a password given or generated once; the
logins survive `store copy`; the app refuses another name at launch. Every login here is a real
role on the test server, and every check connects as it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import PG_URL, raw_execute, schema_url
from tui_fixtures import build_store, run_async, screen_text, settle

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.core.model import Judgment, Role
from workbench.flows.judging_requests import timed_judgment
from workbench.store import open_store
from workbench.store.pg_logins import login_of


def _schema(pg_url: str) -> str:
    return pg_url.rsplit("%3D", 1)[1]


def _as(pg_url: str, login: str) -> str:
    return pg_url.replace("postgresql://", f"postgresql://{login}@")


class Logins:
    """Makes logins as the store's owner does (`role-sql`, then the whole script, as psql -f
    runs it) and drops every role it made when the test ends (roles are server-wide)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]):
        self.capsys = capsys
        self.made: set[str] = set()

    def role_sql(self, pg_url: str, *args: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(["store", "role-sql", "--db", pg_url, *args])
        said = self.capsys.readouterr()
        return code, said.out, said.err

    def make(self, pg_url: str, name: str, *args: str) -> str:
        """The URL connecting as `name`'s own login in the store at `pg_url`."""
        code, sql, err = self.role_sql(pg_url, "--annotator", name, *args)
        assert code == 0, err
        login = sql.split(":", 1)[0].removeprefix("-- ")
        self.made.add(login)
        raw_execute(pg_url, sql)
        return _as(pg_url, login)

    def drop(self) -> None:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            for role in self.made:
                if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    admin.execute(f'DROP OWNED BY "{role}"')
                    admin.execute(f'DROP ROLE "{role}"')


@pytest.fixture
def logins(capsys: pytest.CaptureFixture[str]) -> Iterator[Logins]:
    made = Logins(capsys)
    yield made
    made.drop()


@pytest.fixture
def names() -> list[str]:
    """Annotator names unique to the test."""
    tag = uuid.uuid4().hex[:8]
    return [f"ann{tag}", f"Bob.{tag}@x", f"adj{tag}"]


@pytest.fixture
def other_schema() -> Iterator[str]:
    """A second study's schema on the same server."""
    schema = f"wbtest_{uuid.uuid4().hex[:12]}"
    raw_execute(PG_URL, f"CREATE SCHEMA {schema}")
    yield schema_url(schema)
    raw_execute(PG_URL, f"DROP SCHEMA {schema} CASCADE")


def _stamped(name: str, query_id: str, doc_id: str, grade: int | None, **kwargs) -> Judgment:  # type: ignore[no-untyped-def]
    """A judgment stamped as the app stamps it (`timed_judgment`), shown a second ago."""
    return timed_judgment(
        name, query_id, doc_id, grade, kwargs.pop("note", ""), time.time() - 1.0, **kwargs
    )


def _refused(url: str, sql: str) -> str:
    with pytest.raises(psycopg.Error) as caught:
        raw_execute(url, sql)
    return str(caught.value)


def _insert(name: str, query_id: str, doc_id: str, grade: object, shown: str, graded: str,
            elapsed: str = "0") -> str:  # fmt: skip
    return (
        "INSERT INTO judgments (annotator, role, query_id, doc_id, grade, shown_at, graded_at,"
        f" elapsed_ms) VALUES ('{name}', 'human', '{query_id}', '{doc_id}', {grade}, {shown},"
        f" {graded}, {elapsed})"
    )


NOW = "extract(epoch FROM clock_timestamp())"


# -- writing: the login's own, checked rows only ------------------------------------------------


def test_an_annotators_own_login_writes_that_annotators_rows_only(pg_url, logins, names):
    ann, bob, _ = names
    build_store(pg_url, queries=1, per_query=3).close()
    with open_store(pg_url) as owner:
        owner.claim(bob, "q0", "d0-002")
    as_ann = logins.make(pg_url, ann)
    as_bob = logins.make(pg_url, bob)  # a second login: the same script again
    with open_store(as_ann) as store:  # the store's own operations, as the app makes them
        assert store.claim(ann, "q0", "d0-000")
        store.add_judgment(_stamped(ann, "q0", "d0-000", 2))
        store.add_judgment(_stamped(ann, "q0", "d0-000", None))  # undo
        store.add_judgment(_stamped(ann, "q0", "d0-000", 1, note="a note"))
        assert store.renew_claim(ann)
        store.release_claim(ann)
        assert store.claims() == {bob: ("q0", "d0-002")}
        with pytest.raises(InputError, match=f"writes as annotator {ann} \\(role human\\) only"):
            store.add_judgment(_stamped(bob, "q0", "d0-001", 0))
        with pytest.raises(InputError, match="refused a (annotators|judgments) row"):
            store.add_judgment(_stamped(ann, "q0", "d0-001", 3, role=Role.ADJUDICATOR))
        with pytest.raises(InputError, match="refused a claims row"):
            store.claim(bob, "q0", "d0-001")
    schema = _schema(pg_url)
    refused = [
        _insert(bob, "q0", "d0-001", 3, NOW, NOW),
        _insert(ann, "q0", "d0-001", 3, NOW, NOW).replace("'human'", "'adjudicator'"),
        f"INSERT INTO annotators VALUES ('{bob}', 'human', {NOW})",
        f"INSERT INTO annotators VALUES ('{ann}', 'adjudicator', {NOW})",
        f"INSERT INTO claims VALUES ('{bob}', 'q0', 'd0-001', {NOW})",
        f"UPDATE claims SET claimed_at = {NOW} WHERE annotator = '{bob}'",
        f"UPDATE claims SET annotator = '{ann}'",
        "DELETE FROM claims",
        "INSERT INTO draws (query_id, doc_id, prob, spread, predicted, p, reserve, excluded,"
        f" annotator, drawn_at) VALUES ('q0', 'd0-001', 1, 0, 0, 1, 0, '[]', '{bob}', {NOW})",
        f"INSERT INTO {schema}.workbench_logins VALUES ('someone', '{bob}', 'human')",
        f"DELETE FROM {schema}.workbench_logins",
        "DROP TRIGGER judgments_own_rows ON judgments",
        "ALTER TABLE judgments DISABLE TRIGGER judgments_own_rows",
        "ALTER TABLE judgments DISABLE ROW LEVEL SECURITY",
        "DROP POLICY workbench_own_reads ON judgments",
    ]
    for sql in refused:  # the database refuses them, whatever client sends them
        said = _refused(as_ann, sql)
        assert any(m in said for m in ("writes as annotator", "must be owner", "denied")), sql
    # a table of the same name in the session's own temporary schema changes nothing
    with psycopg.connect(as_ann, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE workbench_logins (login TEXT, annotator TEXT, role TEXT)")
        conn.execute("SET search_path TO pg_temp, " + schema)
        with pytest.raises(psycopg.Error, match="writes as annotator"):
            conn.execute(_insert(bob, "q0", "d0-001", 3, NOW, NOW))
    with open_store(as_bob) as store:  # the other login: its own rows only, too
        store.add_judgment(_stamped(bob, "q0", "d0-001", 3))
        with pytest.raises(InputError, match="writes as annotator"):
            store.add_judgment(_stamped(ann, "q0", "d0-001", 0))
    with open_store(pg_url) as owner:  # the owner's login writes as before
        owner.add_judgment(Judgment("carol", "q0", "d0-002", 1, role=Role.ADJUDICATOR))
        assert [(j.annotator, j.grade) for j in owner.judgments()] == [
            (ann, 2), (ann, None), (ann, 1), (bob, 3), ("carol", 1)
        ]  # fmt: skip
        assert owner.judgments()[2].note == "a note"


def test_an_own_login_writes_no_row_that_no_command_would(pg_url, logins, names):
    """Grade 99, a query and a passage that exist nowhere, a made-up time and time per grade:
    each refused by the database itself, for every table the login writes."""
    ann = names[0]
    build_store(pg_url, queries=2, per_query=3).close()
    as_ann = logins.make(pg_url, ann)
    shown, graded = f"{NOW} - 2", NOW
    refused = {
        "study's scale": [
            _insert(ann, "q0", "d0-000", 99, shown, graded, "2000"),
            _insert(ann, "q0", "d0-000", -1, shown, graded, "2000"),
        ],
        "pooled items only": [
            _insert(ann, "q99", "zz", 1, shown, graded, "2000"),
            _insert(ann, "q0", "zz", 1, shown, graded, "2000"),
            _insert(ann, "q0", "d1-000", 1, shown, graded, "2000"),  # another query's passage
            _insert(ann, "q99", "zz", "NULL", shown, graded, "2000"),  # an undo of nothing
            f"INSERT INTO claims VALUES ('{ann}', 'q99', 'zz', {NOW})",
            "INSERT INTO draws (query_id, doc_id, prob, spread, predicted, p, reserve, excluded,"
            f" annotator, drawn_at) VALUES ('q99', 'zz', 1, 0, 0, 1, 0, '[]', '{ann}', {NOW})",
        ],
        "server's time": [
            _insert(ann, "q0", "d0-000", 2, "0.5", "1", "500"),  # 1970
            _insert(ann, "q0", "d0-000", 2, f"{NOW} + 86399", f"{NOW} + 86400", "1000"),
            _insert(ann, "q0", "d0-000", 2, f"{NOW} - 7201", f"{NOW} - 7200", "1000"),
            f"INSERT INTO claims VALUES ('{ann}', 'q0', 'd0-000', 1e12)",  # a claim for ever
            f"INSERT INTO annotators VALUES ('{ann}', 'human', 1)",
            "INSERT INTO draws (query_id, doc_id, prob, spread, predicted, p, reserve, excluded,"
            f" annotator, drawn_at) VALUES ('q0', 'd0-000', 1, 0, 0, 1, 0, '[]', '{ann}', 1)",
        ],
        "time per grade": [
            _insert(ann, "q0", "d0-000", 2, "0", graded, "999999"),  # shown at no time
            _insert(ann, "q0", "d0-000", 2, shown, graded, "600000"),  # 10 minutes in 2 s
            _insert(ann, "q0", "d0-000", 2, shown, graded, "0"),
            _insert(ann, "q0", "d0-000", 2, f"{NOW} + 5", graded, "0"),  # shown after graded
        ],
    }
    for reason, statements in refused.items():
        for sql in statements:
            assert reason in _refused(as_ann, sql), sql
    with open_store(pg_url) as owner:
        assert owner.judgments() == [] and owner.claims() == {} and owner.draws() == []
    raw_execute(as_ann, _insert(ann, "q0", "d0-000", 2, shown, graded, "2000"))  # a sound row
    with open_store(as_ann) as store:  # and the app's own, through the store
        store.add_judgment(_stamped(ann, "q0", "d0-001", 3, note="fine"))
        store.add_judgment(_stamped(ann, "q0", "d0-001", None))
        assert store.claim(ann, "q1", "d1-000") and store.renew_claim(ann)
        with pytest.raises(InputError, match="the server's time"):
            store.add_judgment(Judgment(ann, "q0", "d0-002", 1, "", 0.5, 1.0, 500))
    with open_store(pg_url) as owner:
        assert [(j.doc_id, j.grade) for j in owner.judgments()] == [
            ("d0-000", 2), ("d0-001", 3), ("d0-001", None)
        ]  # fmt: skip


def test_the_adjudicators_login_writes_adjudicator_rows_only(pg_url, logins, names):
    ann, _, adj = names
    build_store(pg_url, queries=1, per_query=2).close()
    as_adj = logins.make(pg_url, adj, "--adjudicator")
    with open_store(as_adj) as store:
        store.add_judgment(_stamped(adj, "q0", "d0-000", 2, role=Role.ADJUDICATOR))
        with pytest.raises(InputError, match="role adjudicator"):
            store.add_judgment(_stamped(adj, "q0", "d0-001", 2))
    code, _, err = logins.role_sql(pg_url, "--adjudicator")
    assert code == 2 and "--annotator" in err  # names no annotator
    logins.make(pg_url, ann)
    code, _, err = logins.role_sql(pg_url, "--annotator", ann, "--adjudicator")
    assert code == 2 and "writes human rows" in err  # one name, one role


# -- reading: an annotator's own judgments only ---------------------------------------------------


def test_an_annotator_reads_only_their_own_grades_and_notes(pg_url, logins, names):
    ann, bob, adj = names
    build_store(pg_url, queries=1, per_query=3).close()
    as_ann, as_bob = logins.make(pg_url, ann), logins.make(pg_url, bob)
    as_adj = logins.make(pg_url, adj, "--adjudicator")
    with open_store(as_ann) as store:
        store.add_judgment(_stamped(ann, "q0", "d0-000", 2, note="ann's note"))
    with open_store(as_bob) as store:
        store.add_judgment(_stamped(bob, "q0", "d0-000", 0, note="bob's note"))
        store.add_judgment(_stamped(bob, "q0", "d0-001", 3))
        mine = [(j.annotator, j.note) for j in store.judgments()]
        assert mine == [(bob, "bob's note"), (bob, "")]
        assert {j.annotator for j in store.current_judgments()} == {bob}
    with psycopg.connect(as_ann, autocommit=True) as conn:  # whatever the client asks
        for sql in (
            "SELECT annotator, grade, note FROM judgments",
            f"SELECT annotator, grade, note FROM judgments WHERE annotator = '{bob}'",
            "SELECT annotator, NULL, NULL FROM judgments WHERE note LIKE 'bob%'",
        ):
            assert {row[0] for row in conn.execute(sql).fetchall()} <= {ann}, sql
        # who judged which item, without the grade: what sharing the pool needs
        seen = conn.execute("SELECT annotator, doc_id FROM workbench_judged").fetchall()
        assert sorted(seen) == sorted([(ann, "d0-000"), (bob, "d0-000"), (bob, "d0-001")])
        columns = conn.execute("SELECT * FROM workbench_judged").description
        assert "grade" not in [c.name for c in columns] and "note" not in [c.name for c in columns]
    with open_store(as_ann) as store:
        assert not store.claim(ann, "q0", "d0-001")  # bob judged it: one judge is enough
        assert store.claim(ann, "q0", "d0-002")
    for url in (as_adj, pg_url):  # the adjudicator and the owner read every row
        with open_store(url) as store:
            assert len(store.judgments()) == 3
            assert {j.note for j in store.judgments()} == {"ann's note", "bob's note", ""}


# -- role-sql: per study, again, before the pool, passwords --------------------------------------


def _scram_matches(verifier: str, password: str) -> bool:
    """Whether PostgreSQL's stored scram-sha-256 `verifier` is that of `password`."""
    head, keys = verifier.split("$", 2)[1:]
    iterations, salt = head.split(":")
    stored_key = keys.split(":")[0]
    salted = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), base64.b64decode(salt), int(iterations)
    )
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    return base64.b64encode(hashlib.sha256(client_key).digest()).decode() == stored_key


def _verifier(login: str) -> str:
    with psycopg.connect(PG_URL, autocommit=True) as admin:  # the test server's superuser
        row = admin.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (login,))
        return str(row.fetchone()[0])


def test_role_sql_runs_again_per_study_with_a_password_given_or_generated_once(
    pg_url, other_schema, logins, names, tmp_path: Path
):
    ann = names[0]
    code, sql, err = logins.role_sql(pg_url, "--annotator", ann)  # before the pool
    assert code == 2 and sql == "" and "workbench pool --db URL" in err and "after" in err
    code, _, err = logins.role_sql(str(tmp_path / "x.db"), "--annotator", ann)
    assert code == 2 and "PostgreSQL" in err
    for url in (pg_url, other_schema):
        build_store(url, queries=1, per_query=2).close()
    as_ann = logins.make(pg_url, ann)
    login = as_ann.split("//", 1)[1].split("@", 1)[0]
    assert login == login_of(ann, "test", _schema(pg_url))
    first = _verifier(login)
    code, sql, err = logins.role_sql(pg_url, "--annotator", ann)  # again: the same login
    assert code == 0 and sql.startswith(f"-- {login}:") and "password is kept" in err
    raw_execute(pg_url, sql)  # runs again: no "role already exists", nothing rolled back
    raw_execute(pg_url, sql)
    assert _verifier(login) == first
    with open_store(pg_url) as owner:
        assert [x.login for x in owner.logins()] == [login]
    # a second study on the server: a login of its own, the first study's untouched
    in_other = logins.make(other_schema, ann)
    assert in_other != as_ann.replace(pg_url.split("?")[1], other_schema.split("?")[1])
    with open_store(in_other) as store:
        store.add_judgment(_stamped(ann, "q0", "d0-000", 1))
    with open_store(as_ann) as store:
        store.add_judgment(_stamped(ann, "q0", "d0-000", 2))
        assert [j.grade for j in store.judgments()] == [2]
    # passwords: generated and said once on stderr, never in the SQL, never 'change me'
    code, sql, err = logins.role_sql(pg_url, "--annotator", ann, "--new-password")
    password = err.rsplit(": ", 1)[1].strip()
    assert code == 0 and len(password) >= 20 and password not in sql and "change me" not in sql
    raw_execute(pg_url, sql)
    assert _scram_matches(_verifier(login), password) and _verifier(login) != first
    secret_file = tmp_path / "pw"
    secret_file.write_text("a phrase of my own\n")
    code, sql, err = logins.role_sql(
        pg_url, "--annotator", ann, "--password-file", str(secret_file)
    )
    assert code == 0 and "a phrase" not in sql + err
    raw_execute(pg_url, sql)
    assert _scram_matches(_verifier(login), "a phrase of my own")
    code, sql, err = logins.role_sql(pg_url)  # the shared login: a password generated too
    assert code == 0 and "change me" not in sql and "Password of workbench_annotator" in err
    # a login named by the user, refused where it clashes
    bob = names[1]
    named = f"wbtest_{uuid.uuid4().hex[:8]}"
    assert logins.make(pg_url, bob, "--login", named) == _as(pg_url, named)
    code, _, err = logins.role_sql(pg_url, "--annotator", names[2], "--login", named)
    assert code == 2 and f"is the login of {bob}" in err


# -- a row no command wrote, met by the commands ------------------------------------------------


def test_a_row_no_command_writes_is_named_by_every_command_that_meets_it(pg_url, capsys, tmp_path):
    build_store(pg_url, queries=2, per_query=3).close()
    with open_store(pg_url) as owner:
        owner.add_judgment(Judgment("ann", "q0", "d0-000", 2))
        owner.add_judgment(Judgment("bob", "q0", "d0-000", 2))
    # written past the checks: the owner's own login, straight into the table
    raw_execute(pg_url, _insert("mallory", "q0", "d0-001", 99, "1", "1"))
    raw_execute(pg_url, _insert("mallory", "q99", "zz", 3, "1", "1"))
    run = tmp_path / "run.txt"
    run.write_text("q0 Q0 d0-000 1 2.0 r\nq99 Q0 zz 1 1.0 r\n")
    commands = (
        ["export", "--db", pg_url, "--golden", str(tmp_path / "g.yaml")],
        ["export", "--db", pg_url, "--qrels", str(tmp_path / "q.txt")],
        ["agree", "--db", pg_url],
        ["eval", "--qrels", pg_url, "--run", str(run), "-k", "5"],
        ["coverage", "--db", pg_url],
    )
    for args in commands:
        capsys.readouterr()
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert "judgments row 3 (annotator 'mallory'" in err and "grade 99" in err, (args, err)
        assert "judgments row 4 (annotator 'mallory', query 'q99', passage 'zz')" in err, err
        assert "not in the pool" in err and "replaces" in err
    assert not (tmp_path / "g.yaml").exists() and not (tmp_path / "q.txt").exists()
    # a later row of the annotator for the item replaces each: the team goes on
    raw_execute(pg_url, _insert("mallory", "q0", "d0-001", 1, "1", "2", "1000"))
    raw_execute(pg_url, _insert("mallory", "q99", "zz", "NULL", "1", "2", "1000"))
    assert main(["export", "--db", pg_url, "--qrels", str(tmp_path / "q.txt")]) == 0
    assert "q99" not in (tmp_path / "q.txt").read_text()


# -- store copy ------------------------------------------------------------------------------------


def test_logins_survive_store_copy_and_append_says_what_it_added(
    pg_url, other_schema, logins, names, capsys, tmp_path
):
    ann, bob, _ = names
    build_store(pg_url, queries=1, per_query=3).close()
    as_ann, as_bob = logins.make(pg_url, ann), logins.make(pg_url, bob)
    with open_store(as_ann) as store:
        store.add_judgment(_stamped(ann, "q0", "d0-000", 2, note="mine"))
    with open_store(as_bob) as store:
        store.add_judgment(_stamped(bob, "q0", "d0-001", 1))
    capsys.readouterr()
    assert main(["store", "copy", pg_url, other_schema]) == 0
    out = capsys.readouterr().out
    assert "Own logins made" in out and ann in out and bob in out
    copied_ann = as_ann.replace(pg_url.split("?")[1], other_schema.split("?")[1])
    with open_store(copied_ann) as store:  # the same login works on the copy, checked there too
        assert [j.note for j in store.judgments()] == ["mine"]  # its own rows only
        store.add_judgment(_stamped(ann, "q0", "d0-002", 3))
        with pytest.raises(InputError, match="writes as annotator"):
            store.add_judgment(_stamped(bob, "q0", "d0-002", 3))
    bad = _insert(ann, "q0", "d0-002", 99, f"{NOW} - 1", NOW, "1000")
    assert "study's scale" in _refused(copied_ann, bad)
    # --append says what it added: nothing new, then one row
    for expected in ("Appended 0 new rows", "Appended 0 new rows"):
        assert main(["store", "copy", pg_url, other_schema, "--append"]) == 0
        out = capsys.readouterr().out
        assert expected in out and "were there already" in out, out
    with open_store(pg_url) as owner:
        owner.add_judgment(Judgment("carol", "q0", "d0-002", 0))
    assert main(["store", "copy", pg_url, other_schema, "--append"]) == 0
    out = capsys.readouterr().out
    assert "Appended 1 new rows" in out or "Appended 2 new rows" in out, out  # + its annotator
    judgments_line = next(line for line in out.splitlines() if line.split()[:1] == ["judgments"])
    assert judgments_line.split()[3:5] == ["1", "new"], judgments_line
    # into SQLite: logins cannot come along, and the copy says so
    assert main(["store", "copy", pg_url, str(tmp_path / "back.db")]) == 0
    out = capsys.readouterr().out
    assert "Own logins not carried" in out and "SQLite" in out


# -- the app -------------------------------------------------------------------------------------


def test_the_app_refuses_another_annotator_at_launch(pg_url, logins, names, capsys):
    ann, bob, adj = names
    build_store(pg_url, queries=1, per_query=2).close()
    as_ann = logins.make(pg_url, ann)
    as_adj = logins.make(pg_url, adj, "--adjudicator")
    for url, args in (
        (as_ann, ["--annotator", bob]),
        (as_ann, ["--annotator", ann, "--adjudicate"]),
        (as_adj, ["--annotator", adj]),
    ):
        capsys.readouterr()
        assert main(["judge", "--db", url, *args]) == 2
        err = capsys.readouterr().err
        assert "own login" in err and "terminal" not in err, err
    with open_store(pg_url) as owner:
        assert owner.judgments() == [] and owner.claims() == {}
    capsys.readouterr()
    assert main(["judge", "--db", as_ann, "--annotator", ann]) == 2  # its own name: launches
    assert "terminal" in capsys.readouterr().err  # (as far as a test without one lets it)


@run_async
async def test_the_app_grades_undoes_notes_and_claims_under_an_own_login(
    pg_url, logins, names
) -> None:
    from workbench.tui.app import JudgeApp

    ann, bob, _ = names
    build_store(pg_url, queries=1, per_query=3).close()
    with open_store(logins.make(pg_url, bob)) as store:
        store.add_judgment(_stamped(bob, "q0", "d0-001", 3))
    store = open_store(logins.make(pg_url, ann))
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
        rows = [j for j in owner.judgments() if j.annotator == ann]
        assert len(rows) >= 3 and ("d0-001" not in {j.doc_id for j in rows})  # bob's: passed by
        assert None in [j.grade for j in rows] and "ok" in {j.note for j in rows}
        assert owner.claims() == {}  # released when the app ended


def test_login_names_are_safe_distinct_and_per_study():
    names = ["alice", "Alice", "ALICE", "al.ice", "al_ice", "ä" * 64, "x" * 64, "a-b", "a+b"]
    logins = [login_of(n, "study", "public") for n in names]
    assert len(set(logins)) == len(names)
    assert all(len(n.encode()) <= 63 and n.isascii() and n == n.lower() for n in logins)
    assert login_of("alice", "study", "public").startswith("wb_alice_")
    assert len({login_of("alice", d, s) for d, s in (("a", "b"), ("a", "c"), ("b", "b"))}) == 3
    assert login_of("alice", "a_b", "c") != login_of("alice", "a", "b_c")
    for bad in ("", "a'b", 'a"b', "a b", "a;b", "\x1b[2J"):
        with pytest.raises(SystemExit) as exited:
            main(["store", "role-sql", "--annotator", bad])
        assert exited.value.code == 2
    for bad in ("Ann", "a b", "x" * 64, "1abc", "a;b"):
        with pytest.raises(SystemExit) as exited:
            main(["store", "role-sql", "--annotator", "ann", "--login", bad])
        assert exited.value.code == 2
