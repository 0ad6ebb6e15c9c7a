"""An output path is taken as a shell redirection takes it: a link is written through to its
target, a device or a FIFO is written in place, nothing that is not a regular file is renamed
over; link loops, names too long, sockets and a full device are exit 2 naming the option.
Real processes; the character devices are made here (as root), never the system's."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from collection_fixtures import ENV, make_collection, pooled, workbench


@pytest.fixture(scope="module")
def study_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The collection pooled and simulated once, by the same commands, for the module."""
    folder = tmp_path_factory.mktemp("study")
    make_collection(folder)
    db = pooled(folder)
    assert workbench("simulate", "--db", db, "--oracle", "qrels.tsv", cwd=folder).returncode == 0
    return folder


@pytest.fixture
def study(study_made: Path, tmp_path: Path) -> Path:
    """A copy of its own (the store is relative to it, no process holds it open): a test may
    change every file in it."""
    shutil.copytree(study_made, tmp_path, symlinks=True, dirs_exist_ok=True)
    return tmp_path


def test_a_link_is_written_through_and_kept(study: Path) -> None:
    (study / "elsewhere").mkdir()
    target = study / "elsewhere" / "real.qrels"
    target.write_text("old\n", encoding="utf-8")
    (study / "link.qrels").symlink_to("elsewhere/real.qrels")
    (study / "chain.qrels").symlink_to("link.qrels")
    for name in ("link.qrels", "chain.qrels"):
        result = workbench("export", "--db", "s.db", "--qrels", name, cwd=study)
        assert result.returncode == 0, result.stderr
        assert (study / name).is_symlink(), f"{name}: the link was replaced"
        assert target.read_text(encoding="utf-8").startswith("q"), "the target was not written"
    assert [p.name for p in (study / "elsewhere").iterdir()] == ["real.qrels"], "temp left"


def test_a_dangling_link_creates_its_target(study: Path) -> None:
    (study / "new.link").symlink_to("made.qrels")
    assert workbench("export", "--db", "s.db", "--qrels", "new.link", cwd=study).returncode == 0
    assert (study / "new.link").is_symlink() and (study / "made.qrels").is_file()


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["export", "--db", "s.db", "--qrels", "new.link"], "--qrels"),
        (["export", "--db", "s.db", "--golden", "new.link"], "--golden"),
        (["report", "--db", "s.db", "-o", "new.link"], "-o"),
        (["pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--systems", "bm25",
          "--db", "new.link"], "--db"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("folder", ["nowhere", "qrels.tsv"])
def test_a_dangling_link_into_no_folder_is_refused_not_made(
    study: Path, argv: list[str], option: str, folder: str
) -> None:
    """A shell's `>` does not make the folder a dangling link points into; nor does workbench
    (a folder where the link says, that nobody asked for)."""
    (study / "new.link").symlink_to(f"{folder}/made.out")
    result = workbench(*argv, cwd=study)
    assert result.returncode == 2, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: new.link: {option}: a symbolic link to {folder}/made.out")
    assert "Traceback" not in result.stderr
    assert not (study / "nowhere").exists() and (study / "qrels.tsv").is_file()
    assert (study / "new.link").is_symlink()


@pytest.mark.parametrize(
    "argv",
    [
        ["agree", "loopA", "qrels.tsv"],
        ["agree", "qrels.tsv", "loopA"],
        ["agree", "loopA", "loopB"],
        ["report", "--db", "s.db", "--run", "loopA", "-o", "r.html"],
        ["report", "--db", "loopA", "-o", "r.html"],
        ["pool", "--corpus", "loopA", "--queries", "queries.jsonl", "--systems", "bm25",
         "--db", "n.db"],
        ["pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--run", "loopA",
         "--db", "n.db"],
        ["store", "copy", "loopA", "n.db"],
        ["store", "copy", "s.db", "loopA"],
    ],
)  # fmt: skip
def test_a_loop_of_links_as_an_input_is_exit_2_naming_it(study: Path, argv: list[str]) -> None:
    (study / "loopA").symlink_to("loopB")
    (study / "loopB").symlink_to("loopA")
    result = workbench(*argv, cwd=study)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: loop"), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert not (study / "r.html").exists() and not (study / "n.db").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a character device needs root")
@pytest.mark.parametrize("argv", [["export", "--db", "s.db", "--qrels", "null"],
                                  ["report", "--db", "s.db", "-o", "null"]])  # fmt: skip
def test_a_character_device_is_written_in_place_never_replaced(
    study: Path, argv: list[str]
) -> None:
    device = study / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    result = workbench(*argv, cwd=study)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode), "the device was replaced by a file"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a character device needs root")
def test_two_outputs_on_one_character_device_are_both_written(study: Path) -> None:
    """`--golden /dev/null --qrels /dev/null`: a device is written in place, so neither output
    can take the other's place; two outputs onto one regular file are still refused."""
    device = study / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    (study / "also-null").symlink_to("null")
    for second in ("null", "also-null", "./null"):
        result = workbench("export", "--db", "s.db", "--golden", "null", "--qrels", second,
                           cwd=study)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert stat.S_ISCHR(os.lstat(device).st_mode), "the device was replaced by a file"
    twice = workbench("export", "--db", "s.db", "--golden", "g", "--qrels", "./g", cwd=study)
    assert twice.returncode == 2 and "name the same file" in twice.stderr
    assert not (study / "g").exists()


def test_dev_stdout_writes_through_the_descriptor(study: Path) -> None:
    """A link of our own to /proc/self/fd/1, as /dev/stdout is (a regression must not
    replace the system's)."""
    (study / "stdout").symlink_to("/proc/self/fd/1")
    with open(study / "out.txt", "w", encoding="utf-8") as out:
        subprocess.run(
            [sys.executable, "-m", "workbench", "export", "--db", "s.db", "--qrels",
             "stdout"], cwd=study, stdout=out, stderr=subprocess.PIPE, env=ENV,
            timeout=60, check=True,
        )  # fmt: skip
    assert (study / "stdout").is_symlink()
    lines = (study / "out.txt").read_text(encoding="utf-8").splitlines()
    qrels = workbench("export", "--db", "s.db", "--qrels", "plain.qrels", cwd=study)
    assert qrels.returncode == 0
    expected = (study / "plain.qrels").read_text(encoding="utf-8").splitlines()
    assert lines[: len(expected)] == expected, "the qrels are not whole on stdout"


def test_a_fifo_with_a_reader_gets_the_output_and_one_without_is_refused(study: Path) -> None:
    fifo = study / "pipe.qrels"
    os.mkfifo(fifo)
    lonely = workbench("export", "--db", "s.db", "--qrels", fifo, cwd=study)
    assert lonely.returncode == 2 and "no process reads" in lonely.stderr
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        result = workbench("export", "--db", "s.db", "--qrels", fifo, cwd=study)
    finally:
        if reader.is_alive() and not got:  # unblock the reader whatever happened
            with open(fifo, "wb"):
                pass
        reader.join(timeout=10)
    assert result.returncode == 0, result.stderr
    assert got and got[0].startswith(b"q"), "the reader got nothing"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "--db", "s.db", "--qrels", "{out}"],
        ["report", "--db", "s.db", "-o", "{out}"],
        ["export", "--db", "s.db", "--golden", "{out}"],
    ],
)
@pytest.mark.parametrize("how", ["loop", "too_long", "socket", "full", "journal"])
def test_an_output_that_cannot_be_written_is_exit_2_naming_it(
    study: Path, argv: list[str], how: str
) -> None:
    if how == "loop":
        (study / "loopA").symlink_to("loopB")
        (study / "loopB").symlink_to("loopA")
        out = "loopA"
    elif how == "too_long":
        out = "x" * 300 + ".out"
    elif how == "socket":
        out = "sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(study / out))
    elif how == "full":  # a /dev/full of our own: a regression must not replace the system's
        if os.geteuid() != 0:
            pytest.skip("making a character device needs root")
        out = "full"
        os.mknod(study / out, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    else:
        out = "s.db-journal"
    result = workbench(*[a.format(out=out) for a in argv], cwd=study)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert out[:40] in lines[0]
    if how == "journal":
        assert not (study / out).exists()
    if how == "socket":
        assert stat.S_ISSOCK(os.lstat(study / out).st_mode)


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--qrels", "qrels.tsv", "--run", "s-runs/bm25.run"],
        ["coverage", "--db", "s.db"],
        ["export", "--db", "s.db", "--qrels", "x.qrels"],
        ["agree", "--db", "s.db"],
        ["store", "role-sql"],
    ],
)
@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_stdout_that_cannot_be_written_is_exit_2_in_one_line(
    study: Path, argv: list[str], stdout: str
) -> None:
    if stdout == "full":
        target = open("/dev/full", "w")  # opened for writing only: never replaced
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *argv], cwd=study, env=ENV, timeout=60,
        stdout=target if stdout == "full" else None, stderr=subprocess.PIPE, text=True,
        **({} if stdout == "full" else {"pass_fds": (), "preexec_fn": lambda: os.close(1)}),
    )  # fmt: skip
    if stdout == "full":
        target.close()
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: stdout"), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_number_too_large_for_any_store_is_refused_by_name(tmp_path: Path) -> None:
    make_collection(tmp_path)
    result = workbench(
        "pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--systems", "bm25",
        "--db", "s.db", "--policy", "static", "--depth", "9" * 20, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2 and result.stderr.startswith("error: --depth:"), result.stderr
    assert not (tmp_path / "s.db").exists()
