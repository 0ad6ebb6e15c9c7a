"""The judgments store: one SQLite file (WAL) holding the pool snapshot and append-only judgments.

Every grade is a new row: a regrade or an undo never updates or deletes an earlier row, so the
full history survives. The current grade of (annotator, query, doc) is its latest row."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from workbench import __version__
from workbench.core.errors import InputError
from workbench.core.model import (
    DEFAULT_GRADE_SCALE,
    Doc,
    Judgment,
    PoolEntry,
    Provenance,
    Query,
    Role,
)
from workbench.formats.textio import plain_int

SCHEMA_VERSION = 1
T = TypeVar("T")

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
    elapsed_ms INTEGER NOT NULL DEFAULT 0, app_version TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS judgments_by_pair ON judgments (annotator, query_id, doc_id);
CREATE TRIGGER IF NOT EXISTS judgments_append_only_update BEFORE UPDATE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
CREATE TRIGGER IF NOT EXISTS judgments_append_only_delete BEFORE DELETE ON judgments
BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END;
"""

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

CLAIM_TTL_S = 120.0
"""A claim not renewed for this long (the app renews it every few seconds while open) belongs to
a closed or crashed app and no longer keeps others off the item."""


INSERT_JUDGMENT = (
    "INSERT INTO judgments (annotator, role, query_id, doc_id, grade, note, shown_at,"
    " graded_at, elapsed_ms, app_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _row_id(cursor: sqlite3.Cursor) -> int:
    """The rowid of the row a plain INSERT just added (sqlite3 types it Optional)."""
    row_id = cursor.lastrowid
    assert row_id is not None, "INSERT added no row"
    return row_id


def _judgment_row(j: Judgment, now: float) -> tuple:
    """The judgments row of `j`; an unset graded_at or app_version means now and this version."""
    return (
        j.annotator,
        j.role,
        j.query_id,
        j.doc_id,
        j.grade,
        j.note,
        j.shown_at,
        j.graded_at or now,
        j.elapsed_ms,
        j.app_version or __version__,
    )


def _retry(operation: Callable[[], T], attempts: int = 20) -> T:
    """Retry on 'database is locked' beyond SQLite's own busy timeout: another annotator's
    process may hold the write lock for a moment; a grade must never be dropped for it."""
    for attempt in range(attempts):
        try:
            return operation()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another process holds the store's lock: wait and retry, never call the store damaged."""
    return "locked" in str(exc) or "busy" in str(exc)


SQLITE_HEADER = b"SQLite format 3\x00"


def check_store_file(path: Path) -> None:
    """Refuse, before opening it, a path that cannot be a judgments store: missing, a folder,
    empty, or not a SQLite database. Opening with sqlite3 alone would first change such a file
    (switch it to WAL, grow it to a page); the schema is checked next, read-only."""
    if not path.exists():
        raise InputError([f"{path}: no such judgments store (build one with `workbench pool`)"])
    if path.is_dir():
        raise InputError([f"{path}: is a folder, expected a judgments store file"])
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise InputError([f"{path}: cannot read ({exc.strerror})"]) from None
    if not header:
        raise InputError([f"{path}: is empty, not a workbench judgments store"])
    if header != SQLITE_HEADER:
        raise InputError([f"{path}: not a workbench judgments store (not a SQLite file)"])
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            rows = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchall()
            if rows:
                rows = conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise InputError([f"{path}: not a workbench judgments store ({exc})"]) from None
    if not rows:
        raise InputError([f"{path}: a SQLite file, but not a workbench judgments store"])


def _create_store_file(path: Path) -> None:
    """Build an empty store (schema and meta) under a temporary name beside `path`, then link
    it into place: a kill at any moment leaves either no store or a whole one, and a file that
    appeared meanwhile is never replaced."""
    from workbench.formats.atomic import sweep_dead_temps, temp_beside

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sweep_dead_temps(path)
        tmp = temp_beside(path)
    except OSError as exc:
        raise InputError([f"{path}: cannot create the store ({exc.strerror or exc})"]) from None
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(
                "BEGIN;"
                + SCHEMA
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


def _text_row(cursor: sqlite3.Cursor, row: tuple) -> tuple:
    """Every row as written by workbench: text, numbers or NULL; a BLOB (someone else's
    writing) is refused here rather than passed on as bytes where an id should be."""
    if bytes in map(type, row):
        raise sqlite3.DataError("a value is binary (BLOB) where workbench writes text")
    return row


class Store:
    """A judgments store. Safe to share across threads of one process (one lock) and across
    processes (SQLite WAL, busy timeout, retries)."""

    def __init__(self, path: str | Path, *, create: bool = False):
        self.path = Path(path)
        self._lock = threading.RLock()
        self._sharing_ready = False
        if self.path.exists() or not create:
            check_store_file(self.path)  # before any write: someone else's file stays as it was
        else:
            _create_store_file(self.path)
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.row_factory = _text_row
            self._check_schema()
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            if create:
                self._write(self._ensure_sharing)
        except sqlite3.DatabaseError as exc:
            raise InputError([f"{self.path}: not a workbench judgments store ({exc})"]) from exc

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
            return _retry(attempt)
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None

    def _read(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        try:
            with self._lock:
                return _retry(lambda: self._conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: sqlite3.Error) -> InputError:
        """A store that holds what no workbench wrote (a missing table, undecodable text): an
        InputError naming it, never a traceback."""
        if _is_busy(exc):
            return InputError(
                [f"{self.path}: busy: another process held its lock too long ({exc}); try again"]
            )
        return InputError([f"{self.path}: damaged or not a workbench judgments store ({exc})"])

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

    # -- pool ----------------------------------------------------------------------------------

    def add_queries(self, queries: Iterable[Query]) -> int:
        """Insert queries not already present (existing ones keep their text and order)."""
        queries = list(queries)

        def insert(conn: sqlite3.Connection) -> int:
            start = conn.execute("SELECT COALESCE(MAX(ordinal), -1) + 1 FROM queries").fetchone()[0]
            before = conn.total_changes
            for offset, q in enumerate(queries):
                conn.execute(
                    "INSERT OR IGNORE INTO queries VALUES (?, ?, ?, ?)",
                    (q.query_id, start + offset, q.text, q.narrative),
                )
            return conn.total_changes - before

        return self._write(insert)

    def add_docs(self, docs: Iterable[Doc]) -> int:
        """Insert passages exactly as annotators will see them; existing ones are never changed."""
        rows = [(d.doc_id, d.text, d.title) for d in docs]

        def insert(conn: sqlite3.Connection) -> int:
            before = conn.total_changes
            conn.executemany("INSERT OR IGNORE INTO docs VALUES (?, ?, ?)", rows)
            return conn.total_changes - before

        return self._write(insert)

    def record_pooling(
        self, systems: list[str], depth: int, strategy: str, seed: int | None, params: dict
    ) -> int:
        def insert(conn: sqlite3.Connection) -> int:
            cur = conn.execute(
                "INSERT INTO poolings (created_at, systems, depth, strategy, seed, params)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), json.dumps(systems), depth, strategy, seed, json.dumps(params)),
            )
            return _row_id(cur)

        return self._write(insert)

    def poolings(self) -> list[dict]:
        rows = self._read(
            "SELECT pooling_id, created_at, systems, depth, strategy, seed, params"
            " FROM poolings ORDER BY pooling_id"
        )
        return [
            {
                "pooling_id": r[0],
                "created_at": r[1],
                "systems": json.loads(r[2]),
                "depth": r[3],
                "strategy": r[4],
                "seed": r[5],
                "params": json.loads(r[6]),
            }
            for r in rows
        ]

    def add_pool_entries(self, entries: Iterable[PoolEntry], pooling_id: int | None = None) -> int:
        """Add new items after the existing ones of their query; existing items keep their
        position. Provenance of existing items is extended. Returns the number of new items."""
        entries = list(entries)
        now = time.time()

        def insert(conn: sqlite3.Connection) -> int:
            next_position: dict[str, int] = {}
            new = 0
            for e in entries:
                if e.query_id not in next_position:
                    next_position[e.query_id] = conn.execute(
                        "SELECT COALESCE(MAX(position), -1) + 1 FROM pool WHERE query_id = ?",
                        (e.query_id,),
                    ).fetchone()[0]
                cur = conn.execute(
                    "INSERT OR IGNORE INTO pool VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
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
                        "INSERT OR REPLACE INTO provenance VALUES (?, ?, ?, ?, ?)",
                        (e.query_id, e.doc_id, p.system, p.rank, p.score),
                    )
                for alias in e.aliases:
                    conn.execute("INSERT OR IGNORE INTO aliases VALUES (?, ?)", (alias, e.doc_id))
            return new

        return self._write(insert)

    def queries(self) -> list[Query]:
        rows = self._read("SELECT query_id, text, narrative FROM queries ORDER BY ordinal")
        return [Query(*r) for r in rows]

    def pool_doc_ids(self) -> set[str]:
        """Every doc id queued for some query (the canonical ids of the pool)."""
        return {r[0] for r in self._read("SELECT DISTINCT doc_id FROM pool")}

    def doc(self, doc_id: str) -> Doc | None:
        rows = self._read("SELECT doc_id, text, title FROM docs WHERE doc_id = ?", (doc_id,))
        return Doc(*rows[0]) if rows else None

    def docs(self, doc_ids: Iterable[str]) -> dict[str, Doc]:
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, Doc] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self._read(
                f"SELECT doc_id, text, title FROM docs WHERE doc_id IN ({marks})", chunk
            ):
                found[r[0]] = Doc(*r)
        return found

    def aliases(self) -> dict[str, str]:
        """alias doc id -> canonical doc id (the one annotators judge)."""
        return dict(self._read("SELECT alias_id, canonical_id FROM aliases ORDER BY alias_id"))

    def pool(self, query_id: str | None = None) -> list[PoolEntry]:
        """The judging queue: queries in their order, items by position."""
        where, params = ("WHERE p.query_id = ?", (query_id,)) if query_id else ("", ())
        rows = self._read(
            "SELECT p.query_id, p.doc_id, p.position, p.fused_score, p.stratum, p.inclusion_prob"
            " FROM pool p JOIN queries q ON q.query_id = p.query_id "
            f"{where} ORDER BY q.ordinal, p.position",
            params,
        )
        provenance: dict[tuple[str, str], list[Provenance]] = {}
        prov_where = "WHERE query_id = ?" if query_id else ""
        for qid, did, system, rank, score in self._read(
            f"SELECT query_id, doc_id, system, rank, score FROM provenance {prov_where}"
            " ORDER BY system",
            params,
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

    # -- judgments -----------------------------------------------------------------------------

    def add_annotator(self, name: str, role: str = Role.HUMAN) -> None:
        self._write(
            lambda c: c.execute(
                "INSERT OR IGNORE INTO annotators VALUES (?, ?, ?)", (name, role, time.time())
            )
        )

    def annotators(self) -> dict[str, str]:
        """name -> role."""
        return dict(self._read("SELECT name, role FROM annotators ORDER BY name"))

    def add_judgment(self, judgment: Judgment) -> int:
        """Append one row and commit it (synchronous=FULL) before returning its id."""
        scale = self.grade_scale()
        if judgment.grade is not None and judgment.grade not in scale:
            raise InputError(
                [f"grade {judgment.grade} is outside the store's scale {sorted(scale)}"]
            )

        def insert(conn: sqlite3.Connection) -> int:
            now = time.time()
            conn.execute(
                "INSERT OR IGNORE INTO annotators VALUES (?, ?, ?)",
                (judgment.annotator, judgment.role, now),
            )
            return _row_id(conn.execute(INSERT_JUDGMENT, _judgment_row(judgment, now)))

        return self._write(insert)

    def add_judgments(
        self, judgments: Iterable[Judgment], meta: dict[str, str] | None = None
    ) -> int:
        """Append many rows (and optional meta entries) in one transaction: all or nothing, for
        imports. Every grade is checked against the scale before anything is written."""
        rows = list(judgments)
        scale = self.grade_scale()
        bad = sorted({j.grade for j in rows if j.grade is not None and j.grade not in scale})
        if bad:
            raise InputError([f"grades {bad} are outside the store's scale {sorted(scale)}"])
        now = time.time()

        def insert(conn: sqlite3.Connection) -> int:
            for j in rows:
                conn.execute(
                    "INSERT OR IGNORE INTO annotators VALUES (?, ?, ?)", (j.annotator, j.role, now)
                )
            conn.executemany(INSERT_JUDGMENT, [_judgment_row(j, now) for j in rows])
            for key, value in (meta or {}).items():
                conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
            return len(rows)

        return self._write(insert)

    def judgments(self, annotator: str | None = None) -> list[Judgment]:
        """Every row, oldest first (the full history)."""
        where, params = ("WHERE annotator = ?", (annotator,)) if annotator else ("", ())
        rows = self._read(
            "SELECT annotator, query_id, doc_id, grade, note, shown_at, graded_at, elapsed_ms,"
            f" app_version, role FROM judgments {where} ORDER BY judgment_id",
            params,
        )
        return [Judgment(*r) for r in rows]

    def current_judgments(self, annotator: str | None = None) -> list[Judgment]:
        """The latest row of each (annotator, query, doc), leaving out pairs whose latest row is
        an undo (grade None)."""
        where, params = ("WHERE annotator = ?", (annotator,)) if annotator else ("", ())
        rows = self._read(
            "SELECT annotator, query_id, doc_id, grade, note, shown_at, graded_at, elapsed_ms,"
            " app_version, role FROM judgments WHERE judgment_id IN ("
            f" SELECT MAX(judgment_id) FROM judgments {where}"
            " GROUP BY annotator, query_id, doc_id) AND grade IS NOT NULL ORDER BY judgment_id",
            params,
        )
        return [Judgment(*r) for r in rows]

    # -- sharing the pool: required judges per item, claims ------------------------------------

    def _ensure_sharing(self, conn: sqlite3.Connection) -> None:
        """Create the sharing tables inside the current write transaction (once per store)."""
        if not self._sharing_ready:
            for statement in SHARING_SCHEMA:
                conn.execute(statement)
            self._sharing_ready = True

    def _has_table(self, name: str) -> bool:
        return bool(
            self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        )

    def required_judges(self) -> dict[tuple[str, str], int]:
        """(query_id, doc_id) -> distinct human judges the item needs, for items marked with
        more than the default of 1 (see `workbench assign`)."""
        if not self._has_table("assignments"):
            return {}
        rows = self._read("SELECT query_id, doc_id, required FROM assignments")
        return {(q, d): int(r) for q, d, r in rows}

    def set_required_judges(self, required: dict[tuple[str, str], int]) -> int:
        """Raise items' required judges (never lowers one); returns the number of items changed."""
        now = time.time()

        def upsert(conn: sqlite3.Connection) -> int:
            self._ensure_sharing(conn)
            before = conn.total_changes
            conn.executemany(
                "INSERT INTO assignments VALUES (?, ?, ?, ?) ON CONFLICT (query_id, doc_id)"
                " DO UPDATE SET required = excluded.required, assigned_at = excluded.assigned_at"
                " WHERE excluded.required > assignments.required",
                [(q, d, int(r), now) for (q, d), r in sorted(required.items())],
            )
            return conn.total_changes - before

        return self._write(upsert)

    def claim(self, annotator: str, query_id: str, doc_id: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        """Take the item for `annotator` if it still needs a judge: fewer distinct other human
        annotators have judged it or hold a live claim on it than it requires. One transaction,
        so two annotators never both win the last place. An annotator holds one claim at a
        time: a won claim replaces their previous one; a lost claim releases it."""
        now = time.time()

        def attempt(conn: sqlite3.Connection) -> bool:
            self._ensure_sharing(conn)
            required = conn.execute(
                "SELECT required FROM assignments WHERE query_id = ? AND doc_id = ?",
                (query_id, doc_id),
            ).fetchone()
            judges = {
                name
                for name, role, grade in conn.execute(
                    "SELECT annotator, role, grade FROM judgments WHERE judgment_id IN ("
                    " SELECT MAX(judgment_id) FROM judgments WHERE query_id = ? AND doc_id = ?"
                    " GROUP BY annotator)",
                    (query_id, doc_id),
                )
                if role == Role.HUMAN and grade is not None and name != annotator
            }
            judges.update(
                name
                for (name,) in conn.execute(
                    "SELECT annotator FROM claims WHERE query_id = ? AND doc_id = ?"
                    " AND annotator != ? AND claimed_at > ?",
                    (query_id, doc_id, annotator, now - ttl_s),
                )
            )
            if len(judges) >= (int(required[0]) if required else 1):
                conn.execute("DELETE FROM claims WHERE annotator = ?", (annotator,))
                return False
            conn.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)",
                (annotator, query_id, doc_id, now),
            )
            return True

        return self._write_light(attempt)

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

    def renew_claim(self, annotator: str) -> bool:
        """Keep the annotator's claim alive (the app is still open); False when they hold none."""
        if not self._has_table("claims"):
            return False
        now = time.time()
        return bool(
            self._write(
                lambda c: (
                    c.execute(
                        "UPDATE claims SET claimed_at = ? WHERE annotator = ?", (now, annotator)
                    ).rowcount
                )
            )
        )

    def release_claim(self, annotator: str) -> None:
        if self._has_table("claims"):
            self._write(lambda c: c.execute("DELETE FROM claims WHERE annotator = ?", (annotator,)))

    def claims(self, ttl_s: float = CLAIM_TTL_S) -> dict[str, tuple[str, str]]:
        """annotator -> the (query_id, doc_id) they have open, live claims only."""
        if not self._has_table("claims"):
            return {}
        rows = self._read(
            "SELECT annotator, query_id, doc_id FROM claims WHERE claimed_at > ?"
            " ORDER BY annotator",
            (time.time() - ttl_s,),
        )
        return {name: (q, d) for name, q, d in rows}

    def last_judgment_id(self) -> int:
        return int(self._read("SELECT COALESCE(MAX(judgment_id), 0) FROM judgments")[0][0])

    def judgments_since(self, after_id: int) -> tuple[int, list[Judgment]]:
        """(the last id, the rows after `after_id` oldest first): what changed since a look."""
        rows = self._read(
            "SELECT judgment_id, annotator, query_id, doc_id, grade, note, shown_at, graded_at,"
            " elapsed_ms, app_version, role FROM judgments WHERE judgment_id > ?"
            " ORDER BY judgment_id",
            (after_id,),
        )
        last = rows[-1][0] if rows else after_id
        return int(last), [Judgment(*r[1:]) for r in rows]
