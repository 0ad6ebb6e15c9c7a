"""Every command against hostile files: it does its job or exits 2 (1 where the audit says so),
never a traceback, never a raw escape sequence on the terminal, never a changed input, and
on exit 2 no output written. Hypothesis drives the commands in-process (hundreds of inputs);
a fixed set of the same inputs runs each command as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fuzz_fixtures import FUZZ, SUFFIX, TAMPERS, build_inputs, digest, run_main, tamper
from hostile import SAMPLES, hostile_files, render
from hypothesis import example, given

from workbench.store import Store

# name -> (kind of the hostile file, argv with {f} for it, whether the command writes the store)
CASES: dict[str, tuple[str, list[str], bool]] = {
    "eval --qrels": ("qrels", ["eval", "--qrels", "{f}", "--run", "{run}", "-k", "2"], False),
    "eval --qrels golden": ("golden", ["eval", "--qrels", "{f}", "--run", "{run}"], False),
    "eval --run": ("run", ["eval", "--qrels", "{qrels}", "--run", "{f}", "-k", "1,3"], False),
    "eval --gain exponential": (
        "qrels", ["eval", "--qrels", "{f}", "--run", "{run}", "--gain", "exponential"], False
    ),
    "eval --stage1": (
        "run", ["eval", "--qrels", "{qrels}", "--stage1", "{f}", "--stage2", "{run}"], False
    ),
    "pool --corpus": ("corpus", ["pool", "--corpus", "{f}", "--queries", "{queries}",
                                 "--systems", "bm25", "--db", "{out_db}", "--cache-dir", "{tmp}/c"],
                      False),
    "pool --queries": ("queries", ["pool", "--corpus", "{corpus}", "--queries", "{f}",
                                   "--systems", "bm25", "--db", "{out_db}",
                                   "--cache-dir", "{tmp}/c"], False),
    "pool --queries golden": ("golden", ["pool", "--corpus", "{corpus}", "--queries", "{f}",
                                         "--systems", "bm25", "--db", "{out_db}",
                                         "--cache-dir", "{tmp}/c"], False),
    "pool --run": ("run", ["pool", "--corpus", "{corpus}", "--queries", "{queries}",
                           "--systems", "", "--run", "{f}", "--db", "{out_db}"], False),
    "simulate --oracle": ("qrels", ["simulate", "--db", "{db}", "--oracle", "{f}"], True),
    "import-labels qrels": ("qrels", ["import-labels", "--db", "{db}", "--as", "llm", "{f}"],
                            True),
    "import-labels jsonl": ("labels", ["import-labels", "--db", "{db}", "--as", "llm",
                                       "--format", "jsonl", "{f}"], True),
    "position-bias": ("comparisons", ["position-bias", "{f}"], False),
    "compare --qrels": ("qrels", ["compare", "--qrels", "{f}", "--run", "{run}", "--run",
                                  "{run2}", "-k", "2"], False),
    "compare --run": ("run", ["compare", "--qrels", "{qrels}", "--run", "{run2}", "--run", "{f}",
                              "-k", "1,3", "--format", "markdown"], False),
}  # fmt: skip


def check_case(name: str, data: bytes, runner=run_main) -> None:  # type: ignore[no-untyped-def]
    kind, template, writes_store = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build_inputs(folder)
        hostile = folder / f"hostile{SUFFIX[kind]}"
        hostile.write_bytes(data)
        out_db = folder / "out.db"
        values = {k: str(v) for k, v in paths.items()} | {
            "f": str(hostile), "out_db": str(out_db), "tmp": tmp
        }  # fmt: skip
        argv = [part.format(**values) for part in template]
        watched = [hostile, *(p for k, p in paths.items() if k != "db" or not writes_store)]
        before = {p: digest(p) for p in watched}
        store_before = digest(paths["db"])
        code, output = runner(argv)
        assert code in (0, 1, 2), f"{name}: exit {code}\n{output[-2000:]}"
        assert "Traceback" not in output, output[-2000:]
        assert "\x1b" not in output and "\x9b" not in output, f"{name}: raw escape in {output!r}"
        assert {p: digest(p) for p in watched} == before, f"{name}: an input changed"
        if code == 2:
            assert not out_db.exists(), f"{name}: exit 2 but a store was written"
            assert digest(paths["db"]) == store_before, f"{name}: exit 2 but the store changed"
        if code == 0 and writes_store:
            Store(paths["db"]).close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_command_in_process(name: str) -> None:
    kind = CASES[name][0]

    @FUZZ
    @given(hostile_files(kind))
    @example((["escape_id", "markup_id"], render(kind, ["escape_id", "markup_id"])))
    @example((["surrogate_escape"], render(kind, ["surrogate_escape"])))
    @example((["long_digits"], render(kind, ["long_digits"])))
    @example((["deep_json"], render(kind, ["deep_json"])))
    @example((["nan", "crlf", "bom"], render(kind, ["nan", "crlf", "bom"])))
    def fuzz(case: tuple[list[str], bytes]) -> None:
        check_case(name, case[1])

    fuzz()


def run_subprocess(argv: list[str]) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *argv],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=120,
        env={**os.environ, "WORKBENCH_DEBUG": ""},
    )
    return result.returncode, result.stdout + result.stderr


SUBPROCESS_MUTATIONS = [["raw_escape", "escape_id"], ["surrogate_escape"], ["long_digits"],
                        ["invalid_utf8"], ["markup_id", "huge_float"]]  # fmt: skip


@pytest.mark.parametrize("mutations", SUBPROCESS_MUTATIONS, ids="+".join)
@pytest.mark.parametrize("name", sorted(CASES))
def test_command_as_a_subprocess(name: str, mutations: list[str]) -> None:
    check_case(name, render(CASES[name][0], mutations), runner=run_subprocess)


# -- hostile stores: every command that opens one ---------------------------------------------

STORE_COMMANDS = {
    "coverage": ["coverage", "--db", "{db}"],
    "coverage --json": ["coverage", "--db", "{db}", "--json"],
    "export": ["export", "--db", "{db}", "--golden", "{tmp}/g.yaml", "--qrels", "{tmp}/g.qrels"],
    "eval": ["eval", "--qrels", "{db}", "--run", "{run}"],
    "agree": ["agree", "--db", "{db}"],
    "assign": ["assign", "--db", "{db}", "--overlap", "0.5"],
    "simulate": ["simulate", "--db", "{db}", "--oracle", "{qrels}"],
    "judge": ["judge", "--db", "{db}", "--annotator", "alice"],
    "judge-model": ["judge-model", "--db", "{db}", "--as", "m", "--scorer", "bi-encoder"],
    "import-labels": ["import-labels", "--db", "{db}", "--as", "llm", "{qrels}"],
}


@pytest.mark.parametrize("how", TAMPERS)
@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_a_damaged_store_is_named_never_a_traceback(command: str, how: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build_inputs(folder)
        tamper(paths["db"], how)
        before = digest(paths["db"])
        values = {k: str(v) for k, v in paths.items()} | {"tmp": tmp}
        argv = [part.format(**values) for part in STORE_COMMANDS[command]]
        if command == "judge" and how in ("escape_text", "corpus_size_text", "blob_id"):
            pytest.skip("a readable store: the app would open (the app's own tests cover it)")
        code, output = run_main(argv)
        assert code in (0, 1, 2), f"exit {code}: {output[-2000:]}"
        assert "\x1b" not in output
        if code == 2:
            assert digest(paths["db"]) == before
            assert not (folder / "g.yaml").exists() and not (folder / "g.qrels").exists()


def test_hostile_file_kinds_are_all_exercised() -> None:
    assert {kind for kind, _, _ in CASES.values()} == set(SAMPLES)
