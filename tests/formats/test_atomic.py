"""Atomic writes: whole or absent, no temp file left by a killed writer, the umask's mode."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.formats import staged
from workbench.formats.atomic import atomic_write_bytes, check_outputs, same_file

WRITER = r"""
import os, sys, time
import workbench.formats.atomic as atomic

def slow_fsync(fd):  # the payload is written; the kill comes before the rename
    print("written", flush=True)
    time.sleep(30)

atomic.os.fsync = slow_fsync
atomic.atomic_write_bytes(sys.argv[1], b"x" * 1_000_000)
"""


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="a named temp file is swept later")
def test_a_writer_killed_mid_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "golden.yaml"
    target.write_text("old\n")
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "written\n"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden.yaml"]


def test_a_temp_file_of_a_dead_writer_is_swept_by_the_next_write(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    host = staged.HOST
    stale = tmp_path / f".out.qrels.{host}.{dead.stdout.strip()}.0.tmp"
    stale.write_text("half")
    mine = tmp_path / f".out.qrels.{host}.{os.getpid()}.7.tmp"  # a live writer's: kept
    other_host = tmp_path / f".out.qrels.elsewhere.{dead.stdout.strip()}.0.tmp"
    other_host.write_text("theirs")  # a pid of another host's: never judged dead here
    mine.write_text("busy")
    atomic_write_bytes(tmp_path / "out.qrels", b"q 0 d 1\n")
    assert not stale.exists() and mine.exists() and other_host.exists()
    assert (tmp_path / "out.qrels").read_bytes() == b"q 0 d 1\n"


@pytest.mark.parametrize("unnamed", [True, False], ids=["O_TMPFILE", "named temp"])
def test_new_files_take_the_umask_and_replaced_files_keep_their_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    if not unnamed:
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    old = os.umask(0o027)
    try:
        atomic_write_bytes(tmp_path / "a", b"1")
        assert (tmp_path / "a").stat().st_mode & 0o777 == 0o640
        (tmp_path / "a").chmod(0o604)
        atomic_write_bytes(tmp_path / "a", b"2")
        assert (tmp_path / "a").stat().st_mode & 0o777 == 0o604
        assert (tmp_path / "a").read_bytes() == b"2"
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_output_checks(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    store.write_bytes(b"")
    (tmp_path / "dir").mkdir()
    link = tmp_path / "link.db"
    link.symlink_to(store)
    problems = check_outputs(
        {"--golden": link, "--qrels": tmp_path / "dir", "--x": tmp_path / "s.db" / "f"},
        {"--db": store},
    )
    assert len(problems) == 3
    assert "would overwrite --db" in problems[0] and "is a folder" in problems[1]
    assert "is a file, not a folder" in problems[2]
    assert check_outputs({"--a": tmp_path / "new", "--b": None}, {"--db": store}) == []


def test_same_file_never_raises(tmp_path: Path) -> None:
    """A loop of links, a missing file, a name too long or a NUL: an answer, never an error
    (Path.resolve raises RuntimeError on a loop)."""
    (tmp_path / "loopA").symlink_to("loopB")
    (tmp_path / "loopB").symlink_to("loopA")
    plain = tmp_path / "plain"
    plain.write_text("x", encoding="utf-8")
    (tmp_path / "hard").hardlink_to(plain)
    (tmp_path / "link").symlink_to("plain")
    loop = tmp_path / "loopA"
    assert same_file(loop, loop) and same_file(loop, tmp_path / "." / "loopA")
    assert not same_file(loop, plain) and not same_file(plain, loop)
    assert same_file(plain, tmp_path / "hard") and same_file(tmp_path / "link", plain)
    assert not same_file(plain, tmp_path / "missing")
    assert same_file(tmp_path / "missing", tmp_path / "." / "missing")
    assert not same_file(plain, "x" * 5000) and not same_file(plain, "a\0b")
    assert check_outputs({"-o": tmp_path / "out"}, {"--run": loop}) == []
