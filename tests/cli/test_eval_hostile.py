"""`workbench eval` on awkward and hostile input: every command does its job or exits 2 with a
message naming the file; no traceback; text from data never acts on the terminal."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from coverage_fixtures import DOCS, RUN, build_store

from workbench.cli import main
from workbench.core.audit.audit_coverage import recall_interval
from workbench.core.audit.judged_coverage import coverage_from_summary
from workbench.core.evaluation.eval_report import eval_report
from workbench.core.measures.metrics import MAX_EXPONENTIAL_GRADE, gain_of
from workbench.core.model import Judgment, PoolEntry, Provenance, Query
from workbench.reports.evaluation import render
from workbench.store import Store

ESC = "\x1b"


def evaluate(capsys, *argv: object) -> tuple[int, str, str]:
    code = main(["eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- 1. a query where nothing relevant was found: |Rel| may be 0 ------------------------------


def add_barren_query(path: Path) -> Path:
    """qc: pooled, every pool doc and 40 outside-pool samples judged 0 (the whole queue done)."""
    pool = DOCS[200:206]
    rest = [d for d in DOCS if d not in pool]
    entries = [
        PoolEntry("qc", d, i, provenance=(Provenance("bm25", i + 1, 10.0 - i),))
        for i, d in enumerate(pool)
    ]
    entries += [
        PoolEntry("qc", d, 6 + i, stratum="rest", inclusion_prob=40 / len(rest))
        for i, d in enumerate(rest[:40])
    ]
    with Store(path) as store:
        store.add_queries([Query("qc", "third")])
        store.add_pool_entries(entries)
        store.add_judgments(Judgment("alice", "qc", e.doc_id, 0) for e in entries)
    return path


@pytest.fixture(scope="module")
def barren(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("barren")
    db = add_barren_query(build_store(root / "study.db"))
    golden = root / "study.yaml"
    assert main(["export", "--db", str(db), "--golden", str(golden)]) == 0
    ranked = {**RUN, "qc": ["d200", "d201"]}
    run = write(
        root / "sys.run",
        "".join(
            f"{q} Q0 {d} {r} {10 - r} sys\n"
            for q, docs in ranked.items()
            for r, d in enumerate(docs, 1)
        ),
    )
    return {"db": db, "golden": golden, "run": run}


def test_recall_interval_is_undefined_when_rel_can_be_zero():
    assert recall_interval(0, 0, 0.0, 6.0) is None  # was a ZeroDivisionError
    assert recall_interval(0, 0, 0.0, 0.0) is None
    assert recall_interval(0, 0, 1.0, 6.0) == (0.0, 0.0)  # |Rel| >= 1 for sure: recall is 0
    assert recall_interval(1, 2, 0.0, 4.0) == (0.25, 0.5)  # the judged count bounds |Rel| below
    for bad in (math.nan, math.inf, -1.0):  # never a crash, never a figure built on them
        assert recall_interval(1, 2, bad, 4.0) is None
        assert recall_interval(1, 2, 2.0, bad) is None


@pytest.mark.parametrize("source", ["db", "golden"])
def test_a_query_with_nothing_relevant_found_does_not_crash_eval(barren, capsys, source):
    for strict in ([], ["--strict"]):
        code, out, err = evaluate(
            capsys, "--qrels", barren[source], "--run", barren["run"], "-k", "5", "--json", *strict
        )
        assert code == 1, err  # qc is ranked with no judged relevant document: no_relevant
        report = json.loads(out)
        row = report["runs"]["sys"]["per_query"]["qc"]
        assert row["R@5"] is None and row["R@5_low"] is None and row["R@5_high"] is None
        assert row["R@5_est"] is None
        (qc,) = [p for p in report["problems"] if p["qid"] == "qc" and p["level"] == "error"]
        assert qc["code"] == "no_relevant"
        assert "|Rel| may be 0" in qc["message"] and "undefined" in qc["message"]
        # the other queries keep their intervals
        assert report["runs"]["sys"]["per_query"]["qa"]["R@5_low"] is not None
    code, out, err = evaluate(capsys, "--qrels", barren[source], "--run", barren["run"], "-k", "5")
    assert code == 1 and "Traceback" not in err
    assert next(line for line in out.splitlines() if line.startswith("qc ")).count(" !") == 1


# --- 3. figures a float cannot hold, folders, NaN in a coverage summary ----------------------


def test_exponential_gain_refuses_a_grade_it_cannot_hold(tmp_path, capsys):
    qrels = write(tmp_path / "big.qrels", "q1 0 d1 5000\nq1 0 d2 1\n")
    run = write(tmp_path / "r.run", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    code, out, err = evaluate(capsys, "--qrels", qrels, "--run", run, "--gain", "exponential")
    assert code == 2 and out == ""
    assert f"{qrels}: query q1 doc d1: grade 5000" in err
    assert f"largest grade --gain exponential can take is {MAX_EXPONENTIAL_GRADE}" in err
    # linear gain takes the same grade
    code, out, err = evaluate(capsys, "--qrels", qrels, "--run", run, "--json")
    assert code == 0, err
    assert json.loads(out)["runs"]["t"]["per_query"]["q1"]["nDCG@10"] == pytest.approx(1.0)
    # the largest grade it can take works, and its nDCG is a figure
    at_max = write(tmp_path / "max.qrels", f"q1 0 d1 {MAX_EXPONENTIAL_GRADE}\nq1 0 d2 1\n")
    code, out, err = evaluate(
        capsys, "--qrels", at_max, "--run", run, "--gain", "exponential", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["runs"]["t"]["per_query"]["q1"]["nDCG@10"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="largest grade"):
        gain_of(MAX_EXPONENTIAL_GRADE + 1, "exponential")


def test_a_grade_too_big_for_any_gain_is_exit_2(tmp_path, capsys):
    qrels = write(tmp_path / "huge.qrels", "q1 0 d1 1" + "0" * 400 + "\n")
    run = write(tmp_path / "r.run", "q1 Q0 d1 1 2 t\n")
    code, _, err = evaluate(capsys, "--qrels", qrels, "--run", run)
    assert code == 2 and f"{qrels}:" in err and "grade" in err and "Traceback" not in err


def test_a_grade_too_big_in_a_golden_yaml_names_the_file(tmp_path, capsys):
    text = (Path(__file__).resolve().parents[2] / "golden" / "seed-example.yaml").read_text()
    text = text.replace("  3: highly relevant\n", "  3: highly relevant\n  5000: off the scale\n")
    text = text.replace("{doc: m1, grade: 3,", "{doc: m1, grade: 5000,", 1)
    golden = write(tmp_path / "big.yaml", text)
    run = Path(__file__).resolve().parents[2] / "golden" / "seed-example.run"
    code, _, err = evaluate(capsys, "--qrels", golden, "--run", run, "--gain", "exponential")
    assert code == 2 and f"{golden}: query q_faw doc m1: grade 5000" in err, err


@pytest.mark.parametrize("name", ["somedir", "somedir.yaml"])
def test_a_folder_as_qrels_is_exit_2(tmp_path, capsys, name):
    folder = tmp_path / name
    folder.mkdir()
    run = write(tmp_path / "r.run", "q1 Q0 d1 1 2 t\n")
    code, out, err = evaluate(capsys, "--qrels", f"{folder}/", "--run", run)
    assert code == 2 and out == "" and "folder" in err


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "-3.0"])
@pytest.mark.parametrize("key", ["est_rel", "est_rel_low", "est_rel_high", "completeness_low"])
def test_a_non_finite_or_negative_coverage_figure_is_exit_2_naming_the_field(
    barren, tmp_path, capsys, key, value
):
    lines = barren["golden"].read_text().splitlines()
    start = lines.index("    qa:")
    at = next(i for i in range(start, len(lines)) if lines[i].startswith(f"      {key}:"))
    lines[at] = f"      {key}: {value}"
    golden = write(tmp_path / "bad.yaml", "\n".join(lines) + "\n")
    code, _, err = evaluate(capsys, "--qrels", golden, "--run", barren["run"], "-k", "5")
    assert code == 2, err
    assert f"coverage.queries.qa.{key}" in err and "Traceback" not in err


def test_coverage_summary_refuses_nan_from_any_source():
    judged = {"q": {"a": 1}}
    for value in (math.nan, math.inf, -1.0):
        summary = {"queries": {"q": {"est_rel_low": value, "est_rel_high": 3.0, "status": "x"}}}
        summary["queries"]["q"]["status"] = "incomplete"
        _, problems = coverage_from_summary(summary, judged, source="hand")
        assert any(p.startswith("coverage.queries.q.est_rel_low:") for p in problems)


# --- 2. text from data is shown, never acted on -----------------------------------------------

HOSTILE_QRELS = {
    f"q{ESC}[31m1": {"d1": 1, f"d{ESC}]0;pwn\a2": 0},
    "q2": {"d1": 1},
    "a|b\\": {"d1": 1},
}
HOSTILE_RUNS = {
    f"t{ESC}[31mag": {
        f"q{ESC}[31m1": [f"d{ESC}[2J9", "d1"],
        f"q{ESC}[0mX": ["d1"],
        "q2": ["x|y"],
        "a|b\\": ["d1"],
    }
}


@pytest.mark.parametrize("markdown", [False, True])
def test_control_characters_from_data_are_shown_not_sent(markdown):
    """The readers refuse control characters in ids, but a report shows whatever it is given
    (the Python API, an older store): ids, run tags, problem messages quoting them."""
    report = eval_report(HOSTILE_QRELS, HOSTILE_RUNS, [5])
    out = render(report, "markdown" if markdown else "table")
    assert ESC not in out and "\a" not in out
    bracket = "\\[" if markdown else "["  # Markdown prose escapes what would start markup
    assert f"t␛{bracket}31mag" in out  # the run tag in the heading
    assert f"q␛{bracket}31m1" in out  # a query id in the table (cells escape as prose)
    assert f"d␛{bracket}2J9" in out  # a doc id in a problem line
    assert f"q␛{bracket}0mX" in out  # a query id in the not_in_qrels problem
    if markdown:
        table = [line for line in out.splitlines() if line.startswith("| ")]
        cells = {len(re.findall(r"(?<!\\)\|", line.replace("\\\\", ""))) for line in table}
        assert len(cells) == 1  # every row keeps its columns
        assert "| a\\|b\\\\ |" in out
    # JSON keeps the data as it is (json.dumps escapes control characters)
    text = json.dumps(report.to_json())
    assert ESC not in text and f"t{ESC}[31mag" in json.loads(text)["runs"]


def test_a_run_file_name_is_shown_visibly(tmp_path, capsys):
    """Two runs with one tag are told apart by their file names, which may hold anything."""
    qrels = write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    first = write(tmp_path / "a.run", "q1 Q0 d1 1 2 t\n")
    second = write(tmp_path / f"b{ESC}[2J.run", "q1 Q0 d1 1 2 t\n")
    for fmt in ("table", "markdown", "html"):
        code, out, _ = evaluate(
            capsys, "--qrels", qrels, "--run", first, "--run", second, "--format", fmt
        )
        bracket = "\\[" if fmt == "markdown" else "["
        assert code == 0 and ESC not in out and f"b␛{bracket}2J.run" in out


def test_markdown_cells_keep_their_columns_with_pipes_and_backslashes(tmp_path, capsys):
    qrels = write(tmp_path / "q.qrels", "a|b\\ 0 d1 1\nc\\|d 0 d1 1\n")
    run = write(tmp_path / "r.run", "a|b\\ Q0 d1 1 1 t|x\nc\\|d Q0 d1 1 1 t|x\n")
    code, out, _ = evaluate(
        capsys, "--qrels", qrels, "--run", run, "-k", "5", "--format", "markdown"
    )
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| a\\|b\\\\ | ") and rows[2].startswith("| c\\\\\\|d | ")


def test_stage_names_and_dropped_docs_are_shown_visibly():
    qrels = {"q1": {f"d{ESC}1": 1, "d2": 1}}
    report = eval_report(
        qrels,
        {"r": {"q1": ["d2"]}},
        [1],
        stages=({"q1": [f"d{ESC}1", "d2"]}, {"q1": ["d2"]}),
        stage_names=(f"s{ESC}[1", f"r{ESC}[2"),
    )
    for fmt, bracket in (("table", "["), ("markdown", "\\[")):
        out = render(report, fmt)
        assert ESC not in out and f"s␛{bracket}1 (fetch-K" in out and "d␛1" in out


# --- 8. the capped-recall note only when the two figures differ -------------------------------


def test_capped_note_only_when_the_figures_differ(tmp_path, capsys):
    # q1 has 3 relevant > k = 2 but none in its top 2: capped and honest recall are both 0
    qrels = write(tmp_path / "q.qrels", "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq2 0 e 1\n")
    run = write(tmp_path / "r.run", "q1 Q0 x 1 2 t\nq1 Q0 y 2 1 t\nq2 Q0 e 1 1 t\n")
    code, out, _ = evaluate(capsys, "--qrels", qrels, "--run", run, "-k", "2", "--wide")
    assert code == 0
    assert "more relevant documents than k = 2" in out  # the ceiling lesson stays
    assert "Dividing by min(|Rel|, k)" not in out
    # one hit in q1's top 2: capped 0.750 vs honest 0.667
    run = write(tmp_path / "r2.run", "q1 Q0 a 1 2 t\nq1 Q0 y 2 1 t\nq2 Q0 e 1 1 t\n")
    code, out, _ = evaluate(capsys, "--qrels", qrels, "--run", run, "-k", "2", "--wide")
    assert "would report mean R@2 0.750, not the honest 0.667" in out


def test_json_escapes_c1_and_bidi_controls(tmp_path, capsys):
    """json.dumps(ensure_ascii=False) escapes C0 only: a raw CSI (\\x9b) or a bidi override
    from a file name would reach the terminal; the JSON keeps the same data."""
    qrels = write(tmp_path / "q.qrels", "q1 0 d1 1\n")
    first = write(tmp_path / "a.run", "q1 Q0 d1 1 2 t\n")
    second = write(tmp_path / "b\x9b2J\u202e.run", "q1 Q0 d1 1 2 t\n")
    code, out, _ = evaluate(capsys, "--qrels", qrels, "--run", first, "--run", second, "--json")
    assert code == 0 and "\x9b" not in out and "\u202e" not in out
    assert f"t ({second})" in json.loads(out)["runs"]


def test_html_keeps_markup_from_data_as_text():
    html5lib = pytest.importorskip("html5lib")
    qrels = {"<script>alert(1)</script>": {"d1": 1}, "q2": {"d&1": 1}}
    runs = {"<b>run</b>": {"<script>alert(1)</script>": ["d1"], "q2": [f"x{ESC}]0;pwn\a"]}}
    page = render(eval_report(qrels, runs, [5]), "html")
    assert "<script>" not in page and "<b>run" not in page and ESC not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;run&lt;/b&gt;" in page
    html5lib.HTMLParser(strict=True).parse(page)
