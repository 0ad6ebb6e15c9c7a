"""What the table groups of both backends stand on: `Tx`, the statements of one transaction in
the one SQL dialect SQLite and PostgreSQL both accept (`?` placeholders, `ON CONFLICT`,
`RETURNING`), and `StoreCore`, the meta table and the hooks each backend fills: how a write
transaction runs, how a read runs, which optional tables exist."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from workbench.core.errors import InputError
from workbench.core.model import DEFAULT_GRADE_SCALE
from workbench.formats.textio import plain_int
from workbench.store.schema import SCHEMA_VERSION

T = TypeVar("T")

UPSERT_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Any: ...


class Tx(Protocol):
    """One write transaction's statements (a sqlite3 connection, or psycopg's behind a
    placeholder translation)."""

    def execute(self, sql: str, params: Sequence[object] = ...) -> Cursor: ...
    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> Cursor: ...


def inserted_id(cursor: Cursor) -> int:
    """The id an `INSERT ... RETURNING <id>` just added."""
    row = cursor.fetchone()
    assert row is not None, "INSERT added no row"
    return int(row[0])


@dataclass(frozen=True)
class Login:
    """An annotator's own PostgreSQL login (`workbench.store.pg_logins`), one row of a store's
    `workbench_logins`: the role `login` writes as `annotator` in `role`."""

    login: str
    annotator: str
    role: str


class StoreCore:
    """The meta table, and the hooks the table groups (pool, judgments, sharing, draws) call;
    `workbench.store.sqlite.Store` and `workbench.store.postgres.PostgresStore` fill them."""

    location: str
    """How messages name the store: a path, or a URL with any password masked."""
    _versions_ready = False
    """Seen to hold schema 2's judge versions (a store never loses them once it has them)."""
    _COLUMN_EXISTS: str
    """SQL with placeholders (table, column) giving a row when the column exists."""
    _VERSIONS_UPGRADE: tuple[str, ...]
    """The backend's statements from schema 1 to 2."""

    def _write(self, statements: Callable[[Tx], T]) -> T:
        """Run `statements` in one transaction that no other writer interleaves with, committed
        (durably) before returning."""
        raise NotImplementedError

    def _write_light(self, statements: Callable[[Tx], T]) -> T:
        """A write whose loss in a crash costs nothing (claims): committed, not synced."""
        raise NotImplementedError

    def _read(self, sql: str, params: Iterable[object] = ()) -> list[tuple]:
        raise NotImplementedError

    def _has_table(self, name: str) -> bool:
        raise NotImplementedError

    def _ensure_sharing(self, tx: Tx) -> None:
        """Create the sharing tables (assignments, claims) inside `tx` when the store lacks
        them."""
        raise NotImplementedError

    def _ensure_draws(self, tx: Tx) -> None:
        """Create the draws table inside `tx` when the store lacks it."""
        raise NotImplementedError

    def _ensure_llm(self, tx: Tx) -> None:
        """Create the llm_answers table inside `tx` when the store lacks it."""
        raise NotImplementedError

    def _ensure_design(self, tx: Tx) -> None:
        """Create the design tables inside `tx` when the store lacks them."""
        raise NotImplementedError

    def _ensure_spans(self, tx: Tx) -> None:
        """Create the doc_spans table inside `tx` when the store lacks it."""
        raise NotImplementedError

    def _has_versions(self) -> bool:
        """Whether the store records judge versions (schema 2); a schema-1 store reads as one
        whose every label has an unknown version until a versioned label is written."""
        if not self._versions_ready:
            self._versions_ready = bool(
                self._read(self._COLUMN_EXISTS, ("judgments", "judge_version"))
            )
        return self._versions_ready

    def _ensure_versions(self, tx: Tx) -> None:
        """Bring a schema-1 store to schema 2 inside `tx` (another writer may have done so
        meanwhile: checked inside the transaction)."""
        if self._versions_ready:
            return
        if tx.execute(self._COLUMN_EXISTS, ("judgments", "judge_version")).fetchone() is None:
            for statement in self._VERSIONS_UPGRADE:
                tx.execute(statement)
        row = tx.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or plain_int(str(row[0])) != SCHEMA_VERSION:
            tx.execute(UPSERT_META, ("schema_version", str(SCHEMA_VERSION)))

    holds_logins = False
    """Whether annotators' own logins can be made for this store (PostgreSQL)."""

    def logins(self) -> list[Login]:
        """Every annotator's own login of this store (`workbench.store.pg_logins`)."""
        return []

    def restore_logins(self, tx: Tx, logins: list[Login]) -> list[Login]:
        """Make another store's `logins` this store's too, inside `tx`; returns those it could
        not (all, here: a SQLite file has no logins)."""
        return list(logins)

    def own_login(self) -> Login | None:
        """The annotator whose own login this connection is (PostgreSQL); None otherwise."""
        return None

    def can_act_as(self, login: str) -> bool:
        """Whether this connection may take `login`'s role (the served app's `SET ROLE`)."""
        return False

    def _judged_items(self) -> str:
        """A FROM item of who judged which item, without grades: (judgment_id, annotator, role,
        query_id, doc_id, graded)."""
        return (
            "(SELECT judgment_id, annotator, role, query_id, doc_id, grade IS NOT NULL AS graded"
            " FROM judgments) AS judged"
        )

    def _insert_judgment(self, tx: Tx, judgment: Any) -> int:
        """Add one judgment row inside `tx` (`workbench.store.judgments`)."""
        raise NotImplementedError

    def _insert_draws(self, tx: Tx, draws: list[Any], annotator: str) -> int:
        """Add draws inside `tx` (`workbench.store.draws`; a store composes it)."""
        raise NotImplementedError

    def _after_ids(self, tx: Tx, ids: dict[str, str]) -> None:
        """After rows were written with their own ids (table -> id column): the ids the store
        hands out next come after them. SQLite's AUTOINCREMENT does so by itself."""

    def _check_version(self, raw: str | None) -> None:
        if raw is None:
            raise InputError(
                [f"{self.location}: not a workbench judgments store (no schema_version)"]
            )
        version = plain_int(str(raw))
        if version is None or version < 1:
            raise InputError([f"{self.location}: schema version {str(raw)[:20]!r} is not a number"])
        if version > SCHEMA_VERSION:
            raise InputError(
                [f"{self.location}: schema version {version} is newer than this workbench supports"]
            )

    # -- meta ----------------------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else default

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda tx: tx.execute(UPSERT_META, (key, value)))

    def grade_scale(self) -> dict[int, str]:
        raw = self.get_meta("grade_scale")
        try:
            scale = json.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            scale = None
        if not isinstance(scale, dict) or not all(
            isinstance(w, str) and plain_int(g) is not None for g, w in scale.items()
        ):
            raise InputError([f"{self.location}: meta 'grade_scale' is not a grade -> wording map"])
        return {int(g): w for g, w in scale.items()} or dict(DEFAULT_GRADE_SCALE)

    def set_grade_scale(self, scale: dict[int, str]) -> None:
        self.set_meta("grade_scale", json.dumps({str(g): w for g, w in sorted(scale.items())}))

    def corpus_size(self) -> int:
        raw = self.get_meta("corpus_size", "0") or "0"
        size = plain_int(raw)
        if size is None or size < 0:
            raise InputError([f"{self.location}: meta 'corpus_size' {raw[:20]!r} is not a count"])
        return size
