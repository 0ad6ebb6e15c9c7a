"""The served app's tokens (`workbench serve token`): one row per annotator holding the hash of
their live token (`workbench.core.serve_tokens`), its role, and when it was made or revoked.
Created by the first token written, so a store made before it opens unchanged. Not copied by
`store copy`: a copy of a study gets tokens of its own."""

from __future__ import annotations

import time

from workbench.core.serve_tokens import TokenHolder
from workbench.store.core import StoreCore, Tx

TOKENS_TABLE = "serve_tokens"


class TokenTables(StoreCore):
    """The serve_tokens table."""

    def _ensure_tokens(self, tx: Tx) -> None:
        """Create the serve_tokens table inside `tx` when the store lacks it."""
        raise NotImplementedError

    def set_serve_token(self, annotator: str, role: str, hashed: str) -> None:
        """Make `hashed` the annotator's live token (a rotation: the previous one stops working)."""

        def write(tx: Tx) -> None:
            self._ensure_tokens(tx)
            tx.execute(
                "INSERT INTO serve_tokens (annotator, role, token_hash, created_at, revoked_at)"
                " VALUES (?, ?, ?, ?, NULL) ON CONFLICT (annotator) DO UPDATE SET"
                " role = excluded.role, token_hash = excluded.token_hash,"
                " created_at = excluded.created_at, revoked_at = NULL",
                (annotator, role, hashed, time.time()),
            )

        self._write(write)

    def revoke_serve_token(self, annotator: str) -> bool:
        """End the annotator's live token; False when they had none."""
        if not self._has_table(TOKENS_TABLE):
            return False

        def write(tx: Tx) -> bool:
            cur = tx.execute(
                "UPDATE serve_tokens SET revoked_at = ? WHERE annotator = ? AND revoked_at IS NULL",
                (time.time(), annotator),
            )
            return cur.rowcount > 0

        return self._write(write)

    def serve_token_holder(self, hashed: str) -> TokenHolder | None:
        """Whose live token has this hash; None for an unknown or revoked one."""
        if not self._has_table(TOKENS_TABLE):
            return None
        rows = self._read(
            "SELECT annotator, role FROM serve_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            (hashed,),
        )
        return TokenHolder(str(rows[0][0]), str(rows[0][1])) if rows else None

    def serve_tokens(self) -> dict[str, tuple[str, bool]]:
        """annotator -> (role, live) for every token made in this store."""
        if not self._has_table(TOKENS_TABLE):
            return {}
        rows = self._read(
            "SELECT annotator, role, revoked_at IS NULL FROM serve_tokens ORDER BY annotator"
        )
        return {str(a): (str(r), bool(live)) for a, r, live in rows}
