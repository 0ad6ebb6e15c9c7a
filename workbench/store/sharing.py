"""Sharing one pool among annotators: the distinct human judges each item requires (absent = 1)
and the item each annotator has open (a claim), decided in one transaction so two annotators
never both win the last place."""

from __future__ import annotations

import time

from workbench.core.model import Role
from workbench.store.core import StoreCore, Tx
from workbench.store.rows import positive_integer, text, typed
from workbench.store.schema import CLAIM_TTL_S


class SharingTables(StoreCore):
    """Required judges per item and live claims; their tables are created when first written."""

    def required_judges(self) -> dict[tuple[str, str], int]:
        """(query_id, doc_id) -> distinct human judges the item needs, for items marked with
        more than the default of 1 (see `workbench assign`)."""
        if not self._has_table("assignments"):
            return {}
        rows = self._read("SELECT query_id, doc_id, required FROM assignments")
        columns = (("query_id", text), ("doc_id", text), ("required", positive_integer))
        return {(q, d): r for q, d, r in typed(self.location, "assignments", columns, rows, key=2)}

    def set_required_judges(self, required: dict[tuple[str, str], int]) -> int:
        """Raise items' required judges (never lowers one); returns the number of items changed."""
        now = time.time()

        def upsert(tx: Tx) -> int:
            self._ensure_sharing(tx)
            return sum(
                tx.execute(
                    "INSERT INTO assignments VALUES (?, ?, ?, ?) ON CONFLICT (query_id, doc_id)"
                    " DO UPDATE SET required = excluded.required,"
                    " assigned_at = excluded.assigned_at"
                    " WHERE excluded.required > assignments.required",
                    (q, d, int(r), now),
                ).rowcount
                for (q, d), r in sorted(required.items())
            )

        return self._write(upsert)

    def claim(self, annotator: str, query_id: str, doc_id: str, ttl_s: float = CLAIM_TTL_S) -> bool:
        """Take the item for `annotator` if it still needs a judge: fewer distinct other human
        annotators have judged it or hold a live claim on it than it requires. One transaction,
        so two annotators never both win the last place. An annotator holds one claim at a
        time: a won claim replaces their previous one; a lost claim releases it."""
        now = time.time()

        def attempt(conn: Tx) -> bool:
            self._ensure_sharing(conn)
            required = conn.execute(
                "SELECT required FROM assignments WHERE query_id = ? AND doc_id = ?",
                (query_id, doc_id),
            ).fetchone()
            judged = self._judged_items()  # no grade read: an annotator's login may not
            judges = {
                name
                for name, role, graded in conn.execute(
                    f"SELECT annotator, role, graded FROM {judged} WHERE judgment_id IN ("
                    f" SELECT MAX(judgment_id) FROM {judged} WHERE query_id = ? AND doc_id = ?"
                    " GROUP BY annotator)",
                    (query_id, doc_id),
                )
                if role == Role.HUMAN and graded and name != annotator
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
                "INSERT INTO claims VALUES (?, ?, ?, ?) ON CONFLICT (annotator) DO UPDATE"
                " SET query_id = excluded.query_id, doc_id = excluded.doc_id,"
                " claimed_at = excluded.claimed_at",
                (annotator, query_id, doc_id, now),
            )
            return True

        return self._write_light(attempt)

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
