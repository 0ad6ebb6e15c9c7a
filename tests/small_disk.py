"""Full disks for tests, real ones, no mocks. `small_disk` mounts a tmpfs of a few pages on a
folder of the test (as root; `mount -t tmpfs -o size=N`), so a write past its room fails with
ENOSPC as on a full disk; where mounting is not allowed it gives None, and a test uses
`file_size_limit` instead: RLIMIT_FSIZE on the command's own process, under which a write that
would make a file larger than the limit fails with EFBIG (the kernel's 'file too large') the
way a write onto a full disk fails, for the one file it would grow (Python ignores SIGXFSZ)."""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def small_disk(folder: Path, size: int) -> Iterator[Path | None]:
    """`folder` made a tmpfs of `size` bytes (a multiple of 4096) for the block; None where
    this user may not mount one."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        yield None
        return
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(folder)],
        capture_output=True, text=True,
    )  # fmt: skip
    if made.returncode != 0:
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path, leave: int) -> None:
    """Fill the small disk at `folder` until about `leave` bytes are free."""
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if free > leave:
        (folder / "ballast").write_bytes(b"\0" * (free - leave))


def file_size_limit(limit: int) -> Callable[[], None]:
    """A `preexec_fn`: the child may not make any file larger than `limit` bytes."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply
