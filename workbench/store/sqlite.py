"""The judgments store: one SQLite file (WAL) holding the pool snapshot and append-only judgments.

Every grade is a new row: a regrade or an undo never updates or deletes an earlier row, so the
full history survives. The current grade of (annotator, query, doc) is its latest row.

`Store` is composed of the table groups, each in its module: `schema` (tables, triggers, the
checks before opening, atomic creation), `core` (the connection, transactions, retries, meta),
`pool`, `judgments`, `sharing` (required judges, claims) and `draws` (the adaptive queue's
random picks)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from workbench.core.errors import InputError
from workbench.store.claim import SqliteClaim
from workbench.store.core import Tx
from workbench.store.draws import DrawTables
from workbench.store.judgments import JudgmentTables
from workbench.store.llm import LlmTables
from workbench.store.pool import PoolTables
from workbench.store.schema import (
    CLAIM_TTL_S,
    DRAWS_SCHEMA,
    LLM_SCHEMA,
    SCHEMA_VERSION,
    SHARING_SCHEMA,
    SQLITE_HEADER,
    VERSIONS_UPGRADE,
    check_store_file,
    create_store_file,
)
from workbench.store.sharing import SharingTables

__all__ = ["CLAIM_TTL_S", "SCHEMA_VERSION", "SQLITE_HEADER", "Store", "check_store_file"]

T = TypeVar("T")


def retry(operation: Callable[[], T], attempts: int = 20) -> T:
    """Retry on 'database is locked' beyond SQLite's own busy timeout: another annotator's
    process may hold the write lock for a moment; a grade must never be dropped for it."""
    for attempt in range(attempts):
        try:
            return operation()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def is_busy(exc: sqlite3.Error) -> bool:
    """Another process holds the store's lock: wait and retry, never call the store damaged."""
    return "locked" in str(exc) or "busy" in str(exc)


def text_row(cursor: sqlite3.Cursor, row: tuple) -> tuple:
    """Every row as written by workbench: text, numbers or NULL; a BLOB (someone else's
    writing) is refused here rather than passed on as bytes where an id should be."""
    if bytes in map(type, row):
        raise sqlite3.DataError("a value is binary (BLOB) where workbench writes text")
    return row


class Store(  # the claim first: it fills PoolTables' claim hooks
    SqliteClaim, PoolTables, JudgmentTables, SharingTables, DrawTables, LlmTables
):
    """A judgments store. Safe to share across threads of one process (one lock) and across
    processes (SQLite WAL, busy timeout, retries)."""

    _COLUMN_EXISTS = "SELECT 1 FROM pragma_table_info(?) WHERE name = ?"
    _VERSIONS_UPGRADE = VERSIONS_UPGRADE

    def __init__(self, path: str | Path, *, create: bool = False):
        self.path = Path(path)
        self.location = str(self.path)
        if sqlite3.sqlite_version_info < (3, 35):
            raise InputError(
                [
                    f"{self.path}: this Python's SQLite is {sqlite3.sqlite_version}; the store"
                    " needs 3.35 or later (RETURNING)"
                ]
            )
        self._lock = threading.RLock()
        self._sharing_ready = False
        if self.path.exists() or not create:
            check_store_file(self.path)  # before any write: someone else's file stays as it was
        else:
            create_store_file(self.path)
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.row_factory = text_row
            self._check_schema()
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            if create:
                self._write(self._ensure_sharing)
        except sqlite3.DatabaseError as exc:
            raise InputError([f"{self.path}: not a workbench judgments store ({exc})"]) from exc

    @property
    def title(self) -> str:
        """The store's short name (the app's subtitle)."""
        return self.path.name

    def _write(self, statements: Callable[[Tx], T]) -> T:
        """One immediate transaction (SQLite's single writer), retried while another process
        holds the lock, committed with synchronous=FULL before returning."""

        def attempt() -> T:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    result = statements(self._conn)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
                return result

        try:
            return retry(attempt)
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
                return retry(lambda: self._conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: sqlite3.Error) -> InputError:
        """A store that holds what no workbench wrote (a missing table, undecodable text): an
        InputError naming it, never a traceback."""
        if is_busy(exc):
            return InputError(
                [f"{self.path}: busy: another process held its lock too long ({exc}); try again"]
            )
        return InputError([f"{self.path}: damaged or not a workbench judgments store ({exc})"])

    def _has_table(self, name: str) -> bool:
        return bool(
            self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        )

    def _check_schema(self) -> None:
        rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
        self._check_version(rows[0][0] if rows else None)

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

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
