"""`eval --chunks` end to end on a real text folder (the demo corpus: Markdown, copies of one
file), pooled and judged through the CLI. The exactness test: when the chunks are exactly the
pooled passages under other ids, every figure equals eval of the same run under the passage
ids, whether the judgments are the store, its golden.yaml or its TREC qrels."""

from __future__ import annotations

import json
import re
import shutil
import zlib
from pathlib import Path

import pytest

import workbench
import workbench.formats.golden  # noqa: F401  (before pytester's inner session, as the plugin's tests)
import workbench.pytest_plugin  # noqa: F401
from workbench.cli import main
from workbench.core.errors import InputError
from workbench.formats import read_run, read_text_folder, write_run
from workbench.formats.passages import DEFAULT_RULE

pytest_plugins = ["pytester"]
DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def oracle(folder: Path, path: Path) -> Path:
    """Grades for every passage of every demo query, fixed by a hash: most 0, some 1-3."""
    queries = [
        json.loads(line)["_id"] for line in (DEMO / "queries.jsonl").read_text().splitlines()
    ]
    lines = []
    for doc in read_text_folder(folder, DEFAULT_RULE):
        for qid in queries:
            draw = zlib.crc32(f"{qid} {doc.doc_id}".encode()) % 10
            lines.append(f"{qid} 0 {doc.doc_id} {max(draw - 6, 0)}\n")
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo folder pooled (static, bm25, a sample outside the pool so coverage is measured),
    judged by an oracle, exported; the chunks file that is its passages under other ids, and
    the pooled run under those ids."""
    root = tmp_path_factory.mktemp("chunks")
    folder = root / "docs"
    shutil.copytree(DEMO / "docs", folder)
    db = root / "s.db"
    assert main(["pool", "--corpus", str(folder), "--queries", str(DEMO / "queries.jsonl"),
                 "--db", str(db), "--systems", "bm25", "--depth", "10", "--sample", "4",
                 "--cache-dir", str(root / "c")]) == 0  # fmt: skip
    assert (
        main(["simulate", "--db", str(db), "--oracle", str(oracle(folder, root / "o.qrels"))]) == 0
    )
    golden, qrels = root / "g.yaml", root / "g.qrels"
    assert main(["export", "--db", str(db), "--golden", str(golden), "--qrels", str(qrels)]) == 0
    renamed = {}
    with (root / "chunks.jsonl").open("w") as out:
        for n, doc in enumerate(read_text_folder(folder, DEFAULT_RULE)):
            renamed[doc.doc_id] = f"chunk-{n:03d}"
            assert doc.span is not None
            out.write(json.dumps({"_id": renamed[doc.doc_id], "source": doc.span.source,
                                  "start": doc.span.start, "end": doc.span.end})
                      + "\n")  # fmt: skip
    run = read_run(root / "s-runs" / "bm25.run")
    write_run(root / "passages.run", run)
    run.scores = {q: {renamed[d]: s for d, s in docs.items()} for q, docs in run.scores.items()}
    write_run(root / "chunks.run", run)
    (root / "renamed.json").write_text(json.dumps(renamed))
    return {"root": root, "folder": folder, "db": db, "golden": golden, "qrels": qrels}


def _under_chunk_ids(value: object, renamed: dict[str, str]) -> object:
    """A JSON value with every passage id written as its chunk id."""
    text = json.dumps(value)
    pattern = re.compile("|".join(re.escape(d) for d in sorted(renamed, key=len, reverse=True)))
    return json.loads(pattern.sub(lambda m: renamed[m.group(0)], text))


@pytest.mark.parametrize("source", ["db", "golden", "qrels"])
def test_chunks_that_are_the_pooled_passages_give_every_figure_of_eval(study, capsys, source):
    root = study["root"]
    common = ["eval", "--qrels", study[source], "--corpus", study["folder"], "-k", "5,10",
              "--json"]  # fmt: skip
    if source == "qrels":
        common.append("--assume-complete")
    code, out, err = run_cli(capsys, *common, "--run", root / "passages.run")
    assert code == 0, err
    code_chunks, out_chunks, err = run_cli(
        capsys, *common, "--run", root / "chunks.run", "--chunks", root / "chunks.jsonl"
    )
    assert code_chunks == code, err
    plain, chunked = json.loads(out), json.loads(out_chunks)
    texts = chunked.pop("chunks")
    assert texts["rule"]["holds"] == 0.5 and texts["rule"]["covers"] == 0.5
    assert texts["files"][0]["relevant_outside"] == 0
    renamed = json.loads((root / "renamed.json").read_text())
    assert chunked == _under_chunk_ids(plain, renamed)
    assert any(r["R@10"] for r in chunked["runs"]["bm25"]["per_query"].values())
    if source != "qrels":
        assert "R@10_est" in json.dumps(chunked)  # the coverage estimate carried over


def test_text_figures_of_the_pooled_passages(study, capsys):
    """Chunks that are the passages: text recall is 1 at a depth holding every relevant one,
    and text precision is the share of relevant text among what was read."""
    root = study["root"]
    code, out, err = run_cli(capsys, "eval", "--qrels", study["db"], "--corpus", study["folder"],
                             "--run", root / "chunks.run", "--chunks", root / "chunks.jsonl",
                             "-k", "1,100", "--json")  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    rows = report["chunks"]["runs"]["bm25"]["per_query"]
    for qid, row in rows.items():
        figures = report["runs"]["bm25"]["per_query"][qid]
        if figures["R@100"] == 1:
            assert row["text_R@100"] == pytest.approx(1)
        if figures["judged@1"] == 1:
            assert row["text_P@1"] == figures["P@1"]
            assert row["text_unjudged@1"] == 0
        assert row["read@1"] <= row["read@100"]
        assert row["text_R@100_low"] <= row["text_R@100_est"] <= row["text_R@100_high"]


def _eval_chunks(capsys, study, chunks: Path, *more: str | Path) -> tuple[int, str, str]:
    root = study["root"]
    return run_cli(capsys, "eval", "--qrels", study["db"], "--corpus", study["folder"],
                   "--run", root / "chunks.run", "--chunks", chunks, "-k", "5", *more)  # fmt: skip


def test_every_bad_chunk_is_exit_2_naming_the_file_and_its_line(study, tmp_path, capsys):
    good = (study["root"] / "chunks.jsonl").read_text().splitlines()
    size = len((study["folder"] / "dairy" / "mastitis.md").read_text(encoding="utf-8"))
    bad = [
        {"_id": "b1", "source": "dairy/nowhere.md", "start": 0, "end": 5},
        {"_id": "b2", "source": "dairy/mastitis.md", "start": 0, "end": size + 1},
        {"_id": "b3", "source": "dairy/mastitis.md", "text": "no such sentence in it"},
        {"_id": "b4", "source": "storage/hermetic-bags.md", "text": "the"},
        {"_id": "b5", "source": "dairy/mastitis.md", "start": 7, "end": 3},
        {"_id": "b6", "source": "dairy/mastitis.md", "start": "0", "end": 3},
        {"_id": "chunk-000", "source": "dairy/mastitis.md", "start": 0, "end": 3},
    ]
    chunks = tmp_path / "bad.jsonl"
    chunks.write_text("\n".join(good + [json.dumps(b) for b in bad]) + "\n")
    before = chunks.read_bytes()
    code, out, err = _eval_chunks(capsys, study, chunks)
    assert code == 2 and out == ""
    first = len(good) + 1
    for n, words in enumerate(["not a .txt/.md file", "runs past the end", "is not found",
                               "found twice", "0 <= start < end", "whole number",
                               "duplicate chunk id"]):  # fmt: skip
        assert f"{chunks}:{first + n}: " in err and words in err, (n, err)
    assert "Traceback" not in err and chunks.read_bytes() == before


def test_located_text_is_a_chunk(study, tmp_path, capsys):
    good = (study["root"] / "chunks.jsonl").read_text().splitlines()
    first = json.loads(good[0])
    text = (study["folder"] / first["source"]).read_text(encoding="utf-8")
    good[0] = json.dumps({"_id": first["_id"], "source": first["source"],
                          "text": text[first["start"] : first["end"]]})  # fmt: skip
    chunks = tmp_path / "by-text.jsonl"
    chunks.write_text("\n".join(good) + "\n")
    code, out, err = _eval_chunks(capsys, study, chunks, "--json")
    assert code == 0, err
    assert json.loads(out)["chunks"]["files"][0]["chunks"] == len(good)


def test_what_is_missing_is_said(study, tmp_path, capsys):
    root = study["root"]
    chunks = root / "chunks.jsonl"
    code, _, err = run_cli(capsys, "eval", "--qrels", study["db"], "--run", root / "chunks.run",
                           "--chunks", chunks)  # fmt: skip
    assert code == 2 and "give --corpus FOLDER" in err
    code, _, err = _eval_chunks(capsys, study, chunks, "--run", root / "passages.run")
    assert code == 2 and "are not chunks of" in err  # passage ids in a run over chunks
    edited = tmp_path / "docs"
    shutil.copytree(study["folder"], edited)
    note = edited / "dairy" / "mastitis.md"
    note.write_text("An added first line.\n" + note.read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = run_cli(capsys, "eval", "--qrels", study["db"], "--corpus", edited, "--run",
                           root / "chunks.run", "--chunks", chunks)  # fmt: skip
    assert code == 2 and "does not read as it was judged" in err and "mastitis.md" in err


def test_a_store_cut_into_paragraphs_has_no_spans_to_map(tmp_path, capsys):
    folder = tmp_path / "docs"
    shutil.copytree(DEMO / "docs", folder)
    db = tmp_path / "p.db"
    assert main(["pool", "--corpus", str(folder), "--queries", str(DEMO / "queries.jsonl"),
                 "--db", str(db), "--systems", "bm25", "--depth", "3", "--passages",
                 "paragraphs", "--cache-dir", str(tmp_path / "c")]) == 0  # fmt: skip
    assert main(["simulate", "--db", str(db), "--oracle", str(DEMO.parents[1] / "golden" /
                                                               "demo.qrels")]) == 0  # fmt: skip
    chunks = tmp_path / "c.jsonl"
    chunks.write_text(json.dumps({"_id": "c1", "source": "dairy/mastitis.md", "start": 0,
                                  "end": 40}) + "\n")  # fmt: skip
    run = tmp_path / "c.run"
    run.write_text("q01 Q0 c1 1 1.0 mine\n")
    capsys.readouterr()
    code, _, err = run_cli(capsys, "eval", "--qrels", db, "--corpus", folder, "--run", run,
                           "--chunks", chunks)  # fmt: skip
    assert code == 2 and "not exact spans" in err and "paragraphs" in err


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_every_output_says_the_rule_and_its_thresholds(study, capsys, fmt):
    code, out, err = _eval_chunks(capsys, study, study["root"] / "chunks.jsonl", "--format", fmt)
    assert code == 0, err
    flat = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", out))
    assert "holds 0.5, covers 0.5, unjudged above 0.5" in flat
    assert "it holds at least 50% of" in flat and "tR@5" in flat and "read@5" in flat


def windows_chunking(study: dict[str, Path], words: int) -> tuple[Path, Path]:
    """The folder cut into windows of `words` words, and a run over them: each query's pooled
    passages' windows, in the pooled order (a retriever over this chunking)."""
    from workbench.formats.textfolder import folder_texts

    root = study["root"]
    texts, _ = folder_texts(study["folder"])
    chunks, by_source = [], {}
    for source, text in texts.items():
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        for i in range(0, len(spans), words):
            chunk = {"_id": f"w{words}-{len(chunks)}", "source": source, "start": spans[i][0],
                     "end": spans[min(i + words, len(spans)) - 1][1]}  # fmt: skip
            chunks.append(chunk)
            by_source.setdefault(source, []).append(chunk)
    path = root / f"w{words}.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in chunks))
    spans = {d.doc_id: d.span for d in read_text_folder(study["folder"], DEFAULT_RULE)}
    run = read_run(root / "passages.run")
    lines = []
    for qid, ranking in sorted(run.rankings().items()):
        seen: list[str] = []
        for doc in ranking:
            span = spans[doc]
            for c in by_source[span.source]:
                if c["start"] < span.end and c["end"] > span.start and c["_id"] not in seen:
                    seen.append(c["_id"])
        lines += [f"{qid} Q0 {c} {n} {100 - n} w{words}\n" for n, c in enumerate(seen, 1)]
    run_path = root / f"w{words}.run"
    run_path.write_text("".join(lines))
    return path, run_path


def test_compare_two_chunkings_on_text_figures(study, capsys):
    small, small_run = windows_chunking(study, 60)
    large, large_run = windows_chunking(study, 400)
    common = ["compare", "--qrels", study["db"], "--corpus", study["folder"], "-k", "5",
              "--run", small_run, "--run", large_run,
              "--chunks", small, "--chunks", large]  # fmt: skip
    code, out, err = run_cli(capsys, *common, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [c["measure"] for c in report["comparisons"]] == ["text_R@5", "text_P@5"]
    assert report["chunks"]["rule"]["unjudged_max"] == 0.5
    assert [f["runs"] for f in report["chunks"]["files"]] == [["w60"], ["w400"]]
    large_means = report["chunks"]["runs"]["w400"]["mean"]
    small_means = report["chunks"]["runs"]["w60"]["mean"]
    assert large_means["read@5"] > small_means["read@5"]  # what the bigger chunks cost
    code, out, err = run_cli(capsys, *common, "--format", "markdown")
    assert code == 0 and "holds 0.5, covers 0.5" in out
    code, _, err = run_cli(capsys, *common, "--measure", "R@5")
    assert code == 2 and "compare on text figures only" in err
    code, _, err = run_cli(capsys, "compare", "--qrels", study["db"], "--run", small_run,
                           "--run", large_run, "--measure", "text_R@5")  # fmt: skip
    assert code == 2 and "go with --chunks" in err


def test_the_python_api_scores_a_run_in_memory_over_chunks(study, capsys):
    root = study["root"]
    scores = read_run(root / "chunks.run").scores
    report = workbench.evaluate(study["golden"], {"mine": scores}, [5, 10],
                                chunks=root / "chunks.jsonl", corpus=study["folder"])  # fmt: skip
    code, out, err = run_cli(capsys, "eval", "--qrels", study["golden"], "--corpus",
                             study["folder"], "--run", root / "chunks.run", "--chunks",
                             root / "chunks.jsonl", "-k", "5,10", "--json")  # fmt: skip
    assert code == 0, err
    cli = json.loads(out)
    assert report.to_json()["runs"]["mine"]["mean"] == cli["runs"]["bm25"]["mean"]
    assert report.to_json()["chunks"]["runs"]["mine"] == cli["chunks"]["runs"]["bm25"]
    with pytest.raises(InputError) as refused:
        workbench.evaluate({"q01": {"x": 1}}, scores, 5, chunks=root / "chunks.jsonl")
    assert any("grades in memory" in p for p in refused.value.problems)
    assert any("corpus: None is not a path" in p for p in refused.value.problems)


def test_the_pytest_plugin_checks_a_run_over_chunks(study, pytester):
    root = study["root"]
    for name in ("chunks.jsonl", "chunks.run"):
        shutil.copy(root / name, pytester.path / name)
    shutil.copy(study["golden"], pytester.path / "golden.yaml")
    shutil.copytree(study["folder"], pytester.path / "docs")
    pytester.makeini("[pytest]\nworkbench_golden = golden.yaml\n")
    pytester.makepyfile(
        test_rag="""
def test_my_chunker_keeps_its_floor(workbench_golden):
    report = workbench_golden.check("chunks.run", k=5, min={"P@5": 0.1},
                                    chunks="chunks.jsonl", corpus="docs")
    assert report.chunking.runs["bm25"].mean["text_R@5"] > 0

def test_a_floor_it_cannot_reach(workbench_golden):
    workbench_golden.check("chunks.run", k=5, min={"P@5": 0.99}, chunks="chunks.jsonl",
                           corpus="docs")
"""
    )
    result = pytester.runpytest("-p", "no:textual-snapshot")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*P@5 = 0.*, below the floor 0.99*", "*text figures (--chunks)*"])


def test_the_worked_example_of_the_docs_reproduces(tmp_path, capsys, monkeypatch):
    """docs/chunks.md's commands, run as written in a checkout's copy, give its table."""
    import subprocess
    import sys

    repo = DEMO.parents[1]
    for part in ("corpora", "golden", "examples"):
        (tmp_path / part).symlink_to(repo / part)
    monkeypatch.chdir(tmp_path)
    page = (repo / "docs" / "chunks.md").read_text(encoding="utf-8")
    block = page.split("## A worked example")[1].split("```sh\n")[1].split("```")[0]
    commands = [c.split() for c in block.replace("\\\n", " ").splitlines() if c.strip()]
    for words in commands[:-1]:
        if words[0] == "workbench":
            extra = ["--cache-dir", str(tmp_path / "c")] if words[1] == "pool" else []
            assert main([*words[1:], *extra]) == 0
            continue
        target = words[words.index(">") + 1] if ">" in words else None
        argv = words[1 : words.index(">")] if target else words[1:]
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=True)
        if target:
            Path(target).write_text(done.stdout)
    capsys.readouterr()
    code, out, err = run_cli(capsys, *commands[-1][1:], "--json")
    assert code == 0, err
    for name, run in json.loads(out)["chunks"]["runs"].items():
        mean = run["mean"]
        row = f"| {name} | {mean['text_R@5']:.3f} | {mean['text_R@5_est']:.3f} "
        row += f"[{mean['text_R@5_low']:.3f}, {mean['text_R@5_high']:.3f}] | "
        row += f"{mean['text_P@5']:.3f} | {mean['text_unjudged@5']:.3f} | {mean['read@5']:,.0f} | "
        row += f"{mean['text_R@10']:.3f} | {mean['text_P@10']:.3f} | {mean['read@10']:,.0f} |"
        assert row in page, row
