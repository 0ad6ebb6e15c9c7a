"""The judging app's path through the store uses indexes: each statement it runs to show the first
passage and, per grade, to record it and show the next, planned by SQLite (EXPLAIN QUERY PLAN).
A grade's statements never scan a table; the start reads the queue, its provenance and the
judgments whole (they grow with the pool, not the corpus) and never scans the passages, so a
store pooled from a million passages opens and grades as fast as a small one."""

from __future__ import annotations

import re
import time

from tui_fixtures import build_store

from workbench.core.model import Judgment
from workbench.flows.judging_start import read_passages, start_judging

TINY = {"claims", "meta", "sqlite_master", "pragma_table_info"}
"""One row per annotator or per setting: a scan of them costs nothing at any corpus size."""
STARTUP_WHOLE_READS = {"pool", "provenance", "judgments", "queries", "aliases", "annotators",
                       "assignments", *TINY}  # fmt: skip
"""Tables the start may read whole: the queue and what is said about it, never the passages."""


def traced(store, action):  # type: ignore[no-untyped-def]
    """Every statement `action` runs on the store's connection, values inlined."""
    seen: list[str] = []
    store._conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        store._conn.set_trace_callback(None)
    return [s for s in seen if s.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE",
                                                              "INSERT", "WITH"))]  # fmt: skip


def scanned(store, statements):  # type: ignore[no-untyped-def]
    """statement -> tables its plan scans (reads whole)."""
    found = {}
    for sql in statements:
        plan = store._conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
        aliases = {
            alias: table
            for table, alias in re.findall(r"(?:FROM|JOIN)\s+(\w+)\s+(?:AS\s+)?(\w+)", sql)
        }
        scans = {row[3].split()[1] for row in plan if row[3].startswith("SCAN ")}
        tables = {aliases.get(name, name) for name in scans}
        tables.discard("CONSTANT")
        if tables:
            found[sql] = tables
    return found


def test_start_and_each_grade_use_indexes(tmp_path):
    store = build_store(tmp_path / "s.db", queries=4, per_query=30)
    store.add_judgment(Judgment("other", "q0", "d0-000", 2, graded_at=time.time()))
    start = traced(store, lambda: start_judging(store, "ann", 1, None, lambda *a: None, 5))
    startup_scans = scanned(store, start)
    odd = {s: t for s, t in startup_scans.items() if not t <= STARTUP_WHOLE_READS}
    assert not odd, odd
    assert not any("docs" in tables for tables in startup_scans.values())

    def grade_and_next() -> None:
        store.claim("ann", "q0", "d0-001")
        store.add_judgment(Judgment("ann", "q0", "d0-001", 1, graded_at=time.time()))
        store.renew_claim("ann")
        store.judgments_since(0)
        store.claims()
        read_passages(store, ["d0-002", "d0-003"])

    per_grade = traced(store, grade_and_next)
    assert any("docs" in sql for sql in per_grade) and any("judgments" in sql for sql in per_grade)
    grade_scans = scanned(store, per_grade)
    assert all(tables <= TINY for tables in grade_scans.values()), grade_scans
    store.close()
