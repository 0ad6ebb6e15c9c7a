"""Size bounds of what workbench reads, generous for real data and refused beyond at read time
(exit 2 naming the file and line), so that one hostile value cannot make a command run for
minutes on gigabytes: a 50 MB query id once made `pool` peak at 14.7 GB. docs/safety.md
states them."""

from __future__ import annotations

MAX_ID_CHARS = 16_384
"""A query or document id (or a run tag): a text folder's ids are paths (at most 4,096 bytes
on Linux, percent-encoded up to three times longer); real ids are far shorter."""
MAX_QUERY_CHARS = 100_000
"""A query's text, and its narrative: about 15,000 words (argument-retrieval queries, whole
posts, are a few thousand characters)."""
MAX_PASSAGE_CHARS = 1_000_000
"""A passage's text, and its title: a book chapter (a text folder's files are cut into passages
of 80-250 words; a corpus file's records are taken as they are)."""


def length_problem(value: str, limit: int) -> str | None:
    """'is N characters long (at most LIMIT)' when `value` is longer than `limit`, else None."""
    if len(value) <= limit:
        return None
    return f"is {len(value):,} characters long (at most {limit:,})"
