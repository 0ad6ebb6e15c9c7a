"""Full disks, real ones (`tests/small_disk.py`: a small tmpfs, or a file-size limit on the
command's process where no tmpfs can be mounted): a command that cannot write all its outputs
exits 2 having written none of them, and every byte it prints reaches stdout or it exits 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from collection_fixtures import ENV, make_collection, pooled, workbench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from small_disk import file_size_limit, fill, small_disk

PAGE = 4096


@pytest.fixture(scope="module")
def study_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    make_collection(folder, queries=40)  # a golden.yaml of ~80 KB, its qrels ~9 KB
    db = pooled(folder)
    assert workbench("simulate", "--db", db, "--oracle", "qrels.tsv", cwd=folder).returncode == 0
    assert workbench("export", "--db", db, "--qrels", "s.qrels", cwd=folder).returncode == 0
    lines = (folder / "s-runs" / "bm25.run").read_text().splitlines()
    renamed = "".join(line.rsplit(" ", 1)[0] + " other\n" for line in lines)
    (folder / "other.run").write_text(renamed)  # a second run, for compare
    return folder


@pytest.fixture
def study(study_made: Path, tmp_path: Path) -> Path:
    shutil.copytree(study_made, tmp_path, symlinks=True, dirs_exist_ok=True)
    return tmp_path


OLD = "old, not to be replaced\n"


@pytest.mark.parametrize("how", ["tmpfs", "fsize"])
def test_a_two_output_export_with_room_for_one_writes_neither(study: Path, how: str) -> None:
    """The qrels fit and the golden.yaml does not: exit 2, and both old outputs are as they
    were (before: the qrels held the new export). The size limit lets the store's 32 KB index
    (-shm) be made."""
    disk = study / "disk"
    with small_disk(disk, 8 * PAGE) as mounted:
        if how == "tmpfs" and mounted is None:
            pytest.skip("mounting a tmpfs needs root")
        for name in ("g.yaml", "q.qrels"):
            (disk / name).write_text(OLD)
        limit = {} if how == "tmpfs" else {"preexec_fn": file_size_limit(10 * PAGE)}
        result = workbench("export", "--db", "s.db", "--golden", "disk/g.yaml",
                           "--qrels", "disk/q.qrels", cwd=study, **limit)  # fmt: skip
        assert result.returncode == 2, result.stderr
        assert "g.yaml: cannot write" in result.stderr and "Traceback" not in result.stderr
        assert (disk / "q.qrels").read_text() == OLD and (disk / "g.yaml").read_text() == OLD
        assert sorted(p.name for p in disk.iterdir()) == ["g.yaml", "q.qrels"]  # no temp left


def test_a_two_output_export_that_fits_writes_both(study: Path) -> None:
    result = workbench("export", "--db", "s.db", "--golden", "g.yaml", "--qrels", "q.qrels",
                       cwd=study)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (study / "q.qrels").read_text().count("\n") > 10
    assert (study / "g.yaml").read_text().startswith("schema: workbench-golden")


STDOUT_CASES = {
    "coverage html": ["coverage", "--db", "s.db", "--format", "html"],
    "coverage markdown": ["coverage", "--db", "s.db", "--format", "markdown"],
    "coverage table": ["coverage", "--db", "s.db", "--wide"],
    "coverage json": ["coverage", "--db", "s.db", "--json"],
    "eval html": ["eval", "--qrels", "qrels.tsv", "--run", "s-runs/bm25.run", "--format", "html"],
    "eval json": ["eval", "--qrels", "qrels.tsv", "--run", "s-runs/bm25.run", "--json"],
    "export to stdout": ["export", "--db", "s.db", "--golden", "/dev/stdout"],
}


def printed(study: Path, argv: list[str], out: Path, **kw: object) -> subprocess.CompletedProcess:
    with open(out, "wb") as stdout:
        return subprocess.run(
            [sys.executable, "-m", "workbench", *argv], cwd=study, env=ENV, timeout=120,
            stdout=stdout, stderr=subprocess.PIPE, text=True, **kw,  # type: ignore[arg-type]
        )  # fmt: skip


def whole_or_said(result: subprocess.CompletedProcess, out: Path, whole: bytes) -> None:
    """Every byte printed reached the file, or the command exited 2 saying stdout failed."""
    if result.returncode == 0:
        assert out.read_bytes() == whole, f"exit 0 with {out.stat().st_size} of {len(whole)} bytes"
    else:
        assert result.returncode == 2, result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(("error: stdout: cannot write", "error: /dev/stdout: cannot write"))
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("case", STDOUT_CASES)
def test_a_short_write_to_stdout_on_a_full_disk_is_exit_2(study: Path, case: str) -> None:
    """stdout redirected to a file on a disk with ~40 KB free: Python's unbuffered stdout
    (PYTHONUNBUFFERED=1) took one short write and dropped the rest, and the command exited 0
    with the head of its output (40,960 of 65,635 bytes of coverage's HTML)."""
    argv = STDOUT_CASES[case]
    whole = workbench(*argv, cwd=study).stdout.encode("utf-8")
    disk = study / "disk"
    with small_disk(disk, 16 * PAGE) as mounted:
        if mounted is None:
            pytest.skip("mounting a tmpfs needs root (the size-limit test covers the rule)")
        room = max(PAGE, len(whole) // 2 // PAGE * PAGE)  # room for about half of it
        fill(disk, room)
        result = printed(study, argv, disk / "out")
        assert result.returncode == 2, f"exit {result.returncode}, {len(whole)} bytes to print"
        whole_or_said(result, disk / "out", whole)


FILE_CASES = {  # commands that open no store: a size limit on the process bounds stdout only
    "eval text": ["eval", "--qrels", "qrels.tsv", "--run", "s-runs/bm25.run", "-k", "1,5,10"],
    "eval markdown": ["eval", "--qrels", "qrels.tsv", "--run", "s-runs/bm25.run", "--format",
                      "markdown"],
    "compare html": ["compare", "--qrels", "qrels.tsv", "--run", "s-runs/bm25.run", "--run",
                     "other.run", "--format", "html"],
    "agree json": ["agree", "qrels.tsv", "s.qrels", "--json"],
}  # fmt: skip
FILE_CASES |= {name: STDOUT_CASES[name] for name in ("eval html", "eval json")}


@settings(max_examples=int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "12")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(case=st.sampled_from(sorted(FILE_CASES)), share=st.floats(0, 1.1))
def test_stdout_short_writes_fuzz(study: Path, case: str, share: float) -> None:
    """Any room on stdout's file (RLIMIT_FSIZE at a drawn share of the output's size: the
    kernel takes a short write up to it, then refuses with EFBIG): the whole output or exit 2."""
    argv = FILE_CASES[case]
    whole = workbench(*argv, cwd=study).stdout.encode("utf-8")
    out = study / f"out-{case.replace(' ', '-')}"
    result = printed(study, argv, out, preexec_fn=file_size_limit(int(len(whole) * share)))
    whole_or_said(result, out, whole)
