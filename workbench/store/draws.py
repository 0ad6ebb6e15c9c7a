"""The adaptive queue's draws: each random pick with the probability it had when it was drawn
and the passages judged before it, so |Rel| can be estimated from the store alone, however the
queue chose (workbench.core.adaptive.estimate). Append-only; the table is created when first
written, so stores made before it open unchanged."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable

from workbench.core.adaptive.estimate import Draw
from workbench.store.core import StoreCore

DRAWS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS draws (draw_id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " query_id TEXT NOT NULL, doc_id TEXT NOT NULL, prob REAL NOT NULL, spread REAL NOT NULL,"
    " predicted REAL NOT NULL, p REAL NOT NULL, reserve INTEGER NOT NULL,"
    " excluded TEXT NOT NULL, annotator TEXT NOT NULL DEFAULT '', drawn_at REAL NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS draws_append_only_update BEFORE UPDATE ON draws"
    " BEGIN SELECT RAISE(ABORT, 'draws are append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS draws_append_only_delete BEFORE DELETE ON draws"
    " BEGIN SELECT RAISE(ABORT, 'draws are append-only'); END",
)


class DrawTables(StoreCore):
    """The draws table."""

    def add_draws(self, draws: Iterable[Draw], annotator: str = "") -> int:
        """Record draws (in the order made), committed before this returns."""
        now = time.time()
        rows = [
            (d.query_id, d.doc_id, d.prob, d.spread, d.predicted, d.p, int(d.reserve),
             json.dumps(list(d.excluded)), annotator, now)
            for d in draws
        ]  # fmt: skip

        def insert(conn: sqlite3.Connection) -> int:
            for statement in DRAWS_SCHEMA:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO draws (query_id, doc_id, prob, spread, predicted, p, reserve,"
                " excluded, annotator, drawn_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            return len(rows)

        return self._write(insert)

    def draws(self) -> list[Draw]:
        """Every recorded draw, oldest first."""
        if not self._has_table("draws"):
            return []
        rows = self._read(
            "SELECT query_id, doc_id, prob, spread, predicted, p, reserve, excluded"
            " FROM draws ORDER BY draw_id"
        )
        return [
            Draw(q, d, float(prob), tuple(json.loads(ex)), float(spread), float(pred), float(p),
                 bool(res))
            for q, d, prob, spread, pred, p, res, ex in rows
        ]  # fmt: skip
