"""The SQLite store's schema and its file: the tables and triggers, the checks made before a path is
opened (someone else's file is refused byte for byte as it was) and atomic creation."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError
from workbench.core.model import DEFAULT_GRADE_SCALE
from workbench.formats.store_file import SQLITE_HEADER

SCHEMA_VERSION = 2
"""1: the first schema. 2: judge versions, a `judge_version` column of judgments and the
`judge_versions` table (`VERSIONS_UPGRADE` brings a schema-1 store there, on the first write of
a versioned label; until then it opens and reads as before, every label's version unknown)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queries (
    query_id TEXT PRIMARY KEY, ordinal INTEGER NOT NULL, text TEXT NOT NULL,
    narrative TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS docs (
    doc_id TEXT PRIMARY KEY, text TEXT NOT NULL, title TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS poolings (
    pooling_id INTEGER PRIMARY KEY AUTOINCREMENT, created_at REAL NOT NULL,
    systems TEXT NOT NULL, depth INTEGER NOT NULL, strategy TEXT NOT NULL,
    seed INTEGER, params TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS pool (
    query_id TEXT NOT NULL, doc_id TEXT NOT NULL, position INTEGER NOT NULL,
    fused_score REAL NOT NULL DEFAULT 0, stratum TEXT NOT NULL DEFAULT 'pool',
    inclusion_prob REAL NOT NULL DEFAULT 1.0, pooling_id INTEGER, added_at REAL NOT NULL,
    PRIMARY KEY (query_id, doc_id));
CREATE INDEX IF NOT EXISTS pool_order ON pool (query_id, position);
CREATE TABLE IF NOT EXISTS provenance (
    query_id TEXT NOT NULL, doc_id TEXT NOT NULL, system TEXT NOT NULL,
    rank INTEGER NOT NULL, score REAL NOT NULL,
    PRIMARY KEY (query_id, doc_id, system));
CREATE TABLE IF NOT EXISTS aliases (
    alias_id TEXT PRIMARY KEY, canonical_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS annotators (
    name TEXT PRIMARY KEY, role TEXT NOT NULL DEFAULT 'human', created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS judgments (
    judgment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    annotator TEXT NOT NULL, role TEXT NOT NULL DEFAULT 'human',
    query_id TEXT NOT NULL, doc_id TEXT NOT NULL, grade INTEGER, note TEXT NOT NULL DEFAULT '',
    shown_at REAL NOT NULL DEFAULT 0, graded_at REAL NOT NULL,
    elapsed_ms INTEGER NOT NULL DEFAULT 0, app_version TEXT NOT NULL DEFAULT '',
    judge_version TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS judgments_by_pair ON judgments (annotator, query_id, doc_id);
CREATE TRIGGER IF NOT EXISTS judgments_append_only_update BEFORE UPDATE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
CREATE TRIGGER IF NOT EXISTS judgments_append_only_delete BEFORE DELETE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
"""

JUDGE_VERSIONS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS judge_versions (annotator TEXT NOT NULL, version TEXT NOT NULL,"
    " kind TEXT NOT NULL, model TEXT NOT NULL DEFAULT '', prompt TEXT NOT NULL DEFAULT '',"
    " scorer TEXT NOT NULL DEFAULT '', recorded_at REAL NOT NULL,"
    " PRIMARY KEY (annotator, version))",
    "CREATE TRIGGER IF NOT EXISTS judge_versions_append_only_update BEFORE UPDATE ON"
    " judge_versions BEGIN SELECT RAISE(ABORT, 'judge_versions are append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS judge_versions_append_only_delete BEFORE DELETE ON"
    " judge_versions BEGIN SELECT RAISE(ABORT, 'judge_versions are append-only'); END",
)
"""Each version of a non-human judge: its identity (`core.judge_versions.JudgeIdentity`) under
the annotator's name; append-only, as the judgments that name it."""

VERSIONS_UPGRADE = (
    "ALTER TABLE judgments ADD COLUMN judge_version TEXT NOT NULL DEFAULT ''",
    *JUDGE_VERSIONS_SCHEMA,
)
"""Schema 1 -> 2, inside the write transaction that first records a judge version."""

SHARING_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS assignments (query_id TEXT NOT NULL, doc_id TEXT NOT NULL,"
    " required INTEGER NOT NULL, assigned_at REAL NOT NULL, PRIMARY KEY (query_id, doc_id))",
    "CREATE TABLE IF NOT EXISTS claims (annotator TEXT PRIMARY KEY, query_id TEXT NOT NULL,"
    " doc_id TEXT NOT NULL, claimed_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS judgments_by_item ON judgments (query_id, doc_id)",
)
"""Tables for sharing one pool among annotators, added after schema 1 without changing it: an
item's required number of distinct human judges (absent = 1), and the item each annotator has
open. Created when first written, so stores made before them open unchanged."""

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
"""The adaptive queue's draws (append-only), created when first written."""

DESIGN_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS designs (design_id INTEGER NOT NULL, batch INTEGER NOT NULL,"
    " judge TEXT NOT NULL, judge_version TEXT NOT NULL, seed INTEGER NOT NULL,"
    " plan TEXT NOT NULL, scales TEXT NOT NULL, drawn_at REAL NOT NULL,"
    " PRIMARY KEY (design_id, batch))",
    "CREATE TABLE IF NOT EXISTS design_items (design_id INTEGER NOT NULL,"
    " query_id TEXT NOT NULL, doc_id TEXT NOT NULL, prob REAL NOT NULL, drawn INTEGER NOT NULL,"
    " batch INTEGER NOT NULL, PRIMARY KEY (design_id, query_id, doc_id))",
    *(
        f"CREATE TRIGGER IF NOT EXISTS {table}_append_only_{op.lower()} BEFORE {op} ON {table}"
        f" BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"
        for table in ("designs", "design_items")
        for op in ("UPDATE", "DELETE")
    ),
)
"""The human sample's design (`workbench draw-sample`): each batch's plan, seed, judge and
scales, and every frame item's inclusion probability and whether it was drawn; append-only,
created when first written."""

LLM_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS llm_answers (model TEXT NOT NULL, prompt_hash TEXT NOT NULL,"
    " query_id TEXT NOT NULL, doc_id TEXT NOT NULL, status TEXT NOT NULL, grade INTEGER,"
    " answer TEXT NOT NULL, answered_at REAL NOT NULL,"
    " PRIMARY KEY (model, prompt_hash, query_id, doc_id))",
)
"""An LLM judge's answers (workbench judge-llm), created when first written."""

SPANS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS doc_spans (doc_id TEXT PRIMARY KEY, source TEXT NOT NULL,"
    " start_char INTEGER NOT NULL, end_char INTEGER NOT NULL, fence TEXT NOT NULL DEFAULT '',"
    " headings TEXT NOT NULL DEFAULT '[]')",
)
"""Where each passage of a text folder sits (`core.model.SourceSpan`) and the headings it sits
under (a JSON list), beside `docs` so a store made before them opens unchanged; created when
first written."""

TOKENS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS serve_tokens (annotator TEXT PRIMARY KEY, role TEXT NOT NULL,"
    " token_hash TEXT NOT NULL UNIQUE, created_at REAL NOT NULL, revoked_at REAL)",
)
"""The served app's token hashes (`workbench.store.tokens`), created when first written."""

CLAIM_TTL_S = 120.0
"""A claim not renewed for this long (the app renews it every few seconds while open) belongs to
a closed or crashed app and no longer keeps others off the item."""


STORE_TABLES = (
    "meta", "queries", "docs", "poolings", "pool", "provenance", "aliases", "annotators",
    "judgments",
)  # fmt: skip
"""The tables every workbench store has (schema 1's): a SQLite file lacking one is someone
else's, whatever its meta table says."""


def check_store_file(path: Path) -> None:
    """Refuse, before SQLite opens it, a path that cannot be a judgments store: missing, a
    folder, a pipe or a device (never opened: a pipe would wait forever), empty, or not a
    SQLite database. Opening with sqlite3 alone would first change such a file (switch it to
    WAL, grow it to a page); the store's schema is checked next on a read-only connection
    (`Store`), before anything is written."""
    from workbench.formats.textio import open_regular

    if not os.path.lexists(path):
        raise InputError([f"{path}: no such judgments store (build one with `workbench pool`)"])
    if path.is_dir():
        raise InputError([f"{path}: is a folder, expected a judgments store file"])
    try:
        with open_regular(path) as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise InputError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
    if not header:
        raise InputError([f"{path}: is empty, not a workbench judgments store"])
    if header != SQLITE_HEADER:
        raise InputError([f"{path}: not a workbench judgments store (not a SQLite file)"])


def connect_file(path: Path, mode: str, **options: Any) -> sqlite3.Connection:
    """A connection to the SQLite file at `path` as that path: through a `file:` URI of its
    absolute path (every '?', '#', '%' and ':' escaped), because a plain name starting with
    `file:` (a folder `file:x/`, a temporary name in it) is a URI to a SQLite built with URI
    names on, and may open another file. `mode`: ro, rw or rwc."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True, **options)


STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""A SQLite store's file and the files SQLite keeps beside it."""


def remove_store_files(path: Path) -> None:
    """Remove a store this command made and could not fill (its -wal, -shm and journal too)."""
    for suffix in STORE_SUFFIXES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def create_store_file(path: Path) -> None:
    """Build an empty store (schema and meta) under a temporary name beside `path`, then link
    it into place: a kill at any moment leaves either no store or a whole one, and a file that
    appeared meanwhile is never replaced."""
    from workbench.formats.staged import sweep_dead_temps, temp_beside

    orphans = [f"{path}{s}" for s in ("-wal", "-journal") if os.path.lexists(f"{path}{s}")]
    if orphans and not os.path.lexists(path):
        # SQLite would apply a deleted store's journal to the new file and call it malformed.
        raise InputError(
            [f"{orphans[0]}: left by a store that was deleted; remove it (and {path}-shm) before"
             " making a new store here"]
        )  # fmt: skip
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sweep_dead_temps(path)
        tmp = temp_beside(path)
    except OSError as exc:
        raise InputError([f"{path}: cannot create the store ({exc.strerror or exc})"]) from None
    try:
        conn = connect_file(tmp, "rwc", isolation_level=None)
        try:
            conn.executescript(
                "BEGIN;"
                + SCHEMA
                + "".join(f"{statement};" for statement in JUDGE_VERSIONS_SCHEMA)
                + "INSERT INTO meta VALUES ('schema_version', '"
                + str(SCHEMA_VERSION)
                + "'); COMMIT;"
            )
            conn.execute(
                "INSERT INTO meta VALUES ('grade_scale', ?)",
                (json.dumps({str(g): w for g, w in DEFAULT_GRADE_SCALE.items()}),),
            )
        finally:
            conn.close()
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # fails if the path exists: never replaces another's file
        except FileExistsError:
            pass
        except OSError:  # a filesystem without hard links
            if not path.exists():
                os.replace(tmp, path)
    except (OSError, sqlite3.Error) as exc:
        message = getattr(exc, "strerror", None) or str(exc)
        raise InputError([f"{path}: cannot create the store ({message})"]) from None
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}-journal").unlink(missing_ok=True)
