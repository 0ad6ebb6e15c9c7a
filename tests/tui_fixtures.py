"""Judging stores built directly with the Store API (no models): a small pool for app tests."""

from __future__ import annotations

from pathlib import Path

from workbench.model import Doc, PoolEntry, Provenance, Query
from workbench.store import Store


def title_of(query_number: int, item: int) -> str:
    """A passage title that is unique and contains no query term (so it renders unbroken)."""
    return f"Passage Q{query_number}-{item:03d}"


def build_store(
    path: Path, queries: int = 3, per_query: int = 10, words: int = 30, extra_text: str = ""
) -> Store:
    """`queries` x `per_query` pooled items; doc d{q}-{i}; provenance from bm25 and dense."""
    store = Store(path, create=True)
    store.add_queries(
        Query(f"q{q}", f"maize pest number {q}", f"Relevant: passages about pest {q}.")
        for q in range(queries)
    )
    docs, entries = [], []
    for q in range(queries):
        for i in range(per_query):
            doc_id = f"d{q}-{i:03d}"
            body = " ".join(f"word{(q * 7 + i + w) % 50}" for w in range(words))
            docs.append(Doc(doc_id, f"The maize crop {body} {extra_text}".strip(), title_of(q, i)))
            entries.append(
                PoolEntry(
                    f"q{q}",
                    doc_id,
                    i,
                    provenance=(
                        Provenance("bm25", i + 1, 10.0 - i),
                        Provenance("dense", i + 2, 0.5),
                    ),
                )
            )
    store.add_docs(docs)
    store.add_pool_entries(entries)
    return store


def run_async(test):  # type: ignore[no-untyped-def]
    """Run an async test on a fresh event loop (no asyncio pytest plugin needed)."""
    import asyncio
    import functools

    @functools.wraps(test)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        asyncio.run(test(*args, **kwargs))

    return wrapper
