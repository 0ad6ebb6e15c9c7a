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
from pathlib import Path

from workbench.core.errors import InputError
from workbench.store.core import text_row
from workbench.store.draws import DrawTables
from workbench.store.judgments import JudgmentTables
from workbench.store.pool import PoolTables
from workbench.store.schema import (
    CLAIM_TTL_S,
    SCHEMA_VERSION,
    SQLITE_HEADER,
    check_store_file,
    create_store_file,
)
from workbench.store.sharing import SharingTables

__all__ = ["CLAIM_TTL_S", "SCHEMA_VERSION", "SQLITE_HEADER", "Store", "check_store_file"]


class Store(PoolTables, JudgmentTables, SharingTables, DrawTables):
    """A judgments store. Safe to share across threads of one process (one lock) and across
    processes (SQLite WAL, busy timeout, retries)."""

    def __init__(self, path: str | Path, *, create: bool = False):
        self.path = Path(path)
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

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
