"""The vectorised run reader (`formats.trec.table`) and eval's column-wise scoring: whatever
the fast path takes it must read exactly as the strict reader does (same `Run`: names, scores
bit for bit, dict order, warnings), it must take well-formed files, and a report scored from
the reduced rankings must equal the report scored from the `Run`, to the byte."""

from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_file_strategies import regular_query, run_text

from workbench.core.display import json_line
from workbench.core.errors import InputError
from workbench.core.evaluation.eval_report import eval_report
from workbench.core.measures.run_table import judged_rankings
from workbench.formats import read_qrels, read_run
from workbench.formats.trec import table as table_module
from workbench.formats.trec.decimals import _fixed_point, _scientific, parse_scores
from workbench.formats.trec.table import _repeats_a_pair, read_run_table

COLLECTIONS = Path(__file__).resolve().parents[3] / "shared" / "collections"
if not COLLECTIONS.is_dir():
    COLLECTIONS = Path("/work/shared/collections")


def strict(path: Path) -> tuple[str, list, list[str]] | list[str]:
    try:
        run = read_run(path)
    except InputError as exc:
        return exc.problems
    return run.name, [(q, list(d.items())) for q, d in run.scores.items()], run.warnings


def fast(path: Path) -> tuple[str, list, list[str]] | None:
    table = read_run_table(path)
    if table is None:
        return None
    run = table.to_run()
    return run.name, [(q, list(d.items())) for q, d in run.scores.items()], run.warnings


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def assert_same_or_declined(path: Path, must_take: bool = False) -> None:
    taken = fast(path)
    if taken is None:
        assert not must_take, "a well-formed file fell back to the strict reader"
        return
    reference = strict(path)
    assert isinstance(reference, tuple), reference  # the fast path took a file strict refuses
    assert taken[0] == reference[0] and taken[2] == reference[2]
    assert [(q, [(d, bits(s)) for d, s in docs]) for q, docs in taken[1]] == [
        (q, [(d, bits(s)) for d, s in docs]) for q, docs in reference[1]
    ]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=run_text)
def test_what_the_fast_path_takes_reads_as_strict(tmp_path, text):
    path = tmp_path / "fuzz.run"
    path.write_bytes(text.encode())
    assert_same_or_declined(path)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(blocks=st.lists(regular_query, min_size=1, max_size=6), final_newline=st.booleans())
def test_well_formed_files_take_the_fast_path(tmp_path, blocks, final_newline):
    seen: set[str] = set()
    lines = []
    for block in blocks:  # one block per query: the fast path wants a query's lines together
        qid = block[0].split()[0]
        if qid not in seen:
            seen.add(qid)
            lines += block
    path = tmp_path / "good.run"
    path.write_text("\n".join(lines) + ("\n" if final_newline else ""))
    plain = all(
        line.split()[4].lstrip("-").replace(".", "", 1).isdigit() or "e" in line.split()[4]
        for line in lines
    )
    assert_same_or_declined(path, must_take=plain)


score_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: f"{f:.4f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.6e}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.17g}"),
    st.integers(-(10**20), 10**20).map(str),
    st.from_regex(r"-?[0-9]{1,22}(\.[0-9]{1,22})?([eE][+-]?[0-9]{1,4})?", fullmatch=True),
    st.sampled_from(["0", "-0", "-0.0", "00.10", "1e22", "1e23", "9007199254740993", "5e-324"]),
)


@settings(max_examples=500, deadline=None)
@given(texts=st.lists(score_texts, min_size=1, max_size=40))
def test_column_scores_are_float_bit_for_bit(texts):
    width = max(len(t) for t in texts)
    matrix = np.zeros((len(texts), width), np.uint8)
    for row, text in enumerate(texts):
        matrix[row, : len(text)] = np.frombuffer(text.encode(), np.uint8)
    values, exact = parse_scores(matrix)
    for text, value, ok in zip(texts, values.tolist(), exact.tolist(), strict=True):
        if ok:
            assert bits(value) == bits(float(text)), text


fixed_point_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: f"{f:.4f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.17f}"),
    st.integers(-(10**20), 10**20).map(str),
    st.from_regex(r"-?[0-9]{1,22}(\.[0-9]{1,22})?", fullmatch=True),
    st.from_regex(r"-?[0-9.]{1,24}", fullmatch=True),  # '.', '5.', '.5', '1.2.3', '-.5'
    st.sampled_from(["-", "-.", "-0", "-0.0", "0", "00.10", "9007199254740993", "1" * 19]),
)


@settings(max_examples=500, deadline=None)
@given(texts=st.lists(fixed_point_texts, min_size=1, max_size=40))
def test_fixed_point_scores_as_the_state_machine_reads_them(texts):
    """The fast path for scores without an exponent takes the rows the state machine takes,
    with the same bits; both equal `float()`."""
    width = max(len(t) for t in texts)
    matrix = np.zeros((len(texts), width), np.uint8)
    for row, text in enumerate(texts):
        matrix[row, : len(text)] = np.frombuffer(text.encode(), np.uint8)
    found = _fixed_point(matrix)
    assert found is not None
    values, exact = found
    reference, reference_exact = _scientific(matrix)
    assert exact.tolist() == reference_exact.tolist()
    for text, value, ok in zip(texts, values.tolist(), exact.tolist(), strict=True):
        if ok:
            assert bits(value) == bits(float(text)), text


def test_fixed_point_declines_other_bytes():
    for text in ("1e5", "+1", "1-2", "1E5", "--1"):
        matrix = np.frombuffer(text.encode(), np.uint8).reshape(1, -1)
        assert _fixed_point(matrix) is None, text


HOSTILE = {
    "crlf": "q1 Q0 a 1 2.0 t\r\nq1 Q0 b 2 1.0 t\r\n",
    "tabs": "q1\tQ0\ta\t1\t2.0\tt\n",
    "two_spaces": "q1 Q0  a 1 2.0 t\n",
    "blank_line": "q1 Q0 a 1 2.0 t\n\nq1 Q0 b 2 1.0 t\n",
    "leading_space": " q1 Q0 a 1 2.0 t\n",
    "bom": "\ufeffq1 Q0 a 1 2.0 t\n",
    "unicode_id": "q1 Q0 caf\u00e9 1 2.0 t\nq1 Q0 cafe 2 1.0 t\n",
    "nbsp": "q1 Q0 a\u00a0b 1 2.0 t\n",
    "scientific": "q1 Q0 a 1 1.5E+02 t\nq1 Q0 b 2 -3e-5 t\nq1 Q0 c 3 7e0 t\n",
    "plus_and_dots": "q1 Q0 a 1 +2 t\nq1 Q0 b 2 .5 t\nq1 Q0 c 3 5. t\n",
    "long_mantissa": "q1 Q0 a 1 0.12345678901234567 t\nq1 Q0 b 2 12345678901234567890 t\n",
    "duplicate": "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq1 Q0 a 3 0 t\n",
    "interleaved": "q1 Q0 a 1 2 t\nq2 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n",
    "trailing_garbage": "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t x\n",
    "short_line": "q1 Q0 a 1 2 t\nq1 Q0 b 2 1\n",
    "comment": "# header\nq1 Q0 a 1 2 t\n",
    "comment_qid": "#q1 Q0 a 1 2 t\n",
    "nan": "q1 Q0 a 1 nan t\n",
    "inf": "q1 Q0 a 1 1e400 t\n",
    "underscore": "q1 Q0 a 1 1_0 t\n",
    "negative_rank": "q1 Q0 a -1 2 t\nq1 Q0 b 0 1 t\n",
    "huge_rank": "q1 Q0 a 99999999999999999999 2 t\n",
    "mixed_tags": "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 u\n",
    "ties_against_rule": "q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq1 Q0 c 3 0.5 t\n",
    "ranks_backwards": "q1 Q0 a 2 3 t\nq1 Q0 b 1 2 t\n",
    "unsorted_scores": "q1 Q0 a 1 1 t\nq1 Q0 b 2 3 t\nq1 Q0 c 3 2 t\n",
    "no_final_newline": "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t",
    "control": "q1 Q0 a\x1b[2J 1 2 t\n",
    "nul": "q1 Q0 a\x00 1 2 t\n",
    "long_id": f"q1 Q0 {'d' * 300} 1 2 t\n",
    "empty": "",
    "only_newline": "\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_read_as_strict(tmp_path, name):
    path = tmp_path / f"{name}.run"
    path.write_bytes(HOSTILE[name].encode())
    assert_same_or_declined(path)


@pytest.mark.parametrize(
    "bounds", [[0, 1200, 3000, 5000], [0, 2500, 5000], [0, 1000, 3000, 4000, 5000], [0, 1, 5000]]
)
def test_repeated_pairs_found_whatever_their_low_bits(bounds):
    """Queries are compared on their hashes' top 32 bits first (those of one depth together):
    hashes that share those and differ below are not a repeat; equal hashes in one query are,
    in a query of any depth."""
    rnd = np.random.default_rng(5)
    hashes = rnd.integers(0, 2**63, 5000, dtype=np.int64).view(np.uint64)
    bounds = np.array(bounds)
    assert not _repeats_a_pair(hashes, bounds)
    for first, second in ((2100, 2500), (4000, 4999), (1, 2)):
        top_twin = hashes.copy()
        top_twin[second] = (top_twin[first] & np.uint64(0xFFFFFFFF00000000)) | np.uint64(12345)
        assert not _repeats_a_pair(top_twin, bounds)
        twin = hashes.copy()
        twin[second] = twin[first]
        same_query = np.searchsorted(bounds, first, "right") == np.searchsorted(
            bounds, second, "right"
        )
        assert _repeats_a_pair(twin, bounds) == same_query, (first, second)


@pytest.mark.parametrize("block", [7, 40, 333])
def test_small_blocks_read_as_one(tmp_path, monkeypatch, block):
    """Blocks of whole lines: a line longer than the block, lines cut at every place, a last
    line without its newline; hostile files are still declined or read as strict."""
    monkeypatch.setattr(table_module, "_BLOCK", block)
    rnd = random.Random(block)
    lines = []
    for q in range(12):
        score = 9.0
        for rank, d in enumerate(rnd.sample(range(500), rnd.randint(1, 30)), 1):
            score -= rnd.choice((0.0, 0.5, 1 / 3))
            lines.append(f"q{q} Q0 d{'x' * rnd.randint(0, 40)}{d} {rank} {score!r} tag")
    for final_newline in (True, False):
        path = tmp_path / f"blocks-{final_newline}.run"
        path.write_text("\n".join(lines) + ("\n" if final_newline else ""))
        assert_same_or_declined(path, must_take=True)
    for name, text in HOSTILE.items():
        path = tmp_path / f"{name}.run"
        path.write_bytes(text.encode())
        assert_same_or_declined(path)


def test_two_million_lines_shape(tmp_path):
    """Many queries, ties in and against the rule's order, scores that need float()."""
    rnd = random.Random(3)
    lines = []
    for q in range(300):
        score = 20.0
        for rank, d in enumerate(rnd.sample(range(10_000), 60), 1):
            score -= rnd.choice((0.0, 0.0, 0.125, 1 / 3))
            text = repr(score) if rnd.random() < 0.2 else f"{score:.4f}"
            lines.append(f"q{q} Q0 doc{d} {rank} {text} sys\n")
    path = tmp_path / "big.run"
    path.write_text("".join(lines))
    assert_same_or_declined(path, must_take=True)


def report_json(qrels, runs, warnings) -> str:  # type: ignore[no-untyped-def]
    return json_line(eval_report(qrels, runs, [5, 10, 3], run_warnings=warnings).to_json())


def assert_reduced_report_equals(qrels_path: Path, run_path: Path, top: int = 10) -> None:
    qrels = read_qrels(qrels_path)
    table = read_run_table(run_path)
    assert table is not None
    reduced = judged_rankings(table, qrels, top)
    assert reduced is not None
    run = read_run(run_path)
    whole = report_json(qrels, {run.name: run.scores}, {run.name: run.warnings})
    columns = report_json(qrels, {table.name: reduced}, {table.name: table.warnings})
    assert columns == whole


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    sort_scores=st.booleans(),
    tie_order=st.sampled_from(["rule", "reverse", "random"]),
    prefix=st.sampled_from(["d", "document-", "a-doc-id-of-many-words-"]),  # ids of 1-4 words
)
def test_reduced_rankings_score_as_the_run(tmp_path, seed, sort_scores, tie_order, prefix):
    rnd = random.Random(seed)
    run_lines, qrels_lines = [], []
    for q in range(rnd.randint(1, 6)):
        docs = [f"{prefix}{rnd.randint(0, 40)}" for _ in range(rnd.randint(1, 25))]
        docs = list(dict.fromkeys(docs))
        pairs = [(d, float(rnd.choice([0, 0.5, 1, 1, 2, -1]))) for d in docs]
        if sort_scores:
            pairs.sort(key=lambda p: p[1], reverse=True)
            if tie_order != "random":
                pairs.sort(key=lambda p: (p[1], p[0]), reverse=tie_order == "rule")
                pairs.sort(key=lambda p: p[1], reverse=True)
        for rank, (d, s) in enumerate(pairs, 1):
            run_lines.append(f"q{q} Q0 {d} {rank} {s} sys\n")
        for d in rnd.sample([f"{prefix}{i}" for i in range(45)], rnd.randint(0, 12)):
            qrels_lines.append(f"q{q} 0 {d} {rnd.choice([-1, 0, 0, 1, 2, 3])}\n")
    qrels_lines.append("q99 0 dx 1\n")  # a judged query the run lacks
    run_path, qrels_path = tmp_path / "r.run", tmp_path / "q.qrels"
    run_path.write_text("".join(run_lines))
    qrels_path.write_text("".join(qrels_lines))
    assert_reduced_report_equals(qrels_path, run_path)


@pytest.mark.skipif(not COLLECTIONS.is_dir(), reason="shared collections absent")
@pytest.mark.parametrize("name", ["cranfield", "cisi", "cacm", "npl"])
@pytest.mark.parametrize("ties", [False, True], ids=["scores", "tied-scores"])
def test_real_runs_score_as_the_run_and_as_pytrec_eval(tmp_path, name, ties):
    """The differential test, through the fast path: BM25 runs of real collections (rounded to
    one decimal for many ties), the report equal to the strict path's and to pytrec_eval."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    folder = COLLECTIONS / name
    run_path = folder / "runs" / "bm25.run"
    if ties:
        rounded = []
        for line in run_path.read_text().splitlines():
            qid, q0, doc, rank, score, tag = line.split()
            rounded.append(f"{qid} {q0} {doc} {rank} {round(float(score), 1)} {tag}\n")
        run_path = tmp_path / "tied.run"
        run_path.write_text("".join(rounded))
    assert_reduced_report_equals(folder / "qrels.tsv", run_path)
    qrels = read_qrels(folder / "qrels.tsv")
    table = read_run_table(run_path)
    assert table is not None
    report = eval_report(qrels, {"r": judged_rankings(table, qrels, 10)}, [5, 10]).to_json()
    scores = read_run(run_path).scores
    spec = {"P.5,10", "recall.5,10", "ndcg_cut.5,10", "recip_rank", "bpref"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, spec).evaluate(scores)
    names = {"P_5": "P@5", "recall_10": "R@10", "ndcg_cut_10": "nDCG@10", "recip_rank": "MRR"}
    rows = json.loads(json.dumps(report))["runs"]["r"]["per_query"]
    for qid, values in reference.items():
        for measure, key in names.items():
            assert math.isclose(rows[qid][key], values[measure], abs_tol=5e-5), (qid, measure)


@pytest.mark.parametrize("output", ["--json", "--format=table", "--format=markdown"])
def test_eval_command_takes_the_fast_path_and_prints_the_same(
    tmp_path, capsys, monkeypatch, output
):
    """`workbench eval` on a well-formed run scores from the columns; forcing the strict reader
    prints the same report, byte for byte."""
    from workbench.cli import main
    from workbench.flows import runs as eval_command

    rnd = random.Random(5)
    run_lines, qrels_lines = [], []
    for q in range(40):
        score = 9.0
        for rank, d in enumerate(rnd.sample(range(500), 80), 1):
            score -= rnd.choice((0.0, 0.25))
            run_lines.append(f"q{q} Q0 d{d} {rank} {score} sys\n")
        for d in rnd.sample(range(500), 15):
            qrels_lines.append(f"q{q} 0 d{d} {rnd.choice([0, 1, 2])}\n")
    run_path, qrels_path = tmp_path / "r.run", tmp_path / "q.qrels"
    run_path.write_text("".join(run_lines))
    qrels_path.write_text("".join(qrels_lines))
    argv = ["eval", "--qrels", str(qrels_path), "--run", str(run_path), "-k", "5,10", output]
    taken: list[object] = []
    original = eval_command._read_reduced

    def spy(*args):  # type: ignore[no-untyped-def]
        taken.append(result := original(*args))
        return result

    monkeypatch.setattr(eval_command, "_read_reduced", spy)
    code = main(argv)
    columns = capsys.readouterr().out
    assert taken and isinstance(taken[0], eval_command.ReducedRun)
    monkeypatch.setattr(eval_command, "_read_reduced", lambda *args: None)
    assert main(argv) == code
    assert capsys.readouterr().out == columns


def test_a_file_the_fast_path_declines_still_names_its_line(tmp_path):
    path = tmp_path / "bad.run"
    path.write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 high t\n")
    assert read_run_table(path) is None
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert f"{path}:2: score 'high' is not a number" in caught.value.problems


@pytest.mark.parametrize("preset", [None, "1"])
def test_eval_command_asks_numpy_for_plain_pages_unless_told(preset):
    """The command (not the API) turns off numpy's huge pages before numpy loads, unless the
    user set NUMPY_MADVISE_HUGEPAGE."""
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if preset is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = preset
    code = (
        "import os, sys; from workbench.commands.eval import _keep_freed_memory; "
        "assert 'numpy' not in sys.modules; _keep_freed_memory(); "
        "print(os.environ.get('NUMPY_MADVISE_HUGEPAGE'))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (preset or "0")
