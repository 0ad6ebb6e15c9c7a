"""The pooling claim: one `workbench pool` at a time per store. Taken before any system runs,
checked and given back in the transaction that writes the pooling (`PoolTables.add_pooling`),
so two pools started together on one store never both land: the second is told at once that
the store is being pooled, and by whom.

SQLite: a row in meta (`CLAIM_KEY`: pid, host, start time, a token) taken inside an immediate
transaction; a holder that died (SIGKILL, power cut) does not keep it: on its own host its pid
is probed, from another host the claim lapses after `CLAIM_LEASE_S`. PostgreSQL: a session
advisory lock, which the server drops with the holder's connection."""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from typing import Any

from workbench.core.errors import InputError
from workbench.store.core import UPSERT_META, StoreCore, Tx

CLAIM_KEY = "pooling_claim"
"""The meta key of a SQLite store's claim (never copied by `store copy`)."""
CLAIM_LEASE_S = 12 * 3600.0
"""How long a claim taken on another machine holds (its pid cannot be probed from here)."""
POOL_LOCK_CLASS = 0x5750  # 'WP': PostgreSQL's claim; the store's write lock is 0x5742


def local_time(at: float) -> str:
    """A moment as messages say it (local time, to the second)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _holder(raw: str | None) -> dict[str, Any] | None:
    """The claim's holder, or None when there is none or it reads as nothing usable."""
    try:
        holder = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(holder, dict):
        return None
    pid, host, since = holder.get("pid"), holder.get("host"), holder.get("since")
    if not (isinstance(pid, int) and isinstance(host, str) and isinstance(since, int | float)):
        return None
    return holder


def _holds(holder: dict[str, Any], now: float) -> bool:
    """Whether the claim's holder may still be pooling: a live process on this host, or a
    claim from another host younger than its lease."""
    from workbench.formats.staged import alive

    if holder["host"] == socket.gethostname():
        return alive(holder["pid"])
    return now - holder["since"] < CLAIM_LEASE_S


def _process(holder: dict[str, Any]) -> str:
    return f"process {holder['pid']} on {holder['host']} since {local_time(holder['since'])}"


def being_pooled(location: str, by: str) -> InputError:
    return InputError(
        [
            f"{location}: being pooled by {by}: one pool at a time per store; wait for it to "
            "finish, or pool into another store"
        ]
    )


class SqliteClaim(StoreCore):
    """The claim as a meta row (see the module)."""

    _claim_token: str | None = None

    def claim_pooling(self) -> None:
        """Take the store's pooling claim, or raise naming who holds it."""
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
              "token": uuid.uuid4().hex}  # fmt: skip

        def take(tx: Tx) -> dict[str, Any] | None:
            holder = self._foreign_holder(tx)
            if holder is None:
                tx.execute(UPSERT_META, (CLAIM_KEY, json.dumps(me)))
            return holder

        holder = self._write(take)
        if holder is not None:
            raise being_pooled(self.location, _process(holder))
        self._claim_token = me["token"]

    def release_pooling(self) -> None:
        """Give the claim back (a pooling that failed; a written one gave it back already)."""
        if self._claim_token is not None:
            self._write(self._release_claim)

    def _foreign_holder(self, tx: Tx) -> dict[str, Any] | None:
        row = tx.execute("SELECT value FROM meta WHERE key = ?", (CLAIM_KEY,)).fetchone()
        holder = _holder(row[0] if row else None)
        if holder is None or holder.get("token") == self._claim_token:
            return None
        return holder if _holds(holder, time.time()) else None

    def _check_claim(self, tx: Tx) -> None:
        holder = self._foreign_holder(tx)
        if holder is not None:
            raise being_pooled(self.location, _process(holder))

    def _release_claim(self, tx: Tx) -> None:
        row = tx.execute("SELECT value FROM meta WHERE key = ?", (CLAIM_KEY,)).fetchone()
        holder = _holder(row[0] if row else None)
        if row is not None and (holder is None or holder.get("token") == self._claim_token):
            tx.execute("DELETE FROM meta WHERE key = ?", (CLAIM_KEY,))
        self._claim_token = None


class PgClaim(StoreCore):
    """The claim as a session advisory lock on the store's connection (see the module)."""

    _LOCK = "(?, hashtext(current_schema()))"

    def claim_pooling(self) -> None:
        """Take the store's pooling claim, or raise naming the session that holds it."""
        if not self._read(f"SELECT pg_try_advisory_lock{self._LOCK}", (POOL_LOCK_CLASS,))[0][0]:
            raise being_pooled(self.location, self._lock_holder())

    def release_pooling(self) -> None:
        self._read("SELECT pg_advisory_unlock_all()")

    def _lock_holder(self) -> str:
        rows = self._read(
            "SELECT a.pid, host(a.client_addr), a.backend_start FROM pg_locks l"
            " LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory'"
            " AND l.granted AND l.classid = ?::oid"
            " AND l.objid = (hashtext(current_schema())::bigint & 4294967295)::oid",
            (POOL_LOCK_CLASS,),
        )
        if not rows or rows[0][0] is None:
            return "another session"
        pid, address, started = rows[0]
        where = f" from {address}" if address else ""
        since = f" since {started:%Y-%m-%d %H:%M:%S}" if started is not None else ""
        return f"another session (server pid {pid}{where}{since})"

    def _check_claim(self, tx: Tx) -> None:
        """The lock is the session's once taken (a re-take stacks); taken here if this session
        lost it (a reconnect) and it is free."""
        if not tx.execute(
            f"SELECT pg_try_advisory_lock{self._LOCK}", (POOL_LOCK_CLASS,)
        ).fetchone()[0]:
            raise being_pooled(self.location, "another session")

    def _release_claim(self, tx: Tx) -> None:
        """Released after commit, in `release_pooling` (or with the connection)."""
