"""`workbench store copy`: every row of one store into another (SQLite -> PostgreSQL and back),
ids and timestamps as they were, in one transaction on the destination, and a checksum per
table on both sides to show nothing changed on the way."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from workbench.core.errors import InputError
from workbench.store.claim import CLAIM_KEY
from workbench.store.core import Login, StoreCore, Tx

COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "queries": ("query_id", "ordinal", "text", "narrative"),
    "docs": ("doc_id", "text", "title"),
    "doc_spans": ("doc_id", "source", "start_char", "end_char", "fence", "headings"),
    "poolings": ("pooling_id", "created_at", "systems", "depth", "strategy", "seed", "params"),
    "pool": (
        "query_id", "doc_id", "position", "fused_score", "stratum", "inclusion_prob",
        "pooling_id", "added_at",
    ),
    "provenance": ("query_id", "doc_id", "system", "rank", "score"),
    "aliases": ("alias_id", "canonical_id"),
    "annotators": ("name", "role", "created_at"),
    "judgments": (
        "judgment_id", "annotator", "role", "query_id", "doc_id", "grade", "note", "shown_at",
        "graded_at", "elapsed_ms", "app_version", "judge_version",
    ),
    "assignments": ("query_id", "doc_id", "required", "assigned_at"),
    "claims": ("annotator", "query_id", "doc_id", "claimed_at"),
    "draws": (
        "draw_id", "query_id", "doc_id", "prob", "spread", "predicted", "p", "reserve",
        "excluded", "annotator", "drawn_at",
    ),
    "llm_answers": (
        "model", "prompt_hash", "query_id", "doc_id", "status", "grade", "answer", "answered_at",
    ),
    "judge_versions": (
        "annotator", "version", "kind", "model", "prompt", "scorer", "recorded_at",
    ),
    "designs": (
        "design_id", "batch", "judge", "judge_version", "seed", "plan", "scales", "drawn_at",
    ),
    "design_items": ("design_id", "query_id", "doc_id", "prob", "drawn", "batch"),
}  # fmt: skip
"""Every table of a store and its columns, in an order where no table refers to a later one;
rows are read in the order of their first column(s) (the key)."""

KEYS: dict[str, tuple[str, ...]] = {
    "meta": ("key",),
    "queries": ("query_id",),
    "docs": ("doc_id",),
    "doc_spans": ("doc_id",),
    "poolings": ("pooling_id",),
    "pool": ("query_id", "doc_id"),
    "provenance": ("query_id", "doc_id", "system"),
    "aliases": ("alias_id",),
    "annotators": ("name",),
    "judgments": ("judgment_id",),
    "assignments": ("query_id", "doc_id"),
    "claims": ("annotator",),
    "draws": ("draw_id",),
    "llm_answers": ("model", "prompt_hash", "query_id", "doc_id"),
    "judge_versions": ("annotator", "version"),
    "designs": ("design_id", "batch"),
    "design_items": ("design_id", "query_id", "doc_id"),
}
IDS = {"poolings": "pooling_id", "judgments": "judgment_id", "draws": "draw_id"}
"""Tables whose id the store hands out: `--append` lets the destination give new ones."""
CONTENT = ("queries", "docs", "pool", "judgments")
"""A destination holding rows in any of these is not empty."""


@dataclass(frozen=True)
class TableCopy:
    table: str
    rows: int
    source_sum: str
    destination_sum: str
    added: int
    """Rows the destination did not hold before (all of them, unless appending)."""

    @property
    def same(self) -> bool:
        return self.source_sum == self.destination_sum


@dataclass(frozen=True)
class StoreCopy:
    """What a copy did: each table, and the annotators' own logins (`store.pg_logins`) of the
    source, made the destination's too (`logins`) or not: their role is not on the
    destination's server (`roleless`), or the destination is a SQLite file (`left`)."""

    tables: list[TableCopy]
    logins: list[Login]
    roleless: list[Login]
    left: list[Login]

    @property
    def same(self) -> bool:
        return all(t.same for t in self.tables)

    @property
    def added(self) -> int:
        return sum(t.added for t in self.tables)


def rows_of(store: StoreCore, table: str) -> list[tuple]:
    """The table's rows in key order (an optional table the store lacks: none). A schema-1
    store's judgments have the version '' (unknown); the schema version is each store's own,
    never copied."""
    if not store._has_table(table):
        return []
    columns = ", ".join(COLUMNS[table])
    if table == "judgments" and not store._has_versions():
        columns = columns.replace("judge_version", "'' AS judge_version")
    # the schema version and a pooling claim (`store.claim`) are the store's own, never copied
    where = f" WHERE key NOT IN ('schema_version', '{CLAIM_KEY}')" if table == "meta" else ""
    rows = store._read(f"SELECT {columns} FROM {table}{where}")
    # Sorted here, not by the database: PostgreSQL's collation may order text otherwise than
    # SQLite, and the checksums must not depend on it. The key columns come first.
    width = len(KEYS[table])
    return sorted((tuple(r) for r in rows), key=lambda r: r[:width])


def checksum(rows: list[tuple], skip: int | None = None) -> str:
    """sha256 over the rows as JSON (floats exact), leaving out column `skip` (an id)."""
    digest = hashlib.sha256()
    for row in rows:
        values = [v for i, v in enumerate(row) if i != skip]
        digest.update(json.dumps(values, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def is_empty(store: StoreCore) -> bool:
    return not any(
        store._has_table(t) and store._read(f"SELECT 1 FROM {t} LIMIT 1") for t in CONTENT
    )


def _new_rows(tx: Tx, table: str, rows: list[tuple], location: str) -> list[tuple]:
    """For --append: the rows (ids left out) the destination does not hold already, so a second
    append adds nothing. A judgment of an (annotator, item) the destination has other rows for
    is refused: appended after them it would become the current grade, whatever its time."""
    columns = COLUMNS[table][1:]
    have = {tuple(r) for r in tx.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()}
    new = [r for r in rows if tuple(r) not in have]
    if table == "judgments":
        at = {c: i for i, c in enumerate(columns)}
        pairs = {(r[at["annotator"]], r[at["query_id"]], r[at["doc_id"]]) for r in have}
        clash = [
            r for r in new if (r[at["annotator"]], r[at["query_id"]], r[at["doc_id"]]) in pairs
        ]
        if clash:
            raise InputError(
                [
                    f"{location}: already holds other grades of {len(clash)} of the judgments to"
                    " append (same annotator and item); appended, they would become the current"
                    " grades whatever their time: nothing was copied"
                ]
            )
    return new


def _identity(store: StoreCore) -> tuple:
    path = getattr(store, "path", None)
    if path is not None:
        status = os.stat(path)
        return ("sqlite", status.st_dev, status.st_ino)
    return ("postgresql", *store._identity())  # type: ignore[attr-defined]


def copy_store(source: StoreCore, destination: StoreCore, append: bool = False) -> StoreCopy:
    """Copy every row; `append` adds to a store that holds rows already (keys it has are kept,
    rows it has are not added twice, handed-out ids are new, meta it has wins; judgments of an
    annotator's item it has other rows for are refused), else the destination must be empty.
    The source's own logins come along in the same transaction (`StoreCopy`). Returns each
    table's row count, rows added and checksums (ids left out when appending)."""
    if _identity(source) == _identity(destination):
        raise InputError(
            [f"{destination.location}: is the source store (named another way); nothing copied"]
        )
    if not append and not is_empty(destination):
        raise InputError(
            [f"{destination.location}: holds a pool or judgments already (--append adds to it)"]
        )
    tables = {t: rows_of(source, t) for t in COLUMNS}
    logins = source.logins()
    added, roleless = destination._write(
        lambda tx: _write_rows(tx, destination, tables, append, logins)
    )
    report = []
    for table, rows in tables.items():
        skip = 0 if append and table in IDS else None
        after = rows_of(destination, table)
        if append:
            mine = {tuple(r[1:]) if skip == 0 else tuple(r) for r in after}
            kept = [r for r in rows if (tuple(r[1:]) if skip == 0 else tuple(r)) in mine]
            sums = (checksum(rows, skip), checksum(kept, skip))
        else:
            sums = (checksum(rows), checksum(after))
        report.append(TableCopy(table, len(rows), *sums, added[table]))
    if not destination.holds_logins:
        return StoreCopy(report, [], [], logins)
    return StoreCopy(report, [x for x in logins if x not in roleless], roleless, [])


def _write_rows(
    tx: Tx, destination: StoreCore, tables: dict[str, list[tuple]], append: bool,
    logins: list[Login],
) -> tuple[dict[str, int], list[Login]]:  # fmt: skip
    """`copy_store`'s one transaction: every table's rows, then the logins. Returns the rows
    each table gained and the logins whose role the destination's server lacks."""
    for ensure in (destination._ensure_sharing, destination._ensure_draws,
                   destination._ensure_llm, destination._ensure_design,
                   destination._ensure_spans, destination._ensure_versions):  # fmt: skip
        ensure(tx)
    added: dict[str, int] = {}
    for table, rows in tables.items():
        columns = COLUMNS[table]
        if append and table in IDS:
            columns = columns[1:]
            rows = _new_rows(tx, table, [r[1:] for r in rows], destination.location)
        marks = ", ".join("?" * len(columns))
        conflict = (
            " ON CONFLICT DO NOTHING"
            if append or table != "meta"
            else " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){conflict}"
        before = _count(tx, table) if append else 0
        tx.executemany(sql, rows)
        added[table] = _count(tx, table) - before if append else len(rows)
    if not append:
        destination._after_ids(tx, {t: IDS[t] for t in IDS})
    roleless = destination.restore_logins(tx, logins) if destination.holds_logins else []
    return added, roleless


def _count(tx: Tx, table: str) -> int:
    return int(tx.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
