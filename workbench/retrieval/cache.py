"""Disk caches for indexes and embeddings: a payload file plus a JSON manifest that vouches for it.

A cache entry is trusted only when its manifest matches the expected key fields and the
payload's length and sha256 match the manifest; anything else is treated as absent and rebuilt."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from workbench.core.errors import InputError
from workbench.core.model import Doc, Query, Run
from workbench.formats.atomic import atomic_write_bytes
from workbench.formats.staged import sweep_dead_temps, temp_beside

if TYPE_CHECKING:
    from workbench.retrieval.base import Retriever

CACHE_FORMAT = 1
T = TypeVar("T")


def default_cache_dir() -> Path:
    """$WORKBENCH_CACHE_DIR, else ./.workbench/cache: a folder the user can see and delete."""
    configured = os.environ.get("WORKBENCH_CACHE_DIR")
    return Path(configured) if configured else Path.cwd() / ".workbench" / "cache"


def corpus_hash(docs: Iterable[Doc]) -> str:
    """sha256 over each doc's id, title and text, in order; length-prefixed, unambiguous."""
    digest = hashlib.sha256(b"workbench-corpus-v1\0")
    chunk = bytearray()
    for doc in docs:
        for field in (doc.doc_id, doc.title, doc.text):
            raw = field.encode("utf-8")
            chunk += len(raw).to_bytes(8, "little")
            chunk += raw
        if len(chunk) > 1 << 20:  # one update per MiB, not two per field: the same digest
            digest.update(chunk)
            chunk.clear()
    digest.update(chunk)
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
    manifest = _manifest(payload_path, key)
    if manifest is None:
        return None
    try:
        payload = payload_path.read_bytes()
    except OSError:
        return None
    if manifest.get("bytes") != len(payload):
        return None
    if manifest.get("sha256") != hashlib.sha256(payload).hexdigest():
        return None
    return payload


class _Hashing:
    """A file wrapper that hashes every byte it writes or reads (numpy's array writer and
    reader stream through it in chunks)."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        return self.handle.write(data)

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.sha256.update(data)
        self.size += len(data)
        return data


def store_stream(
    payload_path: Path, write_payload: Callable[[BinaryIO], None], key: Mapping[str, Any]
) -> None:
    """`store_entry` for a payload too large to hold twice in memory: `write_payload` streams
    it into a temporary file beside the entry, hashed on the way, which then replaces it."""

    try:
        payload_path.parent.mkdir(parents=True, exist_ok=True)
        sweep_dead_temps(payload_path)
        tmp = temp_beside(payload_path)
        try:
            with open(tmp, "xb") as raw:
                sink = _Hashing(raw)
                write_payload(sink)  # type: ignore[arg-type]
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(tmp, payload_path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise InputError([f"{payload_path}: cannot write ({exc.strerror or exc})"]) from None
    manifest = {
        "format": CACHE_FORMAT,
        "key": dict(key),
        "bytes": sink.size,
        "sha256": sink.sha256.hexdigest(),
    }
    atomic_write_bytes(_manifest_path(payload_path), json.dumps(manifest, indent=1).encode("utf-8"))


def load_stream(
    payload_path: Path, key: Mapping[str, Any], read_payload: Callable[[BinaryIO], T]
) -> T | None:
    """`load_entry` streamed: what `read_payload` makes of the payload, kept only when the
    manifest carries exactly `key` and every byte, read once, verifies; else None."""
    manifest = _manifest(payload_path, key)
    if manifest is None:
        return None
    try:
        with open(payload_path, "rb") as raw:
            if os.fstat(raw.fileno()).st_size != manifest.get("bytes"):
                return None
            source = _Hashing(raw)
            result = read_payload(source)  # type: ignore[arg-type]
            while source.read(1 << 20):  # bytes the reader left are hashed too
                pass
    except Exception:  # a damaged or foreign payload of any kind is rebuilt, never trusted
        return None
    if source.size != manifest.get("bytes") or source.sha256.hexdigest() != manifest.get("sha256"):
        return None
    return result


def _manifest(payload_path: Path, key: Mapping[str, Any]) -> dict[str, Any] | None:
    """The entry's manifest when it is this format's and carries exactly `key`."""
    try:
        manifest = json.loads(_manifest_path(payload_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != CACHE_FORMAT:
        return None
    if manifest.get("key") != json.loads(json.dumps(dict(key))):
        return None
    return manifest


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
