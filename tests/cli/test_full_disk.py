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
from small_disk import file_size_limit, fill, small_disk
from test_faults import make_collection, pooled

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "WORKBENCH_DEBUG": ""}
PAGE = 4096


def workbench(*argv: object, cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *map(str, argv)],
        cwd=cwd, capture_output=True, text=True, timeout=120, env=ENV, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture(scope="module")
def study_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    make_collection(folder, queries=40)  # a golden.yaml of ~80 KB, its qrels ~9 KB
    db = pooled(folder)
    assert workbench("simulate", "--db", db, "--oracle", "qrels.tsv", cwd=folder).returncode == 0
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
