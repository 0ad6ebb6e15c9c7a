"""The judgments store: `open_store(location)` gives a `JudgmentStore`. A path is a SQLite
file (one machine, WAL); a `postgresql://` URL is the team store's (not built yet)."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.errors import InputError
from workbench.store.base import JudgmentStore
from workbench.store.sqlite import CLAIM_TTL_S, SCHEMA_VERSION, SQLITE_HEADER, Store

__all__ = [
    "CLAIM_TTL_S",
    "SCHEMA_VERSION",
    "JudgmentStore",
    "Store",
    "is_store",
    "open_store",
]

URL_SCHEMES = ("postgresql://", "postgres://")


def open_store(location: str | os.PathLike[str], *, create: bool = False) -> JudgmentStore:
    """The store at `location`: an existing one, or (`create`) a new one when none is there.
    Anything that is not a workbench store is refused (InputError) before it is changed."""
    text = os.fspath(location)
    if text.startswith(URL_SCHEMES):
        raise InputError(
            [f"{text.split('@')[-1]}: PostgreSQL stores are not supported yet (give a file)"]
        )
    return Store(Path(text), create=create)


def is_store(location: str | os.PathLike[str]) -> bool:
    """Whether `location` names a judgments store rather than a judgments file (a store URL,
    or a file that starts as SQLite does), without opening it."""
    text = os.fspath(location)
    if text.startswith(URL_SCHEMES):
        return True
    try:
        with open(text, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False
