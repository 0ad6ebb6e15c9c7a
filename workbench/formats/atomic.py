"""Atomic file writes, and the check every command makes on its output paths before writing.

A write goes to an unnamed file in the target folder (Linux O_TMPFILE: a kill at any moment
leaves nothing behind), is fsynced, then takes the target's name in one rename, so readers
see the old file or the new one, never half of one. The new file gets the mode a plain
`open()` would give it (0666 less the umask), or the mode of the file it replaces. Where there
is no O_TMPFILE, a named temp file is used, and one left by a killed writer is swept later."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from workbench.core.errors import InputError

PathLike = str | os.PathLike[str]


def atomic_write_bytes(path: PathLike, payload: bytes) -> None:
    """Write `payload` to `path` atomically; a failure (no space, no permission) is an
    InputError naming the path, and leaves the old file as it was."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = target.stat().st_mode & 0o7777  # a replaced file keeps its mode
        except OSError:
            mode = None  # a new file: created 0666, the kernel applies the umask
        sweep_dead_temps(target)
        if not _write_unnamed(target, payload, mode):
            _write_named(target, payload, mode)
    except OSError as exc:
        raise InputError([f"{target}: cannot write ({exc.strerror or exc})"]) from None


def atomic_write_text(path: PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _write_unnamed(target: Path, payload: bytes, mode: int | None) -> bool:
    """Write through an O_TMPFILE file, named only for the instant before the rename; False
    when the filesystem (or the platform) cannot, before anything was made."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return False
    try:
        fd = os.open(target.parent, flag | os.O_WRONLY, 0o666)
    except OSError:
        return False
    tmp: Path | None = None
    try:
        with os.fdopen(fd, "wb") as handle:
            _fill(handle, payload, mode)
            for attempt in range(100):
                tmp = _temp_name(target, attempt)
                try:
                    os.link(f"/proc/self/fd/{handle.fileno()}", tmp, follow_symlinks=True)
                    break
                except FileExistsError:
                    tmp = None
                except OSError:
                    return False  # no /proc: fall back to a named temp file
        if tmp is None:
            return False
        os.replace(tmp, target)
        return True
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


def _write_named(target: Path, payload: bytes, mode: int | None) -> None:
    for attempt in range(100):
        tmp = _temp_name(target, attempt)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{target}: no free temporary name beside it")
    try:
        with os.fdopen(fd, "wb") as handle:
            _fill(handle, payload, mode if hasattr(os, "fchmod") else None)
        if mode is not None and not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_BINARY = getattr(os, "O_BINARY", 0)


def _fill(handle: BinaryIO, payload: bytes, mode: int | None) -> None:
    handle.write(payload)
    handle.flush()
    if mode is not None:
        os.fchmod(handle.fileno(), mode)
    os.fsync(handle.fileno())


_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"
"""In temp names: a pid is only known dead on its own host (a shared folder has many)."""


def _temp_name(target: Path, attempt: int) -> Path:
    return target.parent / f".{target.name}.{_HOST}.{os.getpid()}.{attempt}.tmp"


def temp_beside(target: Path) -> Path:
    """A fresh temporary path beside `target` that `sweep_dead_temps` cleans up after a kill."""
    for attempt in range(1000):
        tmp = _temp_name(target, attempt)
        if not tmp.exists():
            return tmp
    raise FileExistsError(f"{target}: no free temporary name beside it")


def sweep_dead_temps(target: Path) -> None:
    """Remove temp files beside `target` (and SQLite's journals of them) left by a writer of
    this host that was killed: its pid is gone."""
    pattern = re.compile(
        rf"\.{re.escape(target.name)}\.{re.escape(_HOST)}\.(\d+)\.\d+\.tmp(-journal|-wal|-shm)?"
    )
    try:
        siblings = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in siblings:
        match = pattern.fullmatch(entry.name)
        if match and not _alive(int(match.group(1))):
            Path(entry.path).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) is not a probe there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def check_outputs(
    outputs: Mapping[str, PathLike | None], inputs: Mapping[str, PathLike | None] = {}
) -> list[str]:
    """What is wrong with where a command would write, found before it writes anything:
    an output onto one of its inputs, two outputs onto one path, an output that is a folder
    or whose folder is a file. Keys name the option (e.g. '--golden')."""
    problems: list[str] = []
    seen: dict[Path, str] = {}
    given_inputs = [(label, Path(p)) for label, p in inputs.items() if p is not None]
    for label, raw in outputs.items():
        if raw is None:
            continue
        path = Path(raw)
        if path.is_dir():
            problems.append(f"{path}: {label} is a folder; give a file path")
            continue
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            problems.append(f"{path}: {label}: {parent} is a file, not a folder")
            continue
        key = path.resolve()
        if key in seen:
            problems.append(f"{path}: {label} and {seen[key]} name the same file")
            continue
        seen[key] = label
        for input_label, input_path in given_inputs:
            if _same_file(path, input_path):
                problems.append(
                    f"{path}: {label} would overwrite {input_label}, an input of this command"
                )
                break
    return problems


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()
