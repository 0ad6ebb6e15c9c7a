"""The judgments store. `Store` is the SQLite store (one file, WAL)."""

from workbench.store.sqlite import (
    CLAIM_TTL_S,
    SCHEMA_VERSION,
    SQLITE_HEADER,
    Store,
    check_store_file,
)

__all__ = ["CLAIM_TTL_S", "SCHEMA_VERSION", "SQLITE_HEADER", "Store", "check_store_file"]
