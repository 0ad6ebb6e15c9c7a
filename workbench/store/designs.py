"""The human sample's design (`workbench draw-sample`): each batch (its plan, seed, the judge and
its versions, the scales), and every frame item with the inclusion probability it was given and
whether it was drawn. Append-only: a probability once recorded never changes, so the
correction in `eval --judge` rests on the design as drawn. Created when first written."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence

from workbench.core.errors import InputError
from workbench.core.judges.design import Design, DesignItem, DesignPlan
from workbench.store.core import StoreCore, Tx
from workbench.store.rows import integer, probability, text, typed

ITEM_COLUMNS = (
    ("design_id", integer),
    ("query_id", text),
    ("doc_id", text),
    ("prob", probability),
    ("drawn", integer),
    ("batch", integer),
)
BATCH_COLUMNS = (
    ("design_id", integer),
    ("batch", integer),
    ("judge", text),
    ("judge_version", text),
    ("seed", integer),
    ("plan", text),
    ("scales", text),
)


class DesignTables(StoreCore):
    """The designs and design_items tables."""

    def add_design_batch(
        self,
        design_id: int,
        batch: int,
        judge: str,
        judge_version: str,
        seed: int,
        plan: DesignPlan,
        scales: Mapping[str, tuple[float, float]],
        items: Sequence[DesignItem],
    ) -> int:
        """Record one batch and its items, committed together; refused (InputError) when the
        batch, or any of its items, is recorded already (another draw came first)."""
        now = time.time()
        batch_row = (
            design_id,
            batch,
            judge,
            judge_version,
            seed,
            json.dumps(plan.to_json()),
            json.dumps({q: list(v) for q, v in sorted(scales.items())}),
            now,
        )
        item_rows = [(design_id, i.query_id, i.doc_id, i.prob, int(i.drawn), batch) for i in items]

        def insert(tx: Tx) -> int:
            self._ensure_design(tx)
            added = tx.execute(
                "INSERT INTO designs (design_id, batch, judge, judge_version, seed, plan, scales,"
                " drawn_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                batch_row,
            ).rowcount
            if not added:
                raise InputError(
                    [
                        f"{self.location}: design {design_id} batch {batch} is"
                        " recorded already (another draw-sample ran meanwhile)"
                    ]
                )
            tx.executemany(
                "INSERT INTO design_items (design_id, query_id, doc_id, prob, drawn, batch)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                item_rows,
            )
            return len(item_rows)

        return self._write(insert)

    def design(self) -> Design | None:
        """The store's design (the first one: a store has one human sample), every batch's
        items in it; None when none was drawn."""
        if not self._has_table("designs"):
            return None
        batches = typed(
            self.location,
            "designs",
            BATCH_COLUMNS,
            self._read(
                "SELECT design_id, batch, judge, judge_version, seed, plan, scales"
                " FROM designs ORDER BY design_id, batch"
            ),
        )
        if not batches:
            return None
        design_id = batches[0][0]
        mine = [b for b in batches if b[0] == design_id]
        first = mine[0]
        try:
            plan = DesignPlan(**json.loads(first[5]))
            scales: dict[str, tuple[float, float]] = {}
            for b in mine:
                scales.update({q: (float(s), float(f)) for q, (s, f) in json.loads(b[6]).items()})
        except (ValueError, TypeError, KeyError):
            raise InputError([f"{self.location}: designs: design {design_id}'s plan or scales"
                              " are not what draw-sample writes"]) from None  # fmt: skip
        rows = typed(
            self.location,
            "design_items",
            ITEM_COLUMNS,
            self._read(
                "SELECT design_id, query_id, doc_id, prob, drawn, batch FROM design_items"
                " WHERE design_id = ?",
                (design_id,),
            ),
        )
        items = tuple(
            sorted(
                (
                    DesignItem(q, d, prob, bool(drawn), batch)
                    for _, q, d, prob, drawn, batch in rows
                ),
                key=lambda i: i.key,
            )
        )
        versions = ",".join(dict.fromkeys(b[3] for b in mine if b[3]))
        return Design(design_id, first[2], versions, first[4], plan, scales, items)
