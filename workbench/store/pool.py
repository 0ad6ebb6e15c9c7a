"""The pool snapshot in the store: queries in their order, passages exactly as annotators see
them, each pooling run, the queue (items by position, with provenance) and aliases (identical
passages under other ids)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from workbench.core.collector import gc_paused
from workbench.core.errors import InputError
from workbench.core.model import Doc, PoolEntry, Provenance, Query, SourceSpan
from workbench.store.claim import local_time
from workbench.store.core import UPSERT_META, StoreCore, Tx, inserted_id
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
SPAN_COLUMNS = (
    ("doc_id", text), ("source", text), ("start_char", integer), ("end_char", integer),
    ("fence", text), ("headings", json_texts),
)  # fmt: skip
ALIAS_COLUMNS = (("alias_id", text), ("canonical_id", text))
"""Each table's rows as read: what each value must be (`workbench.store.rows`)."""

POOL_TABLES = ("pool", "provenance", "aliases", "poolings", "queries", "docs")
SPAN_TABLE = "doc_spans"
"""Where the passages of a text folder sit (`schema.SPANS_SCHEMA`): cleared with `docs`."""
"""What one pooling writes (with meta's corpus_size and policy): what replacing an interrupted
pooling clears."""


@dataclass(frozen=True, slots=True)
class PoolingRecord:
    """A pooling's row: the systems that produced runs, how they were fused, its params."""

    systems: list[str]
    depth: int
    strategy: str
    seed: int | None
    params: Mapping[str, Any]


class PoolTables(StoreCore):
    """Queries, docs, poolings, the pool and its provenance, aliases."""

    def add_queries(self, queries: Iterable[Query]) -> int:
        """Insert queries not already present (existing ones keep their text and order)."""
        queries = list(queries)
        return self._write(lambda tx: _insert_queries(tx, queries))

    def add_docs(self, docs: Iterable[Doc]) -> int:
        """Insert passages exactly as annotators will see them; existing ones are never changed."""
        docs = list(docs)
        return self._write(lambda tx: self._insert_docs(tx, docs))

    def record_pooling(
        self, systems: list[str], depth: int, strategy: str, seed: int | None, params: dict
    ) -> int:
        record = PoolingRecord(systems, depth, strategy, seed, params)
        return self._write(lambda tx: _insert_pooling(tx, record))

    def add_pooling(
        self,
        queries: Iterable[Query],
        docs: Iterable[Doc],
        record: PoolingRecord,
        entries: Iterable[PoolEntry],
        meta: Mapping[str, str],
    ) -> tuple[int, int]:
        """Write a whole pooling in one transaction: its queries, the passages shown, its row,
        its entries and `meta` (corpus_size, policy), so a kill at any moment leaves the store
        as it was or with the whole pooling, never part of one. An interrupted pooling left by
        an earlier version (`interrupted_pooling`) is cleared in the same transaction: this one
        replaces it. The store's pooling claim (`claim_pooling`) is checked and released in it
        too. Returns (pooling id, new items)."""
        queries, docs, entries = list(queries), list(docs), list(entries)

        def write(tx: Tx) -> tuple[int, int]:
            self._check_claim(tx)
            if self._interrupted(tx) is not None:
                self._clear_pooling(tx)
            _insert_queries(tx, queries)
            self._insert_docs(tx, docs)
            pooling_id = _insert_pooling(tx, record)
            new_items = _insert_entries(tx, entries, pooling_id)
            for key, value in meta.items():
                tx.execute(UPSERT_META, (key, value))
            self._release_claim(tx)
            return pooling_id, new_items

        return self._write(write)

    def interrupted_pooling(self) -> dict | None:
        """The pooling an earlier workbench left half-written (it wrote a pooling in several
        transactions, the meta last), or None. This version writes a pooling in one
        transaction (`add_pooling`), so its poolings are whole by construction, and
        `_interrupted` finds the earlier versions' interrupted ones."""
        return self._interrupted(None)

    def interrupted_refusal(self) -> str | None:
        """What every command but `pool` says of a store with an interrupted pooling."""
        pooling = self.interrupted_pooling()
        if pooling is None:
            return None
        return (
            f"{self.location}: its pooling of {local_time(pooling['created_at'])} was interrupted "
            "before it was complete: run the same `workbench pool` command again (it replaces "
            "the interrupted pooling)"
        )

    def _interrupted(self, tx: Tx | None) -> dict | None:
        """An earlier workbench wrote a pooling as queries, docs, the pooling row, its entries,
        then meta corpus_size and, for the adaptive policy, meta policy: its first pooling
        (params naming its runs) without a corpus_size, or an adaptive pooling without the
        adaptive policy, was interrupted. A later static pooling cut short left the pool whole
        (its entries went in one transaction) and is not flagged. Read inside `tx` when
        given."""

        def rows(sql: str, params: tuple = ()) -> list[tuple]:
            return self._read(sql, params) if tx is None else list(tx.execute(sql, params))

        found = rows(
            "SELECT pooling_id, created_at, strategy, params FROM poolings ORDER BY pooling_id"
        )
        if not found:
            return None
        meta = dict(rows("SELECT key, value FROM meta WHERE key IN ('corpus_size', 'policy')"))
        for pooling_id, created_at, strategy, _ in found:
            if strategy == "adaptive" and meta.get("policy") != "adaptive":
                return {"pooling_id": pooling_id, "created_at": created_at}
        pooling_id, created_at, _, raw = found[0]
        try:
            params = json.loads(raw)
        except (ValueError, RecursionError):
            return None  # not the pipeline's: said by whoever reads the params
        if isinstance(params, dict) and "runs" in params and "corpus_size" not in meta:
            return {"pooling_id": pooling_id, "created_at": created_at}
        return None

    def _clear_pooling(self, tx: Tx) -> None:
        """Remove an interrupted pooling, the store's only kind of pool then (no pooling was
        ever completed in it), so the pooling now written replaces it; refused once anyone
        judged it (judgments are never removed)."""
        judged = tx.execute("SELECT count(*) FROM judgments").fetchone()[0]
        if not judged and self._has_table("draws"):
            judged = tx.execute("SELECT count(*) FROM draws").fetchone()[0]
        if judged:
            raise InputError(
                [
                    f"{self.location}: its pooling was interrupted before it was complete, and "
                    f"{judged} judgment(s) or draw(s) were made on it since: pool into a new store"
                ]
            )
        for table in POOL_TABLES:
            tx.execute(f"DELETE FROM {table}")
        if self._has_table(SPAN_TABLE):
            tx.execute(f"DELETE FROM {SPAN_TABLE}")
        for table in ("assignments", "claims"):
            if self._has_table(table):
                tx.execute(f"DELETE FROM {table}")
        tx.execute("DELETE FROM meta WHERE key IN ('corpus_size', 'policy')")

    def _check_claim(self, tx: Tx) -> None:
        """Refuse to write a pooling while another process holds the store's pooling claim
        (`workbench.store.claim`)."""
        raise NotImplementedError

    def _release_claim(self, tx: Tx) -> None:
        """Give the pooling claim back inside the pooling's own transaction."""
        raise NotImplementedError

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
        return self._write(lambda tx: _insert_entries(tx, entries, pooling_id))

    def queries(self) -> list[Query]:
        rows = self._read("SELECT query_id, text, narrative FROM queries ORDER BY ordinal")
        return [Query(*r) for r in typed(self.location, "queries", QUERY_COLUMNS, rows)]

    def has_pool(self) -> bool:
        """Whether anything is pooled (without reading the pool: 200,000 entries take a second)."""
        return bool(self._read("SELECT 1 FROM pool LIMIT 1"))

    def pool_doc_ids(self) -> set[str]:
        """Every doc id queued for some query (the canonical ids of the pool)."""
        return {r[0] for r in self._read("SELECT DISTINCT doc_id FROM pool")}

    def doc(self, doc_id: str) -> Doc | None:
        return self.docs([doc_id]).get(doc_id)

    def docs(self, doc_ids: Iterable[str]) -> dict[str, Doc]:
        """The passages of `doc_ids` the store holds, with where each sits in its file when
        the store recorded it."""
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, Doc] = {}
        spans = self._has_table(SPAN_TABLE)
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._read(
                f"SELECT doc_id, text, title FROM docs WHERE doc_id IN ({marks})", chunk
            )
            for r in typed(self.location, "docs", DOC_COLUMNS, rows):
                found[r[0]] = Doc(*r)
            if not spans or not rows:
                continue
            rows = self._read(
                "SELECT doc_id, source, start_char, end_char, fence, headings FROM doc_spans"
                f" WHERE doc_id IN ({marks})",
                chunk,
            )
            for did, source, begin, end, fence, headings in typed(
                self.location, SPAN_TABLE, SPAN_COLUMNS, rows
            ):
                if did in found:
                    span = SourceSpan(source, begin, end, fence)
                    found[did] = replace(found[did], span=span, headings=tuple(headings))
        return found

    def _insert_docs(self, tx: Tx, docs: list[Doc]) -> int:
        """Insert passages exactly as annotators will see them, with where each sits in its
        file (the spans table made when the first span is written)."""
        cur = tx.executemany(
            "INSERT INTO docs VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(d.doc_id, d.text, d.title) for d in docs],
        )
        spans = [
            (d.doc_id, d.span.source, d.span.start, d.span.end, d.span.fence,
             json.dumps(list(d.headings), ensure_ascii=False))
            for d in docs
            if d.span is not None
        ]  # fmt: skip
        if spans:
            self._ensure_spans(tx)
            tx.executemany(
                "INSERT INTO doc_spans VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", spans
            )
        return max(cur.rowcount, 0)

    def aliases(self) -> dict[str, str]:
        """alias doc id -> canonical doc id (the one annotators judge)."""
        rows = self._read("SELECT alias_id, canonical_id FROM aliases ORDER BY alias_id")
        return dict(typed(self.location, "aliases", ALIAS_COLUMNS, rows, key=1))

    def pool(self, query_id: str | None = None) -> list[PoolEntry]:
        """The judging queue: queries in their order, items by position."""
        with gc_paused():  # 200,000 entries at 100,000 x 500, adaptive (the app waits for them)
            return self._pool(query_id)

    def _pool(self, query_id: str | None) -> list[PoolEntry]:
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
        # Positional, and one shared () where a passage has no provenance or aliases (most of
        # an adaptive pool: reserve passages no system ranked).
        found = {key: tuple(entries) for key, entries in provenance.items()}
        named = {doc_id: tuple(others) for doc_id, others in alias_of.items()}
        return [
            PoolEntry(
                qid, did, position, fused, found.get((qid, did), ()), named.get(did, ()),
                stratum, prob,
            )
            for qid, did, position, fused, stratum, prob in rows
        ]  # fmt: skip


def _insert_queries(tx: Tx, queries: list[Query]) -> int:
    start = tx.execute("SELECT COALESCE(MAX(ordinal), -1) + 1 FROM queries").fetchone()[0]
    added = 0
    for offset, q in enumerate(queries):
        added += tx.execute(
            "INSERT INTO queries VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (q.query_id, start + offset, q.text, q.narrative),
        ).rowcount
    return added


def _insert_pooling(tx: Tx, record: PoolingRecord) -> int:
    cur = tx.execute(
        "INSERT INTO poolings (created_at, systems, depth, strategy, seed, params)"
        " VALUES (?, ?, ?, ?, ?, ?) RETURNING pooling_id",
        (time.time(), json.dumps(record.systems), record.depth, record.strategy, record.seed,
         json.dumps(dict(record.params))),
    )  # fmt: skip
    return inserted_id(cur)


def _insert_entries(conn: Tx, entries: list[PoolEntry], pooling_id: int | None) -> int:
    """The entries new to the pool at the end of their query's positions, with every system's
    rank and score and the aliases; the count of new entries. The rows go in as batches (one
    statement a row had each wait on the server: 36,000 round trips, 7 s of a 25,000-item
    adaptive pool into PostgreSQL), so what is new is worked out first from what the pool holds."""
    now = time.time()
    next_position: dict[str, int] = {}
    held: set[tuple[str, str]] = set()
    for query_id in dict.fromkeys(e.query_id for e in entries):
        docs = conn.execute("SELECT doc_id, position FROM pool WHERE query_id = ?", (query_id,))
        rows = docs.fetchall()
        held.update((query_id, doc_id) for doc_id, _ in rows)
        next_position[query_id] = max((position for _, position in rows), default=-1) + 1
    pool_rows, provenance, aliases = [], [], []
    for e in entries:
        if (e.query_id, e.doc_id) not in held:
            held.add((e.query_id, e.doc_id))
            pool_rows.append((e.query_id, e.doc_id, next_position[e.query_id], e.fused_score,
                              e.stratum, e.inclusion_prob, pooling_id, now))  # fmt: skip
            next_position[e.query_id] += 1
        provenance.extend((e.query_id, e.doc_id, p.system, p.rank, p.score) for p in e.provenance)
        aliases.extend((alias, e.doc_id) for alias in e.aliases)
    if pool_rows:
        conn.executemany(  # a concurrent writer's row wins, as it did row by row
            "INSERT INTO pool VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", pool_rows
        )
    if provenance:
        conn.executemany(
            "INSERT INTO provenance VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (query_id, doc_id, system)"
            " DO UPDATE SET rank = excluded.rank, score = excluded.score",
            provenance,
        )
    if aliases:
        conn.executemany("INSERT INTO aliases VALUES (?, ?) ON CONFLICT DO NOTHING", aliases)
    return len(pool_rows)
