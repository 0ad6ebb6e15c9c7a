"""Telling a judgments store from a judgments file without loading the store package (so that
`workbench eval` on TREC qrels imports no store, sqlite3 or psycopg)."""

from __future__ import annotations

import os

from workbench.core.store_url import is_url

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first bytes of every SQLite database file."""


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
