"""TREC qrels and runs: strict reading (every problem, with its line), lossless round trips."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.core.display import has_control
from workbench.core.errors import InputError
from workbench.core.model import Run
from workbench.formats import read_qrels, read_run, write_qrels, write_run

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats"
COLLECTIONS = Path(__file__).resolve().parents[3] / "shared" / "collections"


def problems_of(call, *args) -> list[str]:
    with pytest.raises(InputError) as info:
        call(*args)
    return info.value.problems


def test_qrels_keep_every_integer_grade_and_skip_comments():
    qrels = read_qrels(FIXTURES / "qrels_ok.txt")
    assert qrels == {
        "q1": {"d1": 3, "d2": 0, "d3": -1},
        "q2": {"d1": 1, "d9": 4},
        "q10": {"d10": 2},
    }


def test_qrels_report_every_problem_with_its_line():
    path = FIXTURES / "qrels_bad.txt"
    problems = problems_of(read_qrels, path)
    assert problems == [
        f"{path}:2: expected 4 columns 'qid iter docid grade', found 3",
        f"{path}:3: grade '1.0' is not an integer",
        f"{path}:4: grade 'x' is not an integer",
        f"{path}:5: query 'q1' doc 'd1' judged twice (grade 3 on an earlier line, 3 here)",
        f"{path}:6: expected 4 columns 'qid iter docid grade', found 5",
        f"{path}:7: grade '1_0' is not a plain integer (ASCII digits, an optional leading '-')",
    ]  # line 8 judges d2 again, but line 2 was malformed: so no duplicate is reported


@pytest.mark.parametrize("name", ["empty.txt", "comments_only.txt"])
def test_empty_files_are_errors(name):
    path = FIXTURES / name
    assert problems_of(read_qrels, path) == [
        f"{path}: no qrels lines (expected 'qid iter docid grade')"
    ]
    assert problems_of(read_run, path) == [
        f"{path}: no run lines (expected 'qid Q0 docid rank score tag')"
    ]


def test_missing_and_non_utf8_files(tmp_path):
    missing = tmp_path / "nope.txt"
    assert problems_of(read_qrels, missing) == [f"{missing}: no such file"]
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"q1 0 d1 1\nq1 0 caf\xe9 1\n")
    assert problems_of(read_qrels, latin1) == [f"{latin1}:2: not UTF-8 text (byte 0xe9)"]
    assert problems_of(read_qrels, tmp_path) == [f"{tmp_path}: is a folder, expected a file"]


def test_problem_list_is_capped_but_counts_everything(tmp_path):
    path = tmp_path / "many.txt"
    path.write_text("".join(f"q{i} 0 d x\n" for i in range(120)))
    problems = problems_of(read_qrels, path)
    assert len(problems) == 51
    assert problems[-1] == f"{path}: ... and 70 more problems"


def test_run_reads_scores_tag_and_orders_by_rule():
    run = read_run(FIXTURES / "run_ok.run")
    assert run.name == "bm25"
    assert run.scores == {"q1": {"d3": 2.5, "d1": 2.5, "d2": 0.001}, "q2": {"d7": -0.5}}
    assert run.rankings() == {"q1": ["d3", "d1", "d2"], "q2": ["d7"]}
    assert run.warnings == []


def test_run_reports_every_problem():
    path = FIXTURES / "run_bad.run"
    assert problems_of(read_run, path) == [
        f"{path}:2: score 'high' is not a number",
        f"{path}:3: rank 'three' is not an integer",
        f"{path}:4: query 'q1' lists doc 'd1' twice",
        f"{path}:5: score 'nan' is not a finite number",
        f"{path}:6: expected 6 columns 'qid Q0 docid rank score tag', found 4",
        f"{path}:7: rank '1.5' is not an integer",
    ]


def test_rank_column_disagreement_is_one_warning_and_name_falls_back_to_file():
    path = FIXTURES / "run_ranks_disagree.run"
    run = read_run(path)
    assert run.name == "run_ranks_disagree.run"  # two tags in the file
    assert len(run.warnings) == 1
    assert "in 3 of 4 queries (2 of them only among tied scores)" in run.warnings[0]
    # q2's ranks start at 0 but follow the scores: that is agreement, not a warning.
    assert run.rankings()["q3"] == ["b", "a"]  # ties: doc id descending, whatever the ranks say


def test_non_contiguous_queries_are_merged(tmp_path):
    path = tmp_path / "split.run"
    path.write_text("q1 Q0 a 1 3 t\nq2 Q0 a 1 1 t\nq1 Q0 b 2 2 t\nq1 Q0 a 3 1 t\n")
    assert problems_of(read_run, path) == [f"{path}:4: query 'q1' lists doc 'a' twice"]
    path.write_text("q1 Q0 a 1 3 t\nq2 Q0 a 1 1 t\nq1 Q0 b 2 2 t\n")
    run = read_run(path)
    assert run.scores == {"q1": {"a": 3.0, "b": 2.0}, "q2": {"a": 1.0}}
    assert run.warnings == []


def test_write_qrels_sorted_with_header(tmp_path):
    path = tmp_path / "out" / "qrels.txt"
    write_qrels(path, {"q2": {"b": 1, "a": 0}, "q1": {"z": -1}}, header="made by a test\nline two")
    assert path.read_text() == ("# made by a test\n# line two\nq1 0 z -1\nq2 0 a 0\nq2 0 b 1\n")
    assert read_qrels(path) == {"q2": {"b": 1, "a": 0}, "q1": {"z": -1}}


def test_write_run_ranks_follow_the_rule_and_scores_are_exact(tmp_path):
    path = tmp_path / "r.run"
    run = Run(name="mine", scores={"q1": {"a": 0.1 + 0.2, "b": 0.3, "c": 1e-300}})
    write_run(path, run)
    lines = path.read_text().splitlines()
    assert lines[0] == "q1 Q0 a 1 0.30000000000000004 mine"
    assert lines[1] == "q1 Q0 b 2 0.3 mine"
    back = read_run(path)
    assert back.scores == run.scores and back.name == "mine" and back.warnings == []
    write_run(path, run, tag="other")
    assert read_run(path).name == "other"


def test_writers_refuse_ids_that_cannot_be_columns(tmp_path):
    path = tmp_path / "q.txt"
    problems = problems_of(write_qrels, path, {"q 1": {"d": 1}, "q2": {"d x": 1}})
    assert len(problems) == 2 and not path.exists()
    problems = problems_of(write_run, path, Run(name="has space", scores={"q": {"d": 1.0}}))
    assert "run tag 'has space'" in problems[0] and not path.exists()


ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1
).filter(
    lambda s: (
        len(s.split()) == 1
        and s.strip() == s
        and not has_control(s)
        and s[0] != "#"
        and "\ufeff" not in s
        and unicodedata.is_normalized("NFC", s)  # ids are read in NFC (docs/formats.md)
    )
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    qrels=st.dictionaries(
        ids,
        st.dictionaries(ids, st.integers(-5, 100), min_size=1, max_size=5),
        min_size=1,
        max_size=4,
    )
)
def test_qrels_round_trip_is_lossless(tmp_path, qrels):
    path = tmp_path / "rt.qrels"
    write_qrels(path, qrels)
    assert read_qrels(path) == qrels


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scores=st.dictionaries(
        ids,
        st.dictionaries(
            ids, st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=6
        ),
        min_size=1,
        max_size=3,
    )
)
def test_run_round_trip_is_lossless(tmp_path, scores):
    path = tmp_path / "rt.run"
    write_run(path, Run(name="sys", scores=scores))
    back = read_run(path)
    assert back.scores == scores
    assert back.rankings() == Run(name="x", scores=scores).rankings()
    assert back.warnings == []


def test_big_run_parses_completely(tmp_path):
    """Speed is measured in bench/eval_speed.py; here a 200,000-line run must parse whole."""
    path = tmp_path / "big.run"
    lines = [
        f"q{q} Q0 doc{q}_{r} {r} {1000 - r}.5 big\n" for q in range(200) for r in range(1, 1001)
    ]
    path.write_text("".join(lines))
    run = read_run(path)
    assert len(run.scores) == 200 and sum(len(d) for d in run.scores.values()) == 200_000
    assert run.rankings()["q7"][:2] == ["doc7_1", "doc7_2"]


@pytest.mark.skipif(not (COLLECTIONS / "cranfield").exists(), reason="shared collections absent")
def test_real_collection_reads_and_round_trips(tmp_path):
    folder = COLLECTIONS / "cranfield"
    stats = json.loads((folder / "stats.json").read_text())
    qrels = read_qrels(folder / "qrels.tsv")
    assert sum(len(d) for d in qrels.values()) == stats["qrels_unique_pairs"]
    with_zero = read_qrels(folder / "qrels.minus1_as_grade0.tsv")
    assert sum(len(d) for d in with_zero.values()) == stats["qrels_minus1_as_grade0_lines"]
    run = read_run(folder / "runs" / "bm25.run")
    assert run.name == "bm25_stdlib"
    # Its rank column breaks score ties by docid ascending; trec_eval (and we) re-sort them.
    assert run.warnings == [
        f"{folder / 'runs' / 'bm25.run'}: the rank column disagrees with the scores in 225 of "
        "225 queries (225 of them only among tied scores); order follows the scores (score "
        "descending, ties by docid descending), as trec_eval does"
    ]
    write_run(tmp_path / "bm25.run", run)
    assert read_run(tmp_path / "bm25.run").scores == run.scores


def test_importing_formats_loads_no_heavy_library():
    code = (
        "import sys, workbench.formats, workbench.core.judgments.resolve; "
        "heavy = {'textual', 'torch', 'sentence_transformers', 'sklearn', 'scipy'}; "
        "heavy &= set(sys.modules); "
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- hostile values: numbers other scripts (or Python) would take, control characters ----------


@pytest.mark.parametrize(
    "grade, message",
    [
        ("\uff13", "is not a plain integer (ASCII digits, an optional leading '-')"),  # fullwidth 3
        ("\u0662", "is not a plain integer (ASCII digits, an optional leading '-')"),  # Arabic 2
        ("+1", "is not a plain integer (ASCII digits, an optional leading '-')"),
        ("1" * 5000, "is out of range (a 64-bit integer)"),
        ("9223372036854775808", "is out of range (a 64-bit integer)"),
        ("--1", "is not an integer"),
    ],
)
def test_qrels_grades_are_ascii_integers_within_64_bits(tmp_path, grade, message):
    path = tmp_path / "q.txt"
    path.write_text(f"q1 0 d0 1\nq1 0 d1 {grade}\n")
    problems = problems_of(read_qrels, path)
    assert len(problems) == 1 and problems[0].startswith(f"{path}:2: grade ")
    assert problems[0].endswith(message) and len(problems[0]) < 200 + len(str(path))
    path.write_text("q1 0 d0 -2\nq1 0 d1 007\nq1 0 d2 -9223372036854775808\n")
    assert read_qrels(path) == {"q1": {"d0": -2, "d1": 7, "d2": -(2**63)}}


@pytest.mark.parametrize("chunk_chars", [1, 1 << 14])
@pytest.mark.parametrize(
    "score, message",
    [
        ("1e400", "is not a finite number"),
        ("inf", "is not a finite number"),
        ("-inf", "is not a finite number"),
        ("-Infinity", "is not a finite number"),
        ("nan", "is not a finite number"),
        ("\uff13.5", "is not a plain number (ASCII, no '_')"),
        ("\u0663", "is not a plain number (ASCII, no '_')"),
        ("1_0", "is not a plain number (ASCII, no '_')"),
    ],
)
def test_run_scores_are_finite_ascii_numbers_on_both_paths(
    tmp_path, monkeypatch, chunk_chars, score, message
):
    from workbench.formats import trec

    monkeypatch.setattr(trec.run, "_CHUNK_CHARS", chunk_chars)
    path = tmp_path / "r.run"
    path.write_text(f"q1 Q0 a 1 3 t\nq1 Q0 b 2 {score} t\nq1 Q0 c 3 1 t\n")
    assert problems_of(read_run, path) == [f"{path}:2: score {score!r} {message}"]
    path.write_text("q1 Q0 a 1 1e308 t\nq1 Q0 b 2 1e308 t\nq1 Q0 c 3 -1e-400 t\n")
    assert read_run(path).scores == {"q1": {"a": 1e308, "b": 1e308, "c": -0.0}}  # sum is inf


@pytest.mark.parametrize("chunk_chars", [1, 1 << 14])
def test_run_ranks_are_ascii_integers(tmp_path, monkeypatch, chunk_chars):
    from workbench.formats import trec

    monkeypatch.setattr(trec.run, "_CHUNK_CHARS", chunk_chars)
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 a \uff11 3 t\nq1 Q0 b +2 2 t\nq1 Q0 c \u0663 1 t\nq1 Q0 d 1_0 0 t\n")
    assert problems_of(read_run, path) == [
        f"{path}:{n}: rank {rank!r} is not a plain integer (ASCII digits, an optional leading '-')"
        for n, rank in enumerate(["\uff11", "+2", "\u0663", "1_0"], 1)
    ]
    path.write_text("q1 Q0 a 5 3 t\nq1 Q0 b 3 2 t\nq1 Q0 c -1 1 t\n")
    assert read_run(path).scores == {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}


def test_control_characters_in_ids_are_refused_by_the_readers(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(
        "# a comment may hold \x1b[2J\nq\x1b[31m 0 d1 1\nq1 0 d\x00 1\nq1 0 d\u202e 2\n"
    )
    assert problems_of(read_qrels, path) == [
        f"{path}:2: query id 'q\\x1b[31m' has a control character",
        f"{path}:3: doc id 'd\\x00' has a control character",
        f"{path}:4: doc id 'd\\u202e' has a control character",
    ]
    path.write_text("q1 Q0 a 1 2 t\x07\nq1 Q0 b\x9b 2 1 t\n# \x1b only in a comment\n")
    assert problems_of(read_run, path) == [
        f"{path}:1: tag 't\\x07' has a control character",
        f"{path}:2: doc id 'b\\x9b' has a control character",
    ]
    path.write_text("# \x1b only in a comment\nq1 Q0 a 1 2 t\n")
    assert read_run(path).scores == {"q1": {"a": 2.0}}


@pytest.mark.parametrize(
    "qid, doc_id",
    [("q 1", "d"), ("", "d"), ("#q", "d"), ("q\x1b", "d"), ("q", "d\x00"), ("q", "d\u2028x"),
     ("q", ""), ("q\ud800", "d"), ("q", "d\u202e")],
)  # fmt: skip
def test_writers_refuse_every_id_that_would_not_read_back(tmp_path, qid, doc_id):
    path = tmp_path / "out.txt"
    problems = problems_of(write_qrels, path, {qid: {doc_id: 1}})
    assert len(problems) == 1 and "not writable as a TREC column" in problems[0]
    assert not any(ord(c) < 0x20 or 0xD800 <= ord(c) < 0xE000 for c in problems[0])
    assert problems_of(write_run, path, Run(name="t", scores={qid: {doc_id: 1.0}})) == problems
    assert not path.exists()


def test_write_run_refuses_non_finite_scores_and_bad_tags(tmp_path):
    path = tmp_path / "r.run"
    for score in (math.inf, -math.inf, math.nan):
        problems = problems_of(write_run, path, Run(name="t", scores={"q": {"d": score}}))
        assert problems == [f"{path}: query 'q' doc 'd': score {score!r} is not a finite number"]
    for tag in ("", "a b", "t\x1b"):
        problems = problems_of(write_run, path, Run(name=tag, scores={"q": {"d": 1.0}}))
        assert problems[0].startswith(f"{path}: run tag ") and len(problems) == 1
    assert not path.exists()


def test_a_run_with_mixed_tags_is_named_by_its_file_name_made_an_id(tmp_path):
    path = tmp_path / "my run #2.txt"
    path.write_text("q1 Q0 a 1 2 t1\nq1 Q0 b 2 1 t2\n")
    run = read_run(path)
    assert run.name == "my%20run%20%232.txt"
    write_run(tmp_path / "back.run", run)  # the name is a usable tag
    assert read_run(tmp_path / "back.run").name == run.name
