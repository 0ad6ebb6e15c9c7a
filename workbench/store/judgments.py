"""Judgments in the store: append-only rows (a regrade or an undo is a new row, never an update),
the current grade of (annotator, query, doc) being its latest row; and the annotators."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from workbench import __version__
from workbench.core.adaptive.estimate import Draw
from workbench.core.errors import InputError, quoted
from workbench.core.judgments.judge_versions import IDENTITY_FIELDS, JudgeIdentity
from workbench.core.judgments.labels import OUTSIDE_POOL
from workbench.core.model import HUMAN_ROLES, Judgment, Role, outside_scale
from workbench.store.core import UPSERT_META, StoreCore, Tx, inserted_id
from workbench.store.rows import integer, optional_integer, real, text, typed

INSERT_JUDGMENT = (
    "INSERT INTO judgments (annotator, role, query_id, doc_id, grade, note, shown_at,"
    " graded_at, elapsed_ms, app_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""A person's judgment: the columns of schema 1, so an annotator never needs schema 2."""
INSERT_VERSIONED = (
    "INSERT INTO judgments (annotator, role, query_id, doc_id, grade, note, shown_at,"
    " graded_at, elapsed_ms, app_version, judge_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""A judge's judgment, naming its version (schema 2)."""
POOLED_ITEM = (
    "EXISTS (SELECT 1 FROM {pool} AS p WHERE p.query_id = {item}.query_id"
    " AND p.doc_id = {item}.doc_id) OR EXISTS (SELECT 1 FROM {aliases} AS a JOIN {pool} AS p"
    " ON p.doc_id = a.canonical_id WHERE a.alias_id = {item}.doc_id"
    " AND p.query_id = {item}.query_id)"
)
"""Whether the row `item` names a pooled item (a copy of a pooled passage, an alias, is one):
the rule both the readers here and an annotator's own login (`pg_logins`) hold rows to."""
UNSOUND_NAMED = 5
"""Rows no command writes named in one message; the rest are counted."""
NO_GRADE = -(2**31)
"""Stands for an undo's missing grade where rows are compared."""
ADD_ANNOTATOR = "INSERT INTO annotators VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
JUDGMENT_COLUMNS = (
    ("judgment_id", integer), ("annotator", text), ("query_id", text), ("doc_id", text),
    ("grade", optional_integer), ("note", text), ("shown_at", real), ("graded_at", real),
    ("elapsed_ms", integer), ("app_version", text), ("role", text), ("judge_version", text),
)  # fmt: skip
"""A judgments row as read: what each value must be (`workbench.store.rows`)."""


def _judgment_row(j: Judgment, now: float, versioned: bool = False) -> tuple:
    """The judgments row of `j` (with its judge version for `INSERT_VERSIONED`); an unset
    graded_at or app_version means now and this version."""
    row = (
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
    return (*row, j.judge_version) if versioned else row


def _check_recorded(tx: Tx, rows: list[Judgment]) -> None:
    """Every judge version the rows name is recorded (`record_judge`), so a label's version
    always has its identity."""
    for name, version in dict.fromkeys((j.annotator, j.judge_version) for j in rows):
        if (
            version
            and not tx.execute(
                "SELECT 1 FROM judge_versions WHERE annotator = ? AND version = ?", (name, version)
            ).fetchone()
        ):
            raise InputError([f"judge {name}: version {version} was never recorded"])


def refuse_outside_scale(grades: list[int | None], scale: Mapping[int, str]) -> None:
    """Raise, naming them, when any grade is outside the scale (`outside_scale`); one row's
    grade is said as one, a batch's as a list."""
    bad = outside_scale(grades, scale)
    if bad and len(grades) == 1:
        raise InputError([f"grade {bad[0]} is outside the store's scale {sorted(scale)}"])
    if bad:
        raise InputError([f"grades {bad} are outside the store's scale {sorted(scale)}"])


class JudgmentTables(StoreCore):
    """Annotators and judgments; every write checked against the store's grade scale."""

    def add_annotator(self, name: str, role: str = Role.HUMAN) -> None:
        self._write(lambda tx: tx.execute(ADD_ANNOTATOR, (name, role, time.time())))

    def annotators(self) -> dict[str, str]:
        """name -> role."""
        rows = self._read("SELECT name, role FROM annotators ORDER BY name")
        return dict(typed(self.location, "annotators", (("name", text), ("role", text)), rows))

    def add_judgment(self, judgment: Judgment, draw: Draw | None = None) -> int:
        """Append one row (with the adaptive queue's draw that served it, if any) and commit
        both before returning the row's id. Idempotent for a stamped judgment: a retry after a
        lost connection, when the first try had in fact committed, finds that row (same
        annotator, item, grade and graded_at) and adds nothing."""
        refuse_outside_scale([judgment.grade], self.grade_scale())

        def insert(tx: Tx) -> int:
            if judgment.graded_at:
                same = tx.execute(
                    "SELECT judgment_id FROM judgments WHERE annotator = ? AND query_id = ?"
                    " AND doc_id = ? AND graded_at = ? AND COALESCE(grade, ?) = ?",
                    (
                        judgment.annotator,
                        judgment.query_id,
                        judgment.doc_id,
                        judgment.graded_at,
                        NO_GRADE,
                        NO_GRADE if judgment.grade is None else judgment.grade,
                    ),
                ).fetchone()
                if same is not None:
                    return int(same[0])
            added = self._insert_judgment(tx, judgment)
            if draw is not None:
                self._insert_draws(tx, [draw], judgment.annotator)
            return added

        return self._write(insert)

    def _insert_judgment(self, tx: Tx, judgment: Judgment) -> int:
        now = time.time()
        tx.execute(ADD_ANNOTATOR, (judgment.annotator, judgment.role, now))
        versioned = bool(judgment.judge_version)
        if versioned:
            self._ensure_versions(tx)
            _check_recorded(tx, [judgment])
        insert = INSERT_VERSIONED if versioned else INSERT_JUDGMENT
        cursor = tx.execute(
            insert + " RETURNING judgment_id", _judgment_row(judgment, now, versioned)
        )
        return inserted_id(cursor)

    def add_judgments(
        self, judgments: Iterable[Judgment], meta: dict[str, str] | None = None
    ) -> int:
        """Append many rows (and optional meta entries) in one transaction: all or nothing, for
        imports. Every grade is checked against the scale before anything is written."""
        rows = list(judgments)
        refuse_outside_scale([j.grade for j in rows], self.grade_scale())
        now = time.time()
        versioned = any(j.judge_version for j in rows)

        def insert(tx: Tx) -> int:
            if versioned:
                self._ensure_versions(tx)
                _check_recorded(tx, rows)
            for name, role in dict.fromkeys((j.annotator, j.role) for j in rows):
                tx.execute(ADD_ANNOTATOR, (name, role, now))
            tx.executemany(
                INSERT_VERSIONED if versioned else INSERT_JUDGMENT,
                [_judgment_row(j, now, versioned) for j in rows],
            )
            for key, value in (meta or {}).items():
                tx.execute(UPSERT_META, (key, value))
            return len(rows)

        return self._write(insert)

    def record_judge(self, name: str, identity: JudgeIdentity) -> str:
        """Record one version of a non-human judge (once; bringing a schema-1 store to schema
        2) and return the version its judgments carry."""
        version = identity.version

        def insert(tx: Tx) -> None:
            self._ensure_versions(tx)
            tx.execute(
                "INSERT INTO judge_versions VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (name, version, *(getattr(identity, f) for f in IDENTITY_FIELDS), time.time()),
            )

        self._write(insert)
        self._versions_ready = True
        return version

    def judge_versions(self) -> dict[str, dict[str, JudgeIdentity]]:
        """judge name -> version -> identity, oldest first ({} in a store that never recorded
        one)."""
        if not self._has_table("judge_versions"):
            return {}
        rows = self._read(
            f"SELECT annotator, version, {', '.join(IDENTITY_FIELDS)} FROM judge_versions"
            " ORDER BY annotator, recorded_at, version"
        )
        out: dict[str, dict[str, JudgeIdentity]] = {}
        for name, version, *fields in rows:
            out.setdefault(str(name), {})[str(version)] = JudgeIdentity(*map(str, fields))
        return out

    def _judge_version_column(self) -> str:
        """The select-list entry of a judgment's version: '' in a schema-1 store."""
        return "judge_version" if self._has_versions() else "'' AS judge_version"

    def _judgment_rows(self, tail: str, params: tuple = ()) -> list[tuple[int, Judgment]]:
        """(judgment_id, judgment) of the rows `tail` (WHERE ... ORDER BY ...) selects, each
        value checked (`JUDGMENT_COLUMNS`)."""
        rows = self._read(
            "SELECT judgment_id, annotator, query_id, doc_id, grade, note, shown_at, graded_at,"
            f" elapsed_ms, app_version, role, {self._judge_version_column()} FROM judgments"
            f" {tail}",
            params,
        )
        return [
            (r[0], Judgment(*r[1:]))
            for r in typed(self.location, "judgments", JUDGMENT_COLUMNS, rows)
        ]

    def judgments(self, annotator: str | None = None) -> list[Judgment]:
        """Every row, oldest first (the full history)."""
        where, params = ("WHERE annotator = ?", (annotator,)) if annotator else ("", ())
        return [j for _, j in self._judgment_rows(f"{where} ORDER BY judgment_id", params)]

    def current_judgments(self, annotator: str | None = None) -> list[Judgment]:
        """The latest row of each (annotator, query, doc), leaving out pairs whose latest row is
        an undo (grade None). A row no workbench command writes is refused by name
        (`_refuse_unsound`): every figure rests on these rows."""
        where, params = ("WHERE annotator = ?", (annotator,)) if annotator else ("", ())
        current = (
            "WHERE judgment_id IN ("
            f" SELECT MAX(judgment_id) FROM judgments {where}"
            " GROUP BY annotator, query_id, doc_id) AND grade IS NOT NULL"
        )
        rows = self._judgment_rows(f"{current} ORDER BY judgment_id", params)
        self._refuse_unsound(rows, current, params)
        return [j for _, j in rows]

    def _refuse_unsound(
        self, rows: list[tuple[int, Judgment]], current: str, params: tuple
    ) -> None:
        """Name the current rows that no command writes (a grade outside the study's scale; in a
        pooled store, a person's grade of an item outside the pool that was not imported as
        such; an alias of a pooled passage counts as pooled): written past workbench's checks
        (by the owner's or a shared login, by hand), they would count as evidence."""
        scale = self.grade_scale()
        bad = {i: f"grade {j.grade} is outside the study's scale {sorted(scale)}"
               for i, j in rows if j.grade not in scale}  # fmt: skip
        if self._read("SELECT 1 FROM pool LIMIT 1"):  # a pooled store
            pooled = POOLED_ITEM.format(item="judgments", pool="pool", aliases="aliases")
            outside = self._read(
                f"SELECT judgment_id FROM judgments {current}"
                f" AND role IN ({', '.join('?' * len(HUMAN_ROLES))}) AND NOT ({pooled})"
                f" AND note <> ? AND substr(note, 1, {len(OUTSIDE_POOL) + 1}) <> ?",
                (*params, *sorted(map(str, HUMAN_ROLES)), OUTSIDE_POOL, OUTSIDE_POOL + ";"),
            )
            for (judgment_id,) in outside:
                bad.setdefault(judgment_id, "its item is not in the pool")
        if not bad:
            return
        by_id = dict(rows)
        named = [
            f"{self.location}: judgments row {i} (annotator {quoted(by_id[i].annotator)}, query"
            f" {quoted(by_id[i].query_id)}, passage {quoted(by_id[i].doc_id)}): {bad[i]}"
            for i in sorted(bad)[:UNSOUND_NAMED]
        ]
        if len(bad) > UNSOUND_NAMED:
            named.append(f"{self.location}: ... and {len(bad) - UNSOUND_NAMED} more such rows")
        named.append(
            f"{self.location}: no workbench command writes such rows (they came past its checks:"
            " the owner's login, a shared login, an edit by hand); a later row of that annotator"
            " for the item replaces each (docs/team.md, 'A row no command wrote')"
        )
        raise InputError(named)

    def last_judgment_id(self) -> int:
        return int(self._read("SELECT COALESCE(MAX(judgment_id), 0) FROM judgments")[0][0])

    def judgments_since(self, after_id: int) -> tuple[int, list[Judgment]]:
        """(the last id, the rows after `after_id` oldest first): what changed since a look."""
        rows = self._judgment_rows("WHERE judgment_id > ? ORDER BY judgment_id", (after_id,))
        last = rows[-1][0] if rows else after_id
        return int(last), [j for _, j in rows]
