"""`workbench eval` end to end: the JSON contract, the seed example's figures, exit codes."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.evaluation.eval_report import eval_report, exit_code
from workbench.core.model import Level

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parents[1] / "eval_data"
GOLDEN = ROOT / "golden" / "seed-example.yaml"
GOLDEN_RUN = ROOT / "golden" / "seed-example.run"
SEEDS = {
    "golden.yaml": (GOLDEN, GOLDEN_RUN),
    "trec qrels": (DATA / "seed-example.qrels", GOLDEN_RUN),
}
QIDS = ["q_faw", "q_store", "q_milk", "q_broad"]
ROW_KEYS = {"P@5", "R@5", "MRR", "nDCG@5", "bpref", "judged@5", "rel", "ceiling", "pct_of_ceiling"}


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "workbench", "eval", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def approx3(value: float) -> object:
    return pytest.approx(value, abs=5e-4)


@pytest.mark.parametrize("source", list(SEEDS))
def test_seed_example_through_the_cli(source):
    qrels, run = SEEDS[source]
    done = cli("--qrels", str(qrels), "--run", str(run), "-k", "5", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # one object, nothing else on stdout
    assert report["k"] == 5 and list(report["runs"]) == ["seed"]
    rows = report["runs"]["seed"]["per_query"]
    assert list(rows) == QIDS
    assert all(ROW_KEYS <= set(row) for row in rows.values())
    col = lambda key: [rows[q][key] for q in QIDS]  # noqa: E731
    assert col("P@5") == [approx3(v) for v in (0.4, 0.4, 0.4, 0.8)]
    assert col("R@5") == [approx3(v) for v in (0.667, 0.667, 0.667, 0.5)]
    assert col("MRR") == [approx3(v) for v in (1, 0.5, 1, 1)]
    assert col("nDCG@5") == [approx3(v) for v in (0.735, 0.536, 0.811, 0.880)]
    assert col("rel") == [3, 3, 3, 8]
    assert rows["q_broad"]["ceiling"] == 0.625
    assert rows["q_broad"]["pct_of_ceiling"] == pytest.approx(0.8)
    mean = report["runs"]["seed"]["mean"]
    assert mean["R@5"] == approx3(0.625) and mean["P@5"] == approx3(0.5)
    assert mean["nDCG@5"] == approx3(0.741) and mean["queries"] == 4
    assert {p["level"] for p in report["problems"]} <= {"warning"}
    for p in report["problems"]:
        assert {"qid", "level", "code", "message"} <= set(p)


@pytest.mark.parametrize("source", list(SEEDS))
def test_seed_recall_at_10_is_complete(capsys, source):
    qrels, run = SEEDS[source]
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "10", "--json")
    rows = json.loads(out)["runs"]["seed"]["per_query"]
    assert code == 0 and [rows[q]["R@10"] for q in QIDS] == [1.0] * 4


def test_several_cutoffs(capsys):
    qrels, run = SEEDS["trec qrels"]
    for ks in (["-k", "5", "-k", "10"], ["-k", "5,10"]):
        code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, *ks, "--json")
        report = json.loads(out)
        assert code == 0 and report["k"] == 5 and report["ks"] == [5, 10]
        row = report["runs"]["seed"]["per_query"]["q_broad"]
        assert row["R@5"] == 0.5 and row["R@10"] == 1.0
        assert row["ceiling"] == row["ceiling@5"] == 0.625 and row["ceiling@10"] == 1.0
        assert row["judged@10"] == 0.8 and "nDCG@10" in row and "P@10" in row


def test_table_and_markdown_output(capsys):
    qrels, run = SEEDS["trec qrels"]
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "5")
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("query"))
    assert header.split()[:5] == ["query", "|Rel|", "P@5", "R@5", "ceil@5"]
    broad = next(line for line in lines if line.startswith("q_broad"))
    assert broad.split()[:5] == ["q_broad", "8", "0.800", "0.500", "0.625"]
    assert any(line.startswith("mean (4 q)") and "0.625" in line for line in lines)
    out = " ".join(out.split())  # notes wrap to the terminal's width
    assert "would report mean R@5 0.700, not the honest 0.625" in out
    assert "unjudged_in_top_k" in out
    code, md, _ = run_main(
        capsys, "--qrels", qrels, "--run", run, "-k", "5", "--format", "markdown"
    )
    assert code == 0 and "| q_broad | 8 | 0.800 | 0.500 | 0.625 | 80% |" in md


def test_no_note_when_no_query_is_capped(capsys):
    qrels, run = SEEDS["trec qrels"]
    _, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "10")
    assert "min(|Rel|, k)" not in out


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_undefined_figure_exits_1_even_without_strict(tmp_path, capsys):
    qrels = write(tmp_path / "q.qrels", "1 0 a 1\n2 0 b 0\n")
    run = write(tmp_path / "r.run", "1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n")
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "5", "--json")
    report = json.loads(out)
    assert code == 1
    assert [(p["qid"], p["code"]) for p in report["problems"] if p["level"] == "error"] == [
        ("2", "no_relevant")
    ]
    assert report["runs"]["t"]["per_query"]["2"]["R@5"] is None
    assert report["runs"]["t"]["mean"]["queries"] == 1


def test_no_common_query_exits_1(tmp_path, capsys):
    qrels = write(tmp_path / "q.qrels", "1 0 a 1\n")
    run = write(tmp_path / "r.run", "7 Q0 a 1 2.0 t\n")
    code, out, err = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "5")
    assert code == 1 and "no_queries" in out and "exit 1" in err


def test_strict_turns_error_problems_into_exit_1():
    report = eval_report({"q": {"a": 1, "b": 1}}, {"t": {"q": ["a", "a", "b"]}}, 5)
    assert [p.code for p in report.problems if p.level == "error"] == ["duplicate_doc"]
    assert exit_code(report) == 0 and exit_code(report, strict=True) == 1
    assert report.runs["t"].per_query["q"].values["R@5"] == 1.0  # a counted once, b found


def test_strict_passes_a_clean_run(tmp_path, capsys):
    qrels = write(tmp_path / "q.qrels", "1 0 a 1\n1 0 b 0\n")
    run = write(tmp_path / "r.run", "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "2", "--strict", "--json")
    (gate,) = json.loads(out)["problems"]  # TREC qrels: nothing measured their completeness
    assert code == 1 and (gate["code"], gate["level"]) == ("coverage_not_measured", "error")
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "2", "--strict", "--json",
                            "--assume-complete")  # fmt: skip
    assert code == 0 and json.loads(out)["problems"] == []
    assert json.loads(out)["assume_complete"] is True
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "2", "--json")
    assert code == 0 and json.loads(out)["problems"] == []  # no gate asked: as it always was


def test_fail_under_on_trec_qrels_needs_the_assumption_stated(tmp_path, capsys):
    """A floor is a gate: on qrels that carry no completeness measure it failed nothing (exit
    0 where the same judgments as a store exit 1); now it fails until the user states the
    assumption, which the text and --json then name."""
    qrels = write(tmp_path / "q.qrels", "1 0 a 1\n1 0 b 0\n")
    run = write(tmp_path / "r.run", "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    floor = ("--qrels", qrels, "--run", run, "-k", "2", "--fail-under", "R@2=0.5")
    code, out, err = run_main(capsys, *floor)
    assert code == 1 and "error [coverage_not_measured]" in out and "exit 1" in err
    assert "--assume-complete" in out and "study.db" in out
    code, out, _ = run_main(capsys, *floor, "--assume-complete")
    assert code == 0 and "assumed complete (--assume-complete)" in out
    assert "coverage_not_measured" not in out


@pytest.mark.parametrize(
    ("qrels_text", "run_text", "expected"),
    [
        ("1 0 a 1\n1 0 b\n", "1 Q0 a 1 2.0 t\n", "q.qrels:2:"),
        ("1 0 a 1\n", "1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n", "r.run:2:"),
        ("1 0 a 1\n", "1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n", "r.run:2:"),
    ],
)
def test_bad_input_exits_2_naming_file_and_line(tmp_path, capsys, qrels_text, run_text, expected):
    qrels = write(tmp_path / "q.qrels", qrels_text)
    run = write(tmp_path / "r.run", run_text)
    code, out, err = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "5")
    assert code == 2 and expected in err and out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["-k", "0"],
        ["-k", "five"],
        ["--rel-threshold", "0"],
        ["--stage1", "x.run"],
    ],
)
def test_bad_options_exit_2(capsys, argv):
    qrels, run = SEEDS["trec qrels"]
    code, _, err = run_main(capsys, "--qrels", qrels, "--run", run, *argv)
    assert code == 2 and err.startswith("error:")


def test_missing_files_exit_2_and_report_every_problem(capsys, tmp_path):
    code, _, err = run_main(
        capsys, "--qrels", tmp_path / "none.qrels", "--run", tmp_path / "none.run"
    )
    assert code == 2 and "none.qrels" in err and "none.run" in err


def test_several_runs_keep_distinct_names(tmp_path, capsys):
    qrels, run = SEEDS["trec qrels"]
    other = write(tmp_path / "other.run", "q_faw Q0 m1 1 3.0 bm25\nq_faw Q0 m3 2 2.0 bm25\n")
    code, out, _ = run_main(
        capsys, "--qrels", qrels, "--run", run, "--run", run, "--run", other, "-k", "5", "--json"
    )
    report = json.loads(out)
    assert list(report["runs"]) == ["seed", f"seed ({run})", "bm25"]
    bm25 = report["runs"]["bm25"]
    assert bm25["per_query"]["q_faw"]["R@5"] == pytest.approx(2 / 3)
    assert bm25["mean_covers"]["missing_from_run"] == ["q_store", "q_milk", "q_broad"]
    assert bm25["mean"]["R@5"] == pytest.approx(2 / 3 / 4)  # absent queries score 0
    assert {p["run"] for p in report["problems"]} == {"seed", f"seed ({run})", "bm25"}


def test_corpus_gives_coverage_and_content_duplicates(tmp_path, capsys):
    qrels, run = SEEDS["trec qrels"]
    docs = [
        {"_id": d, "title": "", "text": f"passage {d}"}
        for d in "m1 m2 m3 m4 m5 m6 s1 s2 s3 s4 d1 d2 d3 d4 d5 p1 p2 p3 p4 p5 x1 x2 x3 x4".split()
    ]
    docs[-2]["text"] = "Passage, M2!"  # x3 is a re-ingested copy of m2
    corpus = write(tmp_path / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    code, out, _ = run_main(
        capsys, "--qrels", qrels, "--run", run, "-k", "5", "--corpus", corpus, "--json"
    )
    report = json.loads(out)
    audit = report["runs"]["seed"]["audit"]["q_broad"]
    assert code == 0 and audit["coverage_basis"] == "corpus"
    assert audit["label_coverage"] == pytest.approx(8 / 24)
    dupes = [p for p in report["problems"] if p["code"] == "content_duplicate"]
    assert [(p["qid"], p["level"]) for p in dupes] == [("q_faw", "warning")]


def test_two_stages(tmp_path, capsys):
    qrels, run = SEEDS["trec qrels"]
    stage2 = write(
        tmp_path / "rerank.run",
        "".join(
            f"q_faw Q0 {d} {i + 1} {9 - i}.0 rerank\n" for i, d in enumerate("m1 m2 x3".split())
        ),
    )
    code, out, _ = run_main(
        capsys, "--qrels", qrels, "--stage1", run, "--stage2", stage2, "-k", "3", "--json"
    )
    report = json.loads(out)
    staged = report["two_stage"]
    assert code == 0 and staged["stage1"] == "seed" and staged["stage2"] == "rerank"
    assert staged["per_query"]["q_faw"]["fetch_recall"] == 1.0
    assert staged["per_query"]["q_faw"]["keep_recall"] == pytest.approx(2 / 3)
    assert staged["per_query"]["q_faw"]["dropped"] == ["m3"]
    assert list(report["runs"]) == ["rerank"]  # without --run, stage 2 is the run scored
    code, text, _ = run_main(
        capsys, "--qrels", qrels, "--stage1", run, "--stage2", stage2, "-k", "3"
    )
    assert "two stages: seed" in text and "stage2_dropped" in text


def test_reader_warnings_become_problems(tmp_path, capsys):
    qrels = write(tmp_path / "q.qrels", "1 0 a 1\n")
    run = write(tmp_path / "r.run", "1 Q0 a 2 2.0 t\n1 Q0 b 1 1.0 t\n")
    code, out, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "2", "--json")
    report = json.loads(out)
    assert code == 0
    assert [p["code"] for p in report["problems"] if p["qid"] is None] == ["run_file"]
    assert report["runs"]["t"]["per_query"]["1"]["MRR"] == 1.0  # order from the scores


def test_the_report_is_typed_and_to_json_is_its_one_plain_edge():
    qrels = {"q": {"a": 1, "b": 1, "c": 0}, "r": {"d": 0}}
    report = eval_report(qrels, {"t": {"q": ["a", "a", "x"], "r": ["d"]}}, [2, 3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.gain = "exponential"  # type: ignore[misc]
    assert report.k == 2 and report.ks == (2, 3)
    run = report.runs["t"]
    assert run.per_query["q"].rel == 2 and run.per_query["q"].values["R@3"] == 0.5
    assert run.mean.queries == 1 and run.mean_covers.left_out_no_relevant == ["r"]
    assert run.audit["q"].duplicate_ids == ("a",)
    assert {(p.code, p.level, p.run) for p in report.problems if p.level == Level.ERROR} == {
        ("duplicate_doc", "error", "t"),
        ("no_relevant", "error", "t"),
    }
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data  # plain: no tuple, no enum, no dataclass
    assert all(type(p["level"]) is str for p in data["problems"])
    assert data["runs"]["t"]["audit"]["q"]["duplicate_ids"] == ["a"]
    row = data["runs"]["t"]["per_query"]["q"]
    assert row["ceiling"] == row["ceiling@2"] and row["pct_of_ceiling"] == row["pct_of_ceiling@2"]
    assert list(row)[-3:] == ["rel", "ceiling", "pct_of_ceiling"]
    assert exit_code(report) == 1  # no_relevant: a figure is undefined


def test_html_is_one_well_formed_page(capsys):
    html5lib = pytest.importorskip("html5lib")
    qrels, run = SEEDS["golden.yaml"]
    code, page, _ = run_main(capsys, "--qrels", qrels, "--run", run, "-k", "5", "--format", "html")
    assert code == 0 and page.startswith("<!DOCTYPE html>")
    html5lib.HTMLParser(strict=True).parse(page)
    assert '<td class="left">q_broad</td>' in page and "<tfoot>" in page
    assert "unjudged_in_top_k" in page and "Dividing by min(|Rel|, k)" in page
