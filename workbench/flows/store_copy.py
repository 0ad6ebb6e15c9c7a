"""`workbench store copy`'s use case: every row of a store into another (SQLite <-> PostgreSQL),
checksummed per table (`workbench.store.copy`); a destination this copy made is removed again
when the copy fails, so that nothing half-made is left behind."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from workbench.core.errors import InputError

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation
    from workbench.store.copy import StoreCopy


def copy_between(
    source: StoreLocation, destination: StoreLocation, append: bool = False
) -> StoreCopy:
    """Copy `source` into `destination` (made when absent); InputError when they are one."""
    from workbench.core.store_url import plain
    from workbench.formats.atomic import same_file
    from workbench.store import open_store
    from workbench.store.copy import copy_store

    files = not source.is_url and not destination.is_url
    if plain(source) == plain(destination) or (
        files and same_file(plain(source), plain(destination))
    ):
        raise InputError([f"{destination}: is the source; copy into another store"])
    made = not destination.is_url and not os.path.lexists(plain(destination))
    try:
        with (
            open_store(source, read_only=True) as old,
            open_store(destination, create=True) as new,
        ):
            return copy_store(old, new, append=append)
    except BaseException:
        if made:  # a destination this copy made holds nothing of use: leave none behind
            from pathlib import Path

            from workbench.store.schema import remove_store_files

            with contextlib.suppress(OSError):
                remove_store_files(Path(plain(destination)))
        raise
