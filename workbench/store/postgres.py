"""The team store: the same tables and rules as the SQLite store, on a PostgreSQL server, so
annotators on many machines judge one pool.

Semantics kept from SQLite, not imitated: every write transaction takes the store's advisory
lock first, so writers follow one another as in SQLite (a judgment's id order is its commit
order, which `judgments_since` relies on; two annotators never both win an item's last
place), while readers never wait. Judgments and draws are append-only by trigger. A lost
connection is `StoreUnavailable` (the app keeps the grade and retries); the next call
reconnects. Nothing here prints a password: the store is named by its masked URL."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from workbench.core.errors import InputError
from workbench.core.store_url import database_name, mask_text, mask_url, url_problem
from workbench.store.base import StoreUnavailable
from workbench.store.claim import PgClaim
from workbench.store.core import Cursor, Login, Tx
from workbench.store.designs import DesignTables
from workbench.store.draws import DrawTables
from workbench.store.judgments import JudgmentTables
from workbench.store.llm import LlmTables
from workbench.store.pg_logins import JUDGED_VIEW, LOGINS_TABLE, grants_sql, study_sql
from workbench.store.pg_schema import (
    DESIGN_SCHEMA,
    SCHEMA,
    SPANS_SCHEMA,
    TOKENS_SCHEMA,
    VERSIONS_UPGRADE,
    ensure_later,
)
from workbench.store.pool import PoolTables
from workbench.store.schema import SCHEMA_VERSION
from workbench.store.sharing import SharingTables
from workbench.store.tokens import TokenTables

T = TypeVar("T")

DESIGN_TABLES = ("designs", "design_items", "doc_spans", "serve_tokens")
"""Tables a store made before them lacks until their first write (serve_tokens: every store
until its first `serve token`)."""

LOCK_CLASS = 0x5742  # 'WB': the advisory lock's first key; the second is the schema's hash

# psycopg logs what it ignores while a pipeline or COPY ends on a broken connection ("error
# ignored terminating <psycopg.Pipeline [BAD]>"), which Python's last-resort handler prints
# as raw lines; the error itself is raised, and said in one line (`_failed`).
logging.getLogger("psycopg").addHandler(logging.NullHandler())


class NoStore(InputError):
    """The database (or schema) holds no workbench store yet."""


class _PgTx:
    """psycopg's connection behind the `?` placeholders the table groups write."""

    def __init__(self, conn: Any, location: str):
        self._conn = conn
        self._location = location

    def execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        return self._conn.execute(_pg(sql), _checked(params, self._location))

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> Cursor:
        cursor = self._conn.cursor()
        cursor.executemany(_pg(sql), [_checked(r, self._location) for r in rows])
        return cursor

    def script(self, sql: str) -> None:
        """Statements as written (no placeholders), several at once: the logins' SQL."""
        self._conn.execute(sql)


def _pg(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def _checked(params: Sequence[object], location: str) -> tuple:
    """PostgreSQL text cannot hold NUL: say which value, rather than fail inside the driver."""
    for value in params:
        if isinstance(value, str) and "\x00" in value:
            shown = value.replace("\x00", "\\0")[:40]
            raise InputError(
                [f"{location}: {shown!r} holds a NUL character, which PostgreSQL cannot store"]
            )
    return tuple(params)


class PostgresStore(  # the claim first: it fills PoolTables' claim hooks
    PgClaim, PoolTables, JudgmentTables, SharingTables, DrawTables, LlmTables, DesignTables,
    TokenTables
):  # fmt: skip
    """A judgments store in a PostgreSQL database (the schema named by the URL's search_path,
    else the connecting role's default). Safe to share across threads of one process."""

    _COLUMN_EXISTS = (
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = ? AND column_name = ?"
    )
    _VERSIONS_UPGRADE = VERSIONS_UPGRADE
    holds_logins = True
    _own: tuple[Login | None] | None = None
    """`own_login()` once asked."""

    def __init__(self, url: str, *, create: bool = False, read_only: bool = False):
        self.url = url
        self.read_only = read_only  # asked by a reader; the session is not yet made read-only
        self.location = mask_url(url)
        self._lock = threading.RLock()
        self._conn: Any = None
        problem = url_problem(url)
        if problem:  # before libpq reads it: its messages would show a password's tail
            raise InputError([f"{self.location}: {problem}"])
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise InputError(
                [
                    f"{self.location}: a PostgreSQL store needs psycopg"
                    " (pip install 'workbench[postgres]')"
                ]
            ) from None
        self._connect()
        rows = self._read("SELECT to_regclass('meta') IS NOT NULL, current_schema()")
        has_meta, schema = rows[0]
        if schema is None:
            raise InputError([f"{self.location}: no schema to hold the store (check search_path)"])
        self.schema = str(schema)
        if not has_meta:
            if not create:
                raise NoStore(
                    [
                        f"{self.location}: no workbench judgments store there"
                        " (build one with `workbench pool --db URL`)"
                    ]
                )
            self._create()
        self._check_version(self.get_meta("schema_version"))

    @property
    def title(self) -> str:
        return database_name(self.url) or self.location

    def _identity(self) -> tuple:
        """What tells this store from every other however its URL is spelled (host names,
        ports, proxies): the cluster's system identifier, the database and the schema."""
        rows = self._read(
            "SELECT (SELECT system_identifier FROM pg_control_system()), current_database()"
        )
        return (*rows[0], self.schema)

    # -- the connection ------------------------------------------------------------------------

    def _connect(self) -> Any:
        import psycopg

        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            except psycopg.Error as exc:
                raise self._failed(exc) from None
            except (UnicodeError, ValueError) as exc:  # a URL libpq cannot take
                raise InputError(
                    [f"{self.location}: not a usable PostgreSQL URL ({type(exc).__name__})"]
                ) from None
        return self._conn

    def _failed(self, exc: Exception) -> InputError:
        """What went wrong, with the password never shown: a lost or refused connection is
        `StoreUnavailable`; anything else names the store as damaged or refused."""
        import psycopg

        message = mask_text(_first_line(str(exc)), self.url)
        if isinstance(exc, psycopg.OperationalError) or (
            self._conn is not None and self._conn.closed
        ):
            self._drop()
            return StoreUnavailable(
                [f"{self.location}: cannot reach the PostgreSQL server ({message})"]
            )
        if isinstance(exc, psycopg.errors.InsufficientPrivilege):
            message += (
                " (where the table came after this login's grants, as judge_versions comes "
                "with the store's first judge, the owner runs `workbench store role-sql`'s "
                "GRANTs again)"
            )
        return InputError([f"{self.location}: {message}"])

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def _create(self) -> None:
        """Make every table in one transaction under the store's lock: two `pool` commands
        racing to create it leave one whole store."""
        import json

        from workbench.core.model import DEFAULT_GRADE_SCALE

        def build(tx: Tx) -> None:
            if tx.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]:
                return  # another process made it meanwhile
            foreign = tx.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = ?",
                (self.schema,),
            ).fetchone()[0]
            if foreign:
                raise InputError(
                    [
                        f"{self.location}: schema {self.schema!r} holds other tables;"
                        " give a database or schema of its own for the store"
                    ]
                )
            for statement in SCHEMA:
                tx.execute(statement)
            tx.execute("INSERT INTO meta VALUES (?, ?)", ("schema_version", str(SCHEMA_VERSION)))
            scale = json.dumps({str(g): w for g, w in DEFAULT_GRADE_SCALE.items()})
            tx.execute("INSERT INTO meta VALUES (?, ?)", ("grade_scale", scale))

        self._write(build)

    # -- the hooks of StoreCore ----------------------------------------------------------------

    def _write(self, statements: Callable[[Tx], T]) -> T:
        return self._transaction(statements, durable=True)

    def _write_light(self, statements: Callable[[Tx], T]) -> T:
        return self._transaction(statements, durable=False)

    def _transaction(self, statements: Callable[[Tx], T], durable: bool) -> T:
        import psycopg

        with self._lock:
            conn = self._connect()
            try:
                with conn.transaction():
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))",
                        (LOCK_CLASS,),
                    )
                    if not durable:
                        conn.execute("SET LOCAL synchronous_commit TO OFF")
                    return statements(_PgTx(conn, self.location))
            except psycopg.Error as exc:
                raise self._failed(exc) from None

    def _read(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        import psycopg

        with self._lock:
            conn = self._connect()
            try:
                return [tuple(r) for r in conn.execute(_pg(sql), tuple(params)).fetchall()]
            except psycopg.Error as exc:
                raise self._failed(exc) from None

    def _after_ids(self, tx: Tx, ids: dict[str, str]) -> None:
        for table, column in ids.items():
            tx.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                f" COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)"
            )

    def _has_table(self, name: str) -> bool:
        """Every table of the store's schema version is made with it; a later one (schema 2's
        judge_versions) is there once the store was brought up to it."""
        if name in DESIGN_TABLES:  # made with a store, or by the first write of an older one
            return bool(self._read("SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])
        if name != "judge_versions":
            return True
        return self._has_versions()

    def _ensure_sharing(self, tx: Tx) -> None:
        pass

    def _ensure_draws(self, tx: Tx) -> None:
        pass

    def _ensure_llm(self, tx: Tx) -> None:
        pass

    def _ensure_design(self, tx: Tx) -> None:
        ensure_later(tx, "design_items", DESIGN_SCHEMA)

    def _ensure_spans(self, tx: Tx) -> None:
        ensure_later(tx, "doc_spans", SPANS_SCHEMA)

    def _ensure_tokens(self, tx: Tx) -> None:
        ensure_later(tx, "serve_tokens", TOKENS_SCHEMA)

    # -- annotators' own logins (`workbench.store.pg_logins`) -----------------------------------

    def logins(self) -> list[Login]:
        """Every annotator's own login mapped in this store (none before `store role-sql`)."""
        if not self._read("SELECT to_regclass(?) IS NOT NULL", (LOGINS_TABLE,))[0][0]:
            return []
        rows = self._read(f"SELECT login, annotator, role FROM {LOGINS_TABLE} ORDER BY login")
        return [Login(*map(str, row)) for row in rows]

    def own_login(self) -> Login | None:
        """The annotator this connection writes as when its login is one annotator's own; None
        for the owner's and every other login. Asked once per store."""
        if self._own is None:
            user = self._read("SELECT current_user")[0][0]
            self._own = (next((x for x in self.logins() if x.login == user), None),)
        return self._own[0]

    def can_act_as(self, login: str) -> bool:
        """Whether this connection's login may `SET ROLE` to `login` (a member of it, or a
        superuser): how the served app writes through an annotator's own login."""
        rows = self._read(
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ?)"
            " THEN pg_has_role(current_user, ?, 'MEMBER') ELSE false END",
            (login, login),
        )
        return bool(rows[0][0])

    def login_for(self, annotator: str, role: str, name: str | None = None) -> tuple[Login, bool]:
        """The own login of `annotator` in this store: the one mapped already, else one named
        `name`, else one named for this study (`login_of`); and whether its role exists on the
        server. One name, one role: an annotator whose login writes another role is refused."""
        from workbench.store.pg_logins import login_of

        mapped = {x.annotator: x for x in self.logins()}
        known = mapped.get(annotator)
        if known is not None and known.role != role:
            raise InputError(
                [f"--annotator {annotator}: the login {known.login} writes {known.role} rows in"
                 f" {self.location}; give {role} work another name (e.g. {annotator}-2)"]
            )  # fmt: skip
        if known is not None and name is not None and name != known.login:
            raise InputError(
                [f"--login {name}: {annotator} has the login {known.login} in {self.location}"]
            )
        if known is None:
            database = str(self._read("SELECT current_database()")[0][0])
            login = Login(name or login_of(annotator, database, self.schema), annotator, role)
            other = next((x for x in mapped.values() if x.login == login.login), None)
            if other is not None:
                raise InputError(
                    [f"--login {login.login}: is the login of {other.annotator} already"]
                )
            known = login
        exists = bool(
            self._read("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ?", (known.login,))
        )
        return known, exists

    def _judged_items(self) -> str:
        """Under a human annotator's own login, the others' judgments are not readable: who
        judged which item comes from the owner's view that leaves the grades out."""
        own = self.own_login()
        if own is not None and own.role == "human":
            return JUDGED_VIEW
        return super()._judged_items()

    def restore_logins(self, tx: Tx, logins: list[Login]) -> list[Login]:
        """Make `logins` (another store's) this store's too, inside `tx`: the mapping, the checks,
        the reading policy and the grants of each whose role exists on this server; returns
        those whose role does not (their annotators need `store role-sql` here)."""
        if not logins:
            return []
        assert isinstance(tx, _PgTx)
        names = [x.login for x in logins]
        found = {r[0] for r in tx.execute(
            "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname = ANY(?)", (names,)
        ).fetchall()}  # fmt: skip
        tx.script(study_sql(self.schema))
        for login in logins:
            if login.login in found:
                tx.script(grants_sql(self.schema, login))
        self._own = None
        return [x for x in logins if x.login not in found]

    def close(self) -> None:
        with self._lock:
            self._drop()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "no detail"
