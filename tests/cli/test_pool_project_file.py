"""`workbench.toml`'s [pool] table holds `pool`'s options, so that a study is pooled again
without retyping them: the same study as from the command line, the command line winning, and
a wrong key or value refused (exit 2) by file, line and key, never a traceback."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from workbench.cli import _with_project_file, build_parser, main
from workbench.store import open_store

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "demo" / "docs"
QUERIES = ROOT / "corpora" / "demo" / "queries.jsonl"


def parsed(argv: list[str]) -> argparse.Namespace:
    """`workbench pool ...` parsed as `main` parses it (the project file first)."""
    parser = build_parser(only="pool")
    return parser.parse_args(_with_project_file(parser, "pool", ["pool", *argv]))


def write(folder: Path, text: str, name: str = "workbench.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_file_parses_as_the_same_command_line(in_tmp: Path) -> None:
    write(in_tmp, f"""[pool]
corpus = "{CORPUS}"
queries = "{QUERIES}"
db = "study.db"
passages = "paragraphs"
passage-words = "40:300"
systems = "bm25"
run = ["a.run", "b.run"]
policy = "static"
depth = 7
strategy = "round-robin"
sample = 3
overlap = 0.2
rel_threshold = 2
json = true
""")
    typed = ["--corpus", str(CORPUS), "--queries", str(QUERIES), "--db", "study.db",
             "--passages", "paragraphs", "--passage-words", "40:300", "--systems", "bm25",
             "--run", "a.run", "--run", "b.run", "--policy", "static", "--depth", "7",
             "--strategy", "round-robin", "--sample", "3", "--overlap", "0.2",
             "--rel-threshold", "2", "--json"]  # fmt: skip
    assert vars(parsed([])) | {"no_config": True} == vars(parsed(["--no-config", *typed]))


def test_a_study_pooled_from_the_file_is_the_one_pooled_from_the_command_line(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typed, filed = in_tmp / "typed", in_tmp / "filed"
    typed.mkdir()
    filed.mkdir()
    monkeypatch.chdir(typed)
    options = ["--passages", "paragraphs", "--systems", "bm25", "--candidate-depth", "30"]
    assert main(["pool", "--corpus", str(CORPUS), "--queries", str(QUERIES), *options,
                 "--db", "study.db", "--json"]) == 0  # fmt: skip
    from_typed = json.loads(capsys.readouterr().out)
    monkeypatch.chdir(filed)
    write(filed, f'[pool]\ncorpus = "{CORPUS}"\nqueries = "{QUERIES}"\npassages = "paragraphs"'
                 '\nsystems = "bm25"\ncandidate_depth = 30\njson = true\n')  # fmt: skip
    assert main(["pool", "--db", "study.db"]) == 0
    assert json.loads(capsys.readouterr().out) == from_typed
    with open_store(typed / "study.db") as one, open_store(filed / "study.db") as other:
        assert one.pool() == other.pool()
        assert one.queries() == other.queries()
        assert one.get_meta("rel_threshold") == other.get_meta("rel_threshold")


def test_the_command_line_wins(in_tmp: Path) -> None:
    write(in_tmp, '[pool]\ncorpus = "c"\nqueries = "q.jsonl"\ndb = "s.db"\ndepth = 5\n'
                  'run = ["a.run"]\nsystems = "bm25"\n')  # fmt: skip
    args = parsed(["--depth", "9", "--run", "b.run", "--systems="])
    assert (args.depth, args.run, args.systems, args.corpus) == (9, ["b.run"], "", "c")
    assert parsed(["--dep", "8"]).depth == 8  # an abbreviation is the option too


def test_another_file_or_none(in_tmp: Path) -> None:
    write(in_tmp, '[pool]\ncorpus = "here"\nqueries = "q"\ndb = "s.db"\n')
    other = write(in_tmp, '[pool]\ncorpus = "there"\nqueries = "q"\ndb = "s.db"\n', "o.toml")
    assert parsed([]).corpus == "here"
    assert parsed(["--config", str(other)]).corpus == "there"
    with pytest.raises(SystemExit):  # ignored: --corpus is then missing, as without a file
        parsed(["--no-config"])


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[pool]\ndepth = "20"\n', "workbench.toml:2: [pool] depth: '20' is not an integer"),
        ("[pool]\nbogus = 1\n", "workbench.toml:2: [pool] bogus: not an option of `workbench"),
        ("[pool]\nrun = \"a.run\"\n", "workbench.toml:2: [pool] run: 'a.run' is not a list"),
        ("[pool]\njson = 1\n", "workbench.toml:2: [pool] json: 1 is not true or false"),
        ('[pool]\nstrategy = "best"\n', "workbench.toml:2: [pool] strategy: 'best' is not one of"),
        ("[pool]\noverlap = true\n", "workbench.toml:2: [pool] overlap: True is not a number"),
        ('[pool]\npassage_words = "x"\n', "workbench.toml:2: [pool] passage_words: "),
        ("[pool]\nconfig = \"x\"\n", "workbench.toml:2: [pool] config: not an option"),
        ("[pool]\ndepth = 3\n\n[eval]\nk = 1\n", "workbench.toml:4: eval: not a table"),
        ("[pool\n", "workbench.toml:1: not TOML"),
    ],
)
def test_a_wrong_key_or_value_exits_2_naming_file_line_and_key(
    in_tmp: Path, text: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(in_tmp, text)
    assert main(["pool", "--corpus", "c", "--queries", "q", "--db", "s.db"]) == 2
    err = capsys.readouterr().err
    assert f"error: {said}" in err and "Traceback" not in err
    assert not (in_tmp / "s.db").exists()


def test_a_missing_config_file_exits_2(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pool", "--config", "nope.toml"]) == 2
    assert "error: nope.toml: no such file" in capsys.readouterr().err


def test_other_commands_leave_the_file_unread(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(in_tmp, "[pool]\nbogus = 1\n")
    (in_tmp / "q.qrels").write_text("q1 0 d1 1\n")
    (in_tmp / "r.run").write_text("q1 Q0 d1 1 1.0 r\n")
    assert main(["eval", "--qrels", "q.qrels", "--run", "r.run", "--json"]) == 0
