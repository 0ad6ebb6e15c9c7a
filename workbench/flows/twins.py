"""Identical passages in a corpus (`core.pooling.twin_groups` over each passage's key): what a
pool folds into one item, its other ids kept as aliases. Cached on disk for a large corpus."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from workbench.core.model import Doc, passage_key
from workbench.core.pool.pooling import twin_groups

TWINS_VERSION = "1"
"""Part of the identical-passages cache key: bump it whenever `passage_key` changes."""


def corpus_twins(
    docs: Sequence[Doc], cache_dir: str | os.PathLike[str] | None = None
) -> dict[str, tuple[str, ...]]:
    """`twin_groups` over the corpus; from TWINS_CACHE_FROM passages cached on disk by corpus
    hash (folding a million passages takes seconds; a re-pool of the same corpus reads the
    groups back, each group checked to hold one passage text, so a forged entry folds nothing
    that differs). The cache is optional: one that cannot be written is skipped. Each
    passage's key is held as a 128-bit digest: a million folded passages as strings would hold
    the corpus a second time."""
    import json

    from workbench.core.errors import InputError
    from workbench.retrieval.cache import (
        corpus_hash,
        default_cache_dir,
        key_digest,
        load_entry,
        store_entry,
    )

    cached = len(docs) >= TWINS_CACHE_FROM
    if cached:
        key = {"kind": "twins", "version": TWINS_VERSION, "corpus": corpus_hash(docs)}
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        path = root / f"twins-{key_digest(key)}.json"
        groups = _checked_groups(load_entry(path, key), docs)
        if groups is not None:
            return {d: tuple(group) for group in groups for d in group}
    keys: dict[str, str] = {}
    for doc in docs:
        passage = passage_key(doc)
        digest = hashlib.blake2b(passage.encode("utf-8"), digest_size=16).hexdigest()
        keys[doc.doc_id] = digest if passage else ""
    twins = twin_groups(keys)
    if cached:
        try:
            store_entry(path, json.dumps(list(dict.fromkeys(twins.values()))).encode(), key)
        except (InputError, OSError):  # a cache folder that cannot be written: fold next time
            pass
    return twins


TWINS_CACHE_FROM = 50_000
"""Corpus size from which the identical-passage groups are cached (below, folding takes well
under a second, and a pool of run files alone writes no cache folder)."""


def _checked_groups(payload: bytes | None, docs: Sequence[Doc]) -> list[list[str]] | None:
    """The cached groups when each names corpus passages of one and the same text; else None
    (recomputed)."""
    import json

    if payload is None:
        return None
    try:
        groups = json.loads(payload)
    except ValueError:
        return None
    by_id = {d.doc_id: d for d in docs}
    if not isinstance(groups, list):
        return None
    for group in groups:
        if not (isinstance(group, list) and len(group) > 1 and all(
            isinstance(d, str) and d in by_id for d in group
        )):
            return None
        texts = {passage_key(by_id[d]) for d in group}
        if len(texts) != 1 or texts == {""}:
            return None
    return groups
