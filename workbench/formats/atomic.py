"""Atomic file writes, and the check every command makes on its output paths before writing.

A write goes to an unnamed file in the target folder (Linux O_TMPFILE: a kill at any moment
leaves nothing behind), is fsynced, then takes the target's name in one rename, so readers
see the old file or the new one, never half of one. The new file gets the mode a plain
`open()` would give it (0666 less the umask), or the mode of the file it replaces. Where there
is no O_TMPFILE, a named temp file is used, and one left by a killed writer is swept later.

An output path is taken as a shell redirection takes it: a symbolic link is written through
to its target (the temp file beside the target, the link kept), a character device or a FIFO
(`/dev/null`, `/dev/stdout`, a named pipe) is written to in place, and nothing that is not a
regular file is ever renamed over (a socket or a block device is refused)."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from workbench.core.errors import InputError
from workbench.formats.staged import (
    BINARY,
    Staged,
    named,
    sweep_dead_temps,
    unnamed,
    write_all,
)

PathLike = str | os.PathLike[str]


def atomic_write_bytes(path: PathLike, payload: bytes) -> None:
    """Write `payload` to `path` atomically; a failure (no space, no permission) is an
    InputError naming the path, and leaves the old file as it was."""
    write_all_or_none([(path, payload)])


def write_all_or_none(outputs: Sequence[tuple[PathLike, bytes]]) -> None:
    """Write every output whole, or none: each regular file is filled and fsynced first (under
    no name, or a temporary one), and they take their names only once all are complete, so a
    full disk at the second output leaves the first as it was. Devices, pipes and stdout
    (written in place) come after the files are ready and before they are renamed. A failure
    is an InputError naming its path."""
    placed = [(Path(path), payload) for path, payload in outputs]
    in_place = [_in_place(given) for given, _ in placed]
    staged: list[Staged] = []
    try:
        for (given, payload), streamed in zip(placed, in_place, strict=True):
            if not streamed:
                staged.append(_named_error(given, partial(_stage, given, payload)))
        for (given, payload), streamed in zip(placed, in_place, strict=True):
            if streamed:
                _named_error(given, partial(_write_in_place, given, payload))
        for pending in staged:
            _named_error(pending.given, pending.name)
        for pending in staged:
            _named_error(pending.given, pending.commit)
    finally:
        for pending in staged:
            pending.discard()


T = TypeVar("T")


def _named_error(given: Path, step: Callable[[], T]) -> T:
    """`step()`, an OSError of it said as an InputError naming the output."""
    try:
        return step()
    except OSError as exc:
        raise InputError([f"{given}: cannot write ({_reason(exc)})"]) from None


def _in_place(given: Path) -> bool:
    """Whether a write to `given` goes in place (an open descriptor such as /dev/stdout, a
    device, a FIFO) rather than to a file renamed over it."""
    try:
        return _descriptor(given) is not None or _kind(given) in (stat.S_IFCHR, stat.S_IFIFO)
    except OSError:
        return False  # a link loop and the like: said when it is staged


def _write_in_place(given: Path, payload: bytes) -> None:
    descriptor = _descriptor(given)
    if descriptor is not None:
        if descriptor == 1:
            sys.stdout.flush()  # what was printed before comes first
        write_all(descriptor, payload)
    else:
        _stream(given, payload, _kind(given) or stat.S_IFIFO)  # gone meanwhile: said by open


def _stage(given: Path, payload: bytes) -> Staged:
    """`payload` written and fsynced where `given`'s file will be (a link's target), not yet
    under its name."""
    kind = _kind(given)
    target = _through_links(given)
    if kind is not None and kind != stat.S_IFREG:
        raise InputError([f"{given}: not a regular file, a device or a pipe: not written"])
    if target == given:
        target.parent.mkdir(parents=True, exist_ok=True)
    elif problem := _link_folder_problem(target):
        raise InputError([f"{given}: {problem}"])
    try:
        mode: int | None = target.stat().st_mode & 0o7777  # a replaced file keeps its mode
    except OSError:
        mode = None  # a new file: created 0666, the kernel applies the umask
    sweep_dead_temps(target)
    return unnamed(given, target, payload, mode) or named(given, target, payload, mode)


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links"
    if exc.errno == errno.ENAMETOOLONG:
        return "the name is too long for the file system"
    return exc.strerror or str(exc)


def _through_links(path: Path) -> Path:
    """Where a write to `path` lands: a symbolic link's final target (a dangling one too: the
    write creates it, as `>` does); a loop is an OSError (ELOOP) as the kernel reports it."""
    hops = 0
    while path.is_symlink():
        hops += 1
        if hops > 40:  # the kernel's own limit
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
        link = Path(os.readlink(path))
        path = link if link.is_absolute() else path.parent / link
    return path


def _descriptor(path: Path) -> int | None:
    """The open file of this process that `/dev/stdout`, `/dev/fd/3` and the like name (links
    to /proc/self/fd/N): written through that descriptor, as a shell's `>` does, so its offset
    is shared with what the command prints there (a rename would leave the descriptor behind,
    a fresh open would write over its start)."""
    hops = 0
    while path.is_symlink() and hops < 40:
        hops += 1
        link = Path(os.readlink(path))
        path = link if link.is_absolute() else path.parent / link
        parts = path.parts
        if len(parts) == 5 and parts[:2] == ("/", "proc") and parts[3] == "fd":
            if parts[2] in ("self", str(os.getpid())) and parts[4].isdigit():
                return int(parts[4])
    return None


def _kind(path: Path) -> int | None:
    """The file type of what is at `path` (stat.S_IF*), or None when nothing is there yet."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):  # a folder that is a file: said elsewhere
        return None


def _stream(target: Path, payload: bytes, kind: int) -> None:
    """Write to a device or a FIFO in place. A FIFO is opened without blocking first: with no
    process reading it the open would wait forever, so that is refused at once instead."""
    flags = os.O_WRONLY | BINARY
    try:
        fd = os.open(target, flags | (os.O_NONBLOCK if kind == stat.S_IFIFO else 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            problem = f"{target}: a named pipe that no process reads: not written"
            raise InputError([problem]) from None
        raise
    try:
        if kind == stat.S_IFIFO:
            os.set_blocking(fd, True)
        write_all(fd, payload)
    finally:
        os.close(fd)


def atomic_write_text(path: PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


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
        problem = _target_problem(path)
        if problem:
            problems.append(f"{path}: {label}: {problem}")
            continue
        if path.is_dir():
            problems.append(f"{path}: {label} is a folder; give a file path")
            continue
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            problems.append(f"{path}: {label}: {parent} is a file, not a folder")
            continue
        key = Path(os.path.realpath(path))  # never raises (a loop was said above)
        if key in seen and not _is_device(path):  # a device is written in place, nothing lost
            problems.append(f"{path}: {label} and {seen[key]} name the same file")
            continue
        seen[key] = label
        for input_label, input_path in given_inputs:
            if same_file(path, input_path):
                problems.append(
                    f"{path}: {label} would overwrite {input_label}, an input of this command"
                )
                break
    return problems


def _target_problem(path: Path) -> str | None:
    """Why nothing can be written at `path` (a link loop, a name too long, a socket or a block
    device), found before anything is written; None when a write may go ahead."""
    try:
        target = _through_links(path)
        kind = _kind(target)
    except OSError as exc:
        return f"cannot write ({_reason(exc)})"
    if kind is None and target != path:
        return _link_folder_problem(target)
    if kind in (None, stat.S_IFREG, stat.S_IFDIR, stat.S_IFCHR, stat.S_IFIFO):
        return None
    return "not a regular file, a device or a pipe: not written"


def _link_folder_problem(target: Path) -> str | None:
    """Why a dangling symbolic link cannot be written through to `target`: its folder is
    missing or a file (made, it would be a folder nobody asked for, where the link says)."""
    folder = target.parent
    if folder.is_dir():
        return None
    state = "is not a folder" if os.path.lexists(folder) else "does not exist"
    return f"a symbolic link to {target}, whose folder {folder} {state}: not written"


def _is_device(path: Path) -> bool:
    """Whether a write to `path` goes to a character device in place (`/dev/null`)."""
    try:
        return _kind(_through_links(path)) == stat.S_IFCHR
    except OSError:
        return False


def store_companions(label: str, db: PathLike) -> dict[str, str]:
    """A SQLite store and the files SQLite keeps beside it: none may be written over (a file
    named like its journal would be taken for a hot journal and rolled back into the store)."""
    return {
        label: os.fspath(db),
        f"{label}'s WAL": f"{os.fspath(db)}-wal",
        f"{label}'s index": f"{os.fspath(db)}-shm",
        f"{label}'s journal": f"{os.fspath(db)}-journal",
    }


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name one file however they are spelled (a link, '../', a hard link).
    Never raises: a path that cannot be looked at (a loop of links, a name too long, one not
    there yet) is compared by where its spelling leads."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        pass
    try:
        return os.path.realpath(a) == os.path.realpath(b)  # unlike Path.resolve, never raises
    except (OSError, ValueError):
        return False
