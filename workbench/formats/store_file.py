"""Telling a judgments store from a judgments file without loading the store package (so that
`workbench eval` on TREC qrels imports no store, sqlite3 or psycopg)."""

from __future__ import annotations

import os

from workbench.core.errors import InputError
from workbench.core.store_url import is_url, plain
from workbench.formats.textio import open_regular

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first bytes of every SQLite database file."""


def is_store(location: str | os.PathLike[str]) -> bool:
    """Whether `location` names a judgments store rather than a judgments file (a store URL,
    or a regular file that starts as SQLite does). A pipe or a device is not opened (it would
    wait or act): it is no store, and the judgments-file reader then says what it is."""
    text = plain(location)
    if is_url(text):
        return True
    try:
        with open_regular(text) as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except (InputError, OSError):
        return False
