"""The judgments store: `open_store(location)` gives a `JudgmentStore`. A path is a SQLite
file (one machine, WAL); a `postgresql://` URL is the team store (`workbench.store.postgres`,
psycopg loaded only then)."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.errors import InputError
from workbench.core.store_url import StoreLocation, is_keyword_dsn, is_url, mask_url, plain
from workbench.formats.store_file import is_store
from workbench.store.base import JudgmentStore, StoreUnavailable
from workbench.store.sqlite import CLAIM_TTL_S, SCHEMA_VERSION, Store

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
    if is_keyword_dsn(text) and not os.path.lexists(text):
        # Refused, not connected to: `--db` names a store by a path or a URL, and a file of
        # this name would be made (with the password in its name) were it taken as a path.
        raise InputError(
            [
                f"{mask_url(text)}: a keyword/value connection string; give a team store as a"
                " URL: postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
            ]
        )
    return Store(Path(text), create=create)
