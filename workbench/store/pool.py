"""The pool snapshot in the store: queries in their order, passages exactly as annotators see
them, each pooling run, the queue (items by position, with provenance) and aliases (identical
passages under other ids)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from workbench.core.model import Doc, PoolEntry, Provenance, Query
from workbench.store.core import StoreCore, Tx, inserted_id
from workbench.store.rows import (
    integer,
    json_object,
    json_texts,
    optional_integer,
    probability,
    real,
    text,
    typed,
)

POOLING_COLUMNS = (
    ("pooling_id", integer), ("created_at", real), ("systems", json_texts), ("depth", integer),
    ("strategy", text), ("seed", optional_integer), ("params", json_object),
)  # fmt: skip
POOL_COLUMNS = (
    ("query_id", text), ("doc_id", text), ("position", integer), ("fused_score", real),
    ("stratum", text), ("inclusion_prob", probability),
)  # fmt: skip
PROVENANCE_COLUMNS = (
    ("query_id", text), ("doc_id", text), ("system", text), ("rank", integer), ("score", real),
)  # fmt: skip
QUERY_COLUMNS = (("query_id", text), ("text", text), ("narrative", text))
DOC_COLUMNS = (("doc_id", text), ("text", text), ("title", text))
ALIAS_COLUMNS = (("alias_id", text), ("canonical_id", text))
"""Each table's rows as read: what each value must be (`workbench.store.rows`)."""


class PoolTables(StoreCore):
    """Queries, docs, poolings, the pool and its provenance, aliases."""

    def add_queries(self, queries: Iterable[Query]) -> int:
        """Insert queries not already present (existing ones keep their text and order)."""
        queries = list(queries)

        def insert(tx: Tx) -> int:
            start = tx.execute("SELECT COALESCE(MAX(ordinal), -1) + 1 FROM queries").fetchone()[0]
            added = 0
            for offset, q in enumerate(queries):
                added += tx.execute(
                    "INSERT INTO queries VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (q.query_id, start + offset, q.text, q.narrative),
                ).rowcount
            return added

        return self._write(insert)

    def add_docs(self, docs: Iterable[Doc]) -> int:
        """Insert passages exactly as annotators will see them; existing ones are never changed."""
        rows = [(d.doc_id, d.text, d.title) for d in docs]

        def insert(tx: Tx) -> int:
            return sum(
                tx.execute("INSERT INTO docs VALUES (?, ?, ?) ON CONFLICT DO NOTHING", row).rowcount
                for row in rows
            )

        return self._write(insert)

    def record_pooling(
        self, systems: list[str], depth: int, strategy: str, seed: int | None, params: dict
    ) -> int:
        def insert(tx: Tx) -> int:
            cur = tx.execute(
                "INSERT INTO poolings (created_at, systems, depth, strategy, seed, params)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING pooling_id",
                (time.time(), json.dumps(systems), depth, strategy, seed, json.dumps(params)),
            )
            return inserted_id(cur)

        return self._write(insert)

    def poolings(self) -> list[dict]:
        rows = self._read(
            "SELECT pooling_id, created_at, systems, depth, strategy, seed, params"
            " FROM poolings ORDER BY pooling_id"
        )
        names = [name for name, _ in POOLING_COLUMNS]
        return [
            dict(zip(names, r, strict=True))
            for r in typed(self.location, "poolings", POOLING_COLUMNS, rows)
        ]

    def add_pool_entries(self, entries: Iterable[PoolEntry], pooling_id: int | None = None) -> int:
        """Add new items after the existing ones of their query; existing items keep their
        position. Provenance of existing items is extended. Returns the number of new items."""
        entries = list(entries)
        now = time.time()

        def insert(conn: Tx) -> int:
            next_position: dict[str, int] = {}
            new = 0
            for e in entries:
                if e.query_id not in next_position:
                    next_position[e.query_id] = conn.execute(
                        "SELECT COALESCE(MAX(position), -1) + 1 FROM pool WHERE query_id = ?",
                        (e.query_id,),
                    ).fetchone()[0]
                cur = conn.execute(
                    "INSERT INTO pool VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (
                        e.query_id,
                        e.doc_id,
                        next_position[e.query_id],
                        e.fused_score,
                        e.stratum,
                        e.inclusion_prob,
                        pooling_id,
                        now,
                    ),
                )
                if cur.rowcount:
                    next_position[e.query_id] += 1
                    new += 1
                for p in e.provenance:
                    conn.execute(
                        "INSERT INTO provenance VALUES (?, ?, ?, ?, ?)"
                        " ON CONFLICT (query_id, doc_id, system)"
                        " DO UPDATE SET rank = excluded.rank, score = excluded.score",
                        (e.query_id, e.doc_id, p.system, p.rank, p.score),
                    )
                for alias in e.aliases:
                    conn.execute(
                        "INSERT INTO aliases VALUES (?, ?) ON CONFLICT DO NOTHING",
                        (alias, e.doc_id),
                    )
            return new

        return self._write(insert)

    def queries(self) -> list[Query]:
        rows = self._read("SELECT query_id, text, narrative FROM queries ORDER BY ordinal")
        return [Query(*r) for r in typed(self.location, "queries", QUERY_COLUMNS, rows)]

    def pool_doc_ids(self) -> set[str]:
        """Every doc id queued for some query (the canonical ids of the pool)."""
        return {r[0] for r in self._read("SELECT DISTINCT doc_id FROM pool")}

    def doc(self, doc_id: str) -> Doc | None:
        rows = self._read("SELECT doc_id, text, title FROM docs WHERE doc_id = ?", (doc_id,))
        return Doc(*typed(self.location, "docs", DOC_COLUMNS, rows)[0]) if rows else None

    def docs(self, doc_ids: Iterable[str]) -> dict[str, Doc]:
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, Doc] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._read(
                f"SELECT doc_id, text, title FROM docs WHERE doc_id IN ({marks})", chunk
            )
            for r in typed(self.location, "docs", DOC_COLUMNS, rows):
                found[r[0]] = Doc(*r)
        return found

    def aliases(self) -> dict[str, str]:
        """alias doc id -> canonical doc id (the one annotators judge)."""
        rows = self._read("SELECT alias_id, canonical_id FROM aliases ORDER BY alias_id")
        return dict(typed(self.location, "aliases", ALIAS_COLUMNS, rows, key=1))

    def pool(self, query_id: str | None = None) -> list[PoolEntry]:
        """The judging queue: queries in their order, items by position."""
        where, params = ("WHERE p.query_id = ?", (query_id,)) if query_id else ("", ())
        rows = self._read(
            "SELECT p.query_id, p.doc_id, p.position, p.fused_score, p.stratum, p.inclusion_prob"
            " FROM pool p JOIN queries q ON q.query_id = p.query_id "
            f"{where} ORDER BY q.ordinal, p.position",
            params,
        )
        rows = typed(self.location, "pool", POOL_COLUMNS, rows, key=2)
        provenance: dict[tuple[str, str], list[Provenance]] = {}
        prov_where = "WHERE query_id = ?" if query_id else ""
        prov_rows = self._read(
            f"SELECT query_id, doc_id, system, rank, score FROM provenance {prov_where}"
            " ORDER BY system",
            params,
        )
        for qid, did, system, rank, score in typed(
            self.location, "provenance", PROVENANCE_COLUMNS, prov_rows, key=3
        ):
            provenance.setdefault((qid, did), []).append(Provenance(system, rank, score))
        alias_of: dict[str, list[str]] = {}
        for alias, canonical in self.aliases().items():
            alias_of.setdefault(canonical, []).append(alias)
        return [
            PoolEntry(
                query_id=r[0],
                doc_id=r[1],
                position=r[2],
                fused_score=r[3],
                provenance=tuple(provenance.get((r[0], r[1]), ())),
                aliases=tuple(alias_of.get(r[1], ())),
                stratum=r[4],
                inclusion_prob=r[5],
            )
            for r in rows
        ]
