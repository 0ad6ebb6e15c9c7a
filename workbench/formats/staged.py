"""Temporary files beside an output, for `formats.atomic`: each filled and fsynced under no name
(Linux O_TMPFILE) or a temporary one (`.NAME.HOST.PID.N.tmp`), named and renamed only when the
write is committed; a temporary file left by a killed writer of this host is swept later."""

from __future__ import annotations

import errno
import os
import re
import socket
from collections.abc import Callable
from functools import partial
from pathlib import Path


def write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


class Staged:
    """An output filled and fsynced but not yet under its name: an unnamed file (`fd`, Linux
    O_TMPFILE: a kill leaves nothing) or a temporary one beside its target (`tmp`). `name`
    gives the unnamed one a temporary name (written again under one where the filesystem
    cannot link it, as overlayfs), `commit` renames it onto the target."""

    def __init__(
        self, given: Path, target: Path, fd: int | None, tmp: Path | None,
        rewrite: Callable[[], Staged] | None = None,
    ) -> None:  # fmt: skip
        self.given, self.target, self.fd, self.tmp, self.rewrite = given, target, fd, tmp, rewrite
        self.done = False

    def name(self) -> None:
        if self.fd is None:
            return
        try:
            for attempt in range(100):
                tmp = temp_name(self.target, attempt)
                try:
                    os.link(f"/proc/self/fd/{self.fd}", tmp, follow_symlinks=True)
                except FileExistsError:
                    continue
                self.tmp = tmp
                return
            raise FileExistsError(errno.EEXIST, "no free temporary name beside it")
        except FileExistsError:
            raise
        except OSError:
            CANNOT_LINK.add(os.fstat(self.fd).st_dev)  # the next output there goes named
            assert self.rewrite is not None
            self.tmp = self.rewrite().tmp
        finally:
            os.close(self.fd)
            self.fd = None

    def commit(self) -> None:
        assert self.tmp is not None
        os.replace(self.tmp, self.target)
        self.done = True

    def discard(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.tmp is not None and not self.done:
            self.tmp.unlink(missing_ok=True)


CANNOT_LINK: set[int] = set()
"""Filesystems (st_dev) where an unnamed file could not be linked to a name in this process."""


def unnamed(given: Path, target: Path, payload: bytes, mode: int | None) -> Staged | None:
    """`payload` in an O_TMPFILE file beside `target`; None when the filesystem (or the
    platform) cannot, before anything was made."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return None
    try:
        fd = os.open(target.parent, flag | os.O_WRONLY, 0o666)
    except OSError:
        return None
    if os.fstat(fd).st_dev in CANNOT_LINK:
        os.close(fd)
        return None
    staged = Staged(given, target, fd, None, partial(named, given, target, payload, mode))
    try:
        fill(fd, payload, mode)
    except BaseException:
        staged.discard()
        raise
    return staged


def named(given: Path, target: Path, payload: bytes, mode: int | None) -> Staged:
    for attempt in range(100):
        tmp = temp_name(target, attempt)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name beside it")
    staged = Staged(given, target, None, tmp)
    try:
        try:
            fill(fd, payload, mode if hasattr(os, "fchmod") else None)
        finally:
            os.close(fd)
        if mode is not None and not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
    except BaseException:
        staged.discard()
        raise
    return staged


BINARY = getattr(os, "OBINARY", 0)


def fill(fd: int, payload: bytes, mode: int | None) -> None:
    write_all(fd, payload)
    if mode is not None:
        os.fchmod(fd, mode)
    os.fsync(fd)


HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"
"""In temp names: a pid is only known dead on its own host (a shared folder has many)."""


def temp_name(target: Path, attempt: int) -> Path:
    return target.parent / f".{target.name}.{HOST}.{os.getpid()}.{attempt}.tmp"


def temp_beside(target: Path) -> Path:
    """A fresh temporary path beside `target` that `sweep_dead_temps` cleans up after a kill."""
    for attempt in range(1000):
        tmp = temp_name(target, attempt)
        if not tmp.exists():
            return tmp
    raise FileExistsError(f"{target}: no free temporary name beside it")


def sweep_dead_temps(target: Path) -> None:
    """Remove temp files beside `target` (and SQLite's journals of them) left by a writer of
    this host that was killed: its pid is gone."""
    pattern = re.compile(
        rf"\.{re.escape(target.name)}\.{re.escape(HOST)}\.(\d+)\.\d+\.tmp(-journal|-wal|-shm)?"
    )
    try:
        siblings = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in siblings:
        match = pattern.fullmatch(entry.name)
        if match and not alive(int(match.group(1))):
            Path(entry.path).unlink(missing_ok=True)


def alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) is not a probe there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True
