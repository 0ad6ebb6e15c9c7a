"""The judgments store: `open_store(location)` gives a `JudgmentStore`. A path is a SQLite
file (one machine, WAL); a `postgresql://` URL is the team store (`workbench.store.postgres`,
psycopg loaded only then)."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.errors import InputError
from workbench.core.store_url import (
    StoreLocation,
    is_keyword_dsn,
    is_url,
    mask_url,
    plain,
    sqlite_name_problem,
)
from workbench.formats.store_file import is_store
from workbench.store.base import JudgmentStore, StoreUnavailable
from workbench.store.sqlite import CLAIM_TTL_S, LOCK_WAIT_S, SCHEMA_VERSION, Store, StoreLocked

__all__ = [
    "CLAIM_TTL_S",
    "LOCK_WAIT_S",
    "SCHEMA_VERSION",
    "JudgmentStore",
    "Store",
    "StoreLocation",
    "StoreLocked",
    "StoreUnavailable",
    "is_store",
    "mask_url",
    "open_store",
]


def open_store(
    location: str | os.PathLike[str] | StoreLocation,
    *,
    create: bool = False,
    read_only: bool = False,
    pooling: bool = False,
) -> JudgmentStore:
    """The store at `location`: an existing one, or (`create`) a new one when none is there.
    Anything that is not a workbench store is refused (InputError) before it is changed; so is
    a store whose pooling was interrupted (`PoolTables.interrupted_pooling`), except for the
    pool command (`pooling`, or `create`), whose next pooling replaces it. `read_only`, for the
    commands that only read: the store is never changed (a SQLite file is opened as mode=ro,
    not even switched to WAL)."""
    text = plain(location)
    store: JudgmentStore
    if is_url(text):
        from workbench.store.postgres import PostgresStore

        store = PostgresStore(text, create=create, read_only=read_only)
    else:
        if is_keyword_dsn(text) and not os.path.lexists(text):
            # Refused, not connected to: `--db` names a store by a path or a URL, and a file of
            # this name would be made (with the password in its name) were it taken as a path.
            raise InputError(
                [
                    f"{mask_url(text)}: a keyword/value connection string; give a team store as"
                    " a URL: postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
                ]
            )
        problem = sqlite_name_problem(text)
        if problem:
            raise InputError([problem])
        store = Store(Path(text), create=create, read_only=read_only)
    if not (create or pooling):
        refusal = store.interrupted_refusal()
        if refusal:
            store.close()
            raise InputError([refusal])
    return store
