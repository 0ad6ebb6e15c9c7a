"""The judgments store: one SQLite file (WAL) holding the pool snapshot and append-only judgments.

Every grade is a new row: a regrade or an undo never updates or deletes an earlier row, so the
full history survives. The current grade of (annotator, query, doc) is its latest row.

`Store` is composed of the table groups, each in its module: `schema` (tables, triggers, the
checks before opening, atomic creation), `core` (the connection, transactions, retries, meta),
`pool`, `judgments`, `sharing` (required judges, claims) and `draws` (the adaptive queue's
random picks)."""

from __future__ import annotations

import math
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from workbench.core.display import visible
from workbench.core.errors import InputError
from workbench.store.base import StoreUnavailable
from workbench.store.claim import SqliteClaim
from workbench.store.core import Tx
from workbench.store.designs import DesignTables
from workbench.store.draws import DrawTables
from workbench.store.judgments import JudgmentTables
from workbench.store.llm import LlmTables
from workbench.store.pool import PoolTables
from workbench.store.schema import (
    CLAIM_TTL_S,
    DESIGN_SCHEMA,
    DRAWS_SCHEMA,
    LLM_SCHEMA,
    SCHEMA_VERSION,
    SHARING_SCHEMA,
    SPANS_SCHEMA,
    SQLITE_HEADER,
    STORE_TABLES,
    TOKENS_SCHEMA,
    VERSIONS_UPGRADE,
    check_store_file,
    connect_file,
    create_store_file,
)
from workbench.store.sharing import SharingTables
from workbench.store.tokens import TokenTables

__all__ = [
    "CLAIM_TTL_S",
    "LOCK_WAIT_S",
    "SCHEMA_VERSION",
    "SQLITE_HEADER",
    "Store",
    "StoreLocked",
    "check_store_file",
]

T = TypeVar("T")


LOCK_WAIT_S = 60.0
"""How long a command waits for another process's lock on a SQLite store before it gives up
(exit 2, nothing written); the environment's WORKBENCH_LOCK_WAIT (seconds) overrides it."""
BUSY_SLICE_S = 1.0
"""SQLite's own busy wait per attempt: shorter locks (two annotators' commits) pass unseen; a
longer one is said on stderr at once, then waited for in such slices up to the lock wait."""


def _on_read_only_file_system(path: Path) -> bool:
    """Whether the store's folder is on a file system mounted read-only (statvfs ST_RDONLY)."""
    try:
        return bool(os.statvfs(path.resolve().parent).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


class StoreLocked(StoreUnavailable):
    """Another process held the store's lock for the whole wait: nothing of the call was
    written, and trying again when that process is done is safe."""


def lock_wait_s() -> float:
    """The wait for a locked store, in seconds: WORKBENCH_LOCK_WAIT, else LOCK_WAIT_S."""
    raw = os.environ.get("WORKBENCH_LOCK_WAIT", "")
    if not raw.strip():
        return LOCK_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 86_400:
        raise InputError(
            [f"WORKBENCH_LOCK_WAIT: {raw[:20]!r} is not a number of seconds (0 to 86400)"]
        )
    return value


def is_busy(exc: sqlite3.Error) -> bool:
    """Another process holds the store's lock: wait and retry, never call the store damaged."""
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+
    if name:
        return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))
    return "locked" in str(exc) or "busy" in str(exc)


def text_row(cursor: sqlite3.Cursor, row: tuple) -> tuple:
    """Every row as written by workbench: text, numbers or NULL; a BLOB (someone else's
    writing) is refused here rather than passed on as bytes where an id should be."""
    if bytes in map(type, row):
        raise sqlite3.DataError("a value is binary (BLOB) where workbench writes text")
    return row


class Store(  # the claim first: it fills PoolTables' claim hooks
    SqliteClaim, PoolTables, JudgmentTables, SharingTables, DrawTables, LlmTables, DesignTables,
    TokenTables
):  # fmt: skip
    """A judgments store. Safe to share across threads of one process (one lock) and across
    processes (SQLite WAL, busy timeout, retries)."""

    _COLUMN_EXISTS = "SELECT 1 FROM pragma_table_info(?) WHERE name = ?"
    _VERSIONS_UPGRADE = VERSIONS_UPGRADE

    def __init__(self, path: str | Path, *, create: bool = False, read_only: bool = False):
        """`read_only`: for a command that only reads; the file is opened as SQLite's mode=ro
        and never changed, not even switched to WAL (a write is then a bug)."""
        self.path = Path(path)
        self.location = str(self.path)
        self.read_only = read_only
        if sqlite3.sqlite_version_info < (3, 35):
            raise InputError(
                [
                    f"{self.path}: this Python's SQLite is {sqlite3.sqlite_version}; the store"
                    " needs 3.35 or later (RETURNING)"
                ]
            )
        self._lock = threading.RLock()
        self._sharing_ready = False
        self._lock_wait = lock_wait_s()
        if os.path.lexists(self.path) or not create or read_only:
            check_store_file(self.path)  # before SQLite opens it: a pipe is never opened
        else:
            create_store_file(self.path)
        try:
            # Checked on a read-only connection first: someone else's file stays as it was.
            self._conn = self._connect(read_only=True)
            self._check_schema()
            if not read_only:
                self._conn.close()
                self._conn = self._connect(read_only=False)
                self._retry(lambda: self._conn.execute("PRAGMA journal_mode=WAL").fetchall())
                self._conn.execute("PRAGMA synchronous=FULL")
                if create:
                    self._write(self._ensure_sharing)
        except BaseException as exc:
            if hasattr(self, "_conn"):
                self._conn.close()
            if isinstance(exc, sqlite3.Error):
                raise self._damaged(exc) from None
            raise

    def _connect(self, read_only: bool) -> sqlite3.Connection:
        conn = connect_file(
            self.path, "ro" if read_only else "rw", timeout=min(BUSY_SLICE_S, self._lock_wait),
            isolation_level=None, check_same_thread=False,
        )  # fmt: skip
        conn.row_factory = text_row
        return conn

    @property
    def title(self) -> str:
        """The store's short name (the app's subtitle)."""
        return self.path.name

    def _retry(self, operation: Callable[[], T]) -> T:
        """`operation`, tried again while another process holds the store's lock (for the lock
        wait, `lock_wait_s`): said on stderr once it lasts past SQLite's own short wait, and
        `StoreLocked` when it outlasts the wait. Never a silent ten-minute stall."""
        start = time.monotonic()
        said = False
        while True:
            try:
                return operation()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                if time.monotonic() - start >= self._lock_wait:
                    raise StoreLocked(
                        [
                            f"{self.path}: store is locked by another process; try again when"
                            f" it is done (waited {self._lock_wait:g} s)"
                        ]
                    ) from None
                if not said:
                    said = True
                    print(
                        visible(
                            f"workbench: {self.path}: another process holds the store's write"
                            f" lock; waiting up to {self._lock_wait:g} s for it"
                            " (WORKBENCH_LOCK_WAIT sets how long)",
                            one_line=True,
                        ),
                        file=sys.stderr,
                        flush=True,
                    )
                time.sleep(0.05)

    def _write(self, statements: Callable[[Tx], T]) -> T:
        """One immediate transaction (SQLite's single writer), retried while another process
        holds the lock, committed with synchronous=FULL before returning."""
        if self.read_only:
            raise RuntimeError(f"{self.path}: opened read-only, yet written to")

        def attempt() -> T:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    result = statements(self._conn)
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:  # a COMMIT refused (busy) rolls back too
                        self._conn.execute("ROLLBACK")
                    raise
                return result

        try:
            return self._retry(attempt)
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None

    def _write_light(self, statements: Callable[[Tx], T]) -> T:
        """A write without its own fsync (WAL, synchronous=NORMAL), for claims: losing one in
        a power cut costs nothing, and the next judgment's commit syncs it anyway. Keeps the
        fsync count per graded item at one."""
        with self._lock:
            self._conn.execute("PRAGMA synchronous=NORMAL")
            try:
                return self._write(statements)
            finally:
                self._conn.execute("PRAGMA synchronous=FULL")

    def _read(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        try:
            with self._lock:
                return self._retry(lambda: self._conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: sqlite3.Error) -> InputError:
        """What SQLite refused, as one line naming the store: a file or folder this user may
        not write, or what no workbench wrote (a missing table, undecodable text); never a
        traceback, and never 'not a store' for a store that is only locked or read-only."""
        name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+; else the folder tells
        text = str(exc)
        if name.startswith("SQLITE_FULL") or "disk is full" in text:
            return InputError([f"{self.path}: the disk is full (or a file-size limit was"
                               " reached); the write in progress was rolled back"])  # fmt: skip
        if name.startswith("SQLITE_IOERR"):
            return InputError([f"{self.path}: cannot read or write the store ({text}: a full"
                               " or failing disk, or a file-size limit)"])  # fmt: skip
        opening = name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or "readonly" in text
        if opening and _on_read_only_file_system(self.path):
            return InputError(
                [
                    f"{self.path}: on a read-only file system, where SQLite cannot create the"
                    f" {self.path.name}-shm (and -wal) it must keep beside a WAL store, even to"
                    " read it; copy the store to a writable folder, or remount it read-write"
                ]
            )
        if opening:
            if name in ("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT") or (
                not name and not os.access(self.path.resolve().parent, os.W_OK)
            ):
                return InputError(
                    [
                        f"{self.path}: its folder is read-only to this user, and SQLite must"
                        f" create {self.path.name}-shm there to open a WAL store, even to read"
                        " it; make the folder writable, or copy the store to one that is"
                    ]
                )
            if name.startswith("SQLITE_READONLY") or "readonly" in text:
                return InputError([f"{self.path}: read-only to this user: cannot write to it"])
            return InputError([f"{self.path}: cannot open ({text})"])
        return InputError([f"{self.path}: damaged or not a workbench judgments store ({text})"])

    def _has_table(self, name: str) -> bool:
        return bool(
            self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        )

    def _check_schema(self) -> None:
        """A workbench store: its tables there and its schema version known, checked before
        anything is changed (someone else's SQLite file with a `meta` table is refused
        unchanged)."""
        tables = {
            str(r[0]) for r in self._read("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "meta" not in tables:
            raise InputError([f"{self.path}: a SQLite file, but not a workbench judgments store"])
        rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
        self._check_version(rows[0][0] if rows else None)
        missing = [t for t in STORE_TABLES if t not in tables]
        if missing:
            raise InputError(
                [
                    f"{self.path}: a SQLite file, but not a workbench judgments store"
                    f" (no {', '.join(missing)} table{'s' if len(missing) > 1 else ''})"
                ]
            )

    def _ensure_sharing(self, tx: Tx) -> None:
        if not self._sharing_ready:
            for statement in SHARING_SCHEMA:
                tx.execute(statement)
            self._sharing_ready = True

    def _ensure_draws(self, tx: Tx) -> None:
        for statement in DRAWS_SCHEMA:
            tx.execute(statement)

    def _ensure_llm(self, tx: Tx) -> None:
        for statement in LLM_SCHEMA:
            tx.execute(statement)

    def _ensure_design(self, tx: Tx) -> None:
        for statement in DESIGN_SCHEMA:
            tx.execute(statement)

    def _ensure_spans(self, tx: Tx) -> None:
        for statement in SPANS_SCHEMA:
            tx.execute(statement)

    def _ensure_tokens(self, tx: Tx) -> None:
        for statement in TOKENS_SCHEMA:
            tx.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
