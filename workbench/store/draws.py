"""The adaptive queue's draws: each random pick with the probability it had when it was drawn
and the passages judged before it, so |Rel| can be estimated from the store alone, however the
queue chose (workbench.core.adaptive.estimate). Append-only; the table is created when first
written, so stores made before it open unchanged."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from workbench.core.adaptive.estimate import Draw
from workbench.store.core import StoreCore, Tx
from workbench.store.rows import integer, json_texts, probability, real, text, typed

DRAW_COLUMNS = (
    ("draw_id", integer), ("query_id", text), ("doc_id", text), ("prob", probability),
    ("spread", real), ("predicted", real), ("p", real), ("reserve", integer),
    ("excluded", json_texts),
)  # fmt: skip
"""A draws row as read: what each value must be (`workbench.store.rows`)."""


class DrawTables(StoreCore):
    """The draws table."""

    def add_draws(self, draws: Iterable[Draw], annotator: str = "") -> int:
        """Record draws (in the order made), committed before this returns."""
        draws = list(draws)
        return self._write(lambda tx: self._insert_draws(tx, draws, annotator))

    def _insert_draws(self, tx: Tx, draws: list[Draw], annotator: str) -> int:
        now = time.time()
        rows = [
            (d.query_id, d.doc_id, d.prob, d.spread, d.predicted, d.p, int(d.reserve),
             json.dumps(list(d.excluded)), annotator, now)
            for d in draws
        ]  # fmt: skip
        self._ensure_draws(tx)
        tx.executemany(
            "INSERT INTO draws (query_id, doc_id, prob, spread, predicted, p, reserve,"
            " excluded, annotator, drawn_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return len(rows)

    def draws(self, annotator: str | None = None) -> list[Draw]:
        """Every recorded draw, oldest first; only those made for `annotator` when named (the
        draws made in one annotator's session rest on that annotator's grades)."""
        if not self._has_table("draws"):
            return []
        where, params = ("", ()) if annotator is None else (" WHERE annotator = ?", (annotator,))
        rows = self._read(
            "SELECT draw_id, query_id, doc_id, prob, spread, predicted, p, reserve, excluded"
            f" FROM draws{where} ORDER BY draw_id",
            params,
        )
        return [
            Draw(q, d, prob, tuple(ex), spread, pred, p, bool(res))
            for _, q, d, prob, spread, pred, p, res, ex in typed(
                self.location, "draws", DRAW_COLUMNS, rows
            )
        ]
