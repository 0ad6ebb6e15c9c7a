"""What every part of the SQLite store stands on: one connection behind one lock, writes in one
immediate transaction each, retries while another process holds the lock, every failure named
(busy or damaged, never a traceback), and the meta table."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from workbench.core.errors import InputError
from workbench.core.model import DEFAULT_GRADE_SCALE
from workbench.formats.textio import plain_int
from workbench.store.schema import SCHEMA_VERSION

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


def row_id(cursor: sqlite3.Cursor) -> int:
    """The rowid of the row a plain INSERT just added (sqlite3 types it Optional)."""
    added = cursor.lastrowid
    assert added is not None, "INSERT added no row"
    return added


class StoreCore:
    """The connection, its lock and the meta table; the table groups (pool, judgments,
    sharing) build on it and `Store` composes them."""

    path: Path
    _conn: sqlite3.Connection
    _lock: threading.RLock
    _sharing_ready: bool

    def _write(self, statements: Callable[[sqlite3.Connection], T]) -> T:
        """Run `statements` in one immediate transaction, committed before returning."""

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

    def _write_light(self, statements: Callable[[sqlite3.Connection], T]) -> T:
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
        if not rows:
            raise InputError([f"{self.path}: not a workbench judgments store (no schema_version)"])
        version = plain_int(str(rows[0][0]))
        if version is None or version < 1:
            raise InputError(
                [f"{self.path}: schema version {str(rows[0][0])[:20]!r} is not a number"]
            )
        if version > SCHEMA_VERSION:
            raise InputError(
                [f"{self.path}: schema version {version} is newer than this workbench supports"]
            )

    # -- meta ----------------------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else default

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda c: c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value)))

    def grade_scale(self) -> dict[int, str]:
        raw = self.get_meta("grade_scale")
        try:
            scale = json.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            scale = None
        if not isinstance(scale, dict) or not all(
            isinstance(w, str) and plain_int(g) is not None for g, w in scale.items()
        ):
            raise InputError([f"{self.path}: meta 'grade_scale' is not a grade -> wording map"])
        return {int(g): w for g, w in scale.items()} or dict(DEFAULT_GRADE_SCALE)

    def set_grade_scale(self, scale: dict[int, str]) -> None:
        self.set_meta("grade_scale", json.dumps({str(g): w for g, w in sorted(scale.items())}))

    def corpus_size(self) -> int:
        raw = self.get_meta("corpus_size", "0") or "0"
        size = plain_int(raw)
        if size is None or size < 0:
            raise InputError([f"{self.path}: meta 'corpus_size' {raw[:20]!r} is not a count"])
        return size
