"""Disk caches for indexes and embeddings: a payload file plus a JSON manifest that vouches for it.

A cache entry is trusted only when its manifest matches the expected key fields and the
payload's length and sha256 match the manifest; anything else is treated as absent and rebuilt."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.model import Doc, Query, Run
from workbench.formats.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from workbench.retrieval.base import Retriever

CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """$WORKBENCH_CACHE_DIR, else ./.workbench/cache: a folder the user can see and delete."""
    configured = os.environ.get("WORKBENCH_CACHE_DIR")
    return Path(configured) if configured else Path.cwd() / ".workbench" / "cache"


def corpus_hash(docs: Iterable[Doc]) -> str:
    """sha256 over each doc's id, title and text, in order; length-prefixed, unambiguous."""
    digest = hashlib.sha256(b"workbench-corpus-v1\0")
    for doc in docs:
        for field in (doc.doc_id, doc.title, doc.text):
            raw = field.encode("utf-8")
            digest.update(len(raw).to_bytes(8, "little"))
            digest.update(raw)
    return digest.hexdigest()


def store_entry(payload_path: Path, payload: bytes, key: Mapping[str, Any]) -> None:
    """Write the payload, then its manifest (`<payload>.json`); a crash in between leaves a
    manifest that no longer vouches for the payload, so the entry is rebuilt."""
    atomic_write_bytes(payload_path, payload)
    manifest = {
        "format": CACHE_FORMAT,
        "key": dict(key),
        "bytes": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    }
    atomic_write_bytes(_manifest_path(payload_path), json.dumps(manifest, indent=1).encode("utf-8"))


def load_entry(payload_path: Path, key: Mapping[str, Any]) -> bytes | None:
    """The payload when its manifest carries exactly `key` and its bytes verify; else None."""
    try:
        manifest = json.loads(_manifest_path(payload_path).read_text(encoding="utf-8"))
        payload = payload_path.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != CACHE_FORMAT:
        return None
    if manifest.get("key") != json.loads(json.dumps(dict(key))):
        return None
    if manifest.get("bytes") != len(payload):
        return None
    if manifest.get("sha256") != hashlib.sha256(payload).hexdigest():
        return None
    return payload


def key_digest(key: Mapping[str, Any]) -> str:
    """A short file-name-safe digest of a cache key."""
    return hashlib.sha256(json.dumps(dict(key), sort_keys=True).encode("utf-8")).hexdigest()[:24]


def _manifest_path(payload_path: Path) -> Path:
    return payload_path.with_name(payload_path.name + ".json")


def cached_search(
    name: str,
    retriever: Retriever,
    queries: Sequence[Query],
    depth: int,
    cache_dir: str | os.PathLike[str] | None,
) -> Run:
    """`retriever.search`, remembered on disk per (index, queries, depth): a warm re-pool then
    never loads the dense model just to re-encode the same queries. The key holds the name of
    the retriever's own index cache file, a digest of everything its index depends on; a
    retriever without one (`cache_path` None) is not cached."""
    index_file = retriever.cache_path
    if index_file is None:
        return retriever.search(queries, depth)
    digest = hashlib.sha256(b"workbench-queries-v1\0")
    for q in queries:
        for part in (q.query_id, q.text):
            raw = part.encode("utf-8")
            digest.update(len(raw).to_bytes(8, "little") + raw)
    key = {
        "kind": "run",
        "system": name,
        "index": Path(index_file).name,
        "queries": digest.hexdigest(),
        "depth": depth,
    }
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    path = root / f"run-{name}-{key_digest(key)}.json"
    payload = load_entry(path, key)
    if payload is not None:
        scores = json.loads(payload)
        return Run(name, {q: {d: float(s) for d, s in docs.items()} for q, docs in scores.items()})
    run = retriever.search(queries, depth)
    store_entry(path, json.dumps(run.scores, sort_keys=True).encode("utf-8"), key)
    return run
