"""The judgments store: `open_store(location)` gives a `JudgmentStore`. A path is a SQLite
file (one machine, WAL); a `postgresql://` URL is the team store (`workbench.store.postgres`,
psycopg loaded only then)."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.store_url import StoreLocation, is_url, mask_url, plain
from workbench.store.base import JudgmentStore, StoreUnavailable
from workbench.store.sqlite import CLAIM_TTL_S, SCHEMA_VERSION, SQLITE_HEADER, Store

__all__ = [
    "CLAIM_TTL_S",
    "SCHEMA_VERSION",
    "JudgmentStore",
    "Store",
    "StoreLocation",
    "StoreUnavailable",
    "is_store",
    "mask_url",
    "open_store",
]


def open_store(location: str | os.PathLike[str], *, create: bool = False) -> JudgmentStore:
    """The store at `location`: an existing one, or (`create`) a new one when none is there.
    Anything that is not a workbench store is refused (InputError) before it is changed."""
    text = plain(os.fspath(location))
    if is_url(text):
        from workbench.store.postgres import PostgresStore

        return PostgresStore(text, create=create)
    return Store(Path(text), create=create)


def is_store(location: str | os.PathLike[str]) -> bool:
    """Whether `location` names a judgments store rather than a judgments file (a store URL,
    or a file that starts as SQLite does), without opening it."""
    text = os.fspath(location)
    if is_url(text):
        return True
    try:
        with open(text, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False
