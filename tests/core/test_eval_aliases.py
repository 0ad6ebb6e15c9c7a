"""Identical passages under several ids (aliases) are one document in `workbench eval`."""

from __future__ import annotations

import json

from workbench.cli import main

GOLDEN = """\
schema: workbench-golden
version: 1
name: aliases
grade_scale: {0: not relevant, 1: related, 2: relevant, 3: highly relevant}
annotators: [{name: a, role: human}]
aliases: {copy1: doc1, copy1b: doc1}
queries:
  - id: q
    text: maize pests
    judgments:
      - {doc: doc1, grade: 2, by: [a]}
      - {doc: doc2, grade: 1, by: [a]}
      - {doc: doc3, grade: 0, by: [a]}
"""


def test_a_copy_counts_once_in_rel_and_in_the_top_k(tmp_path, capsys):
    golden = tmp_path / "g.yaml"
    golden.write_text(GOLDEN)
    run = tmp_path / "r.run"
    run.write_text("".join(f"q Q0 {d} {i} {10 - i} r\n" for i, d in enumerate(
        ["doc1", "copy1", "copy1b", "doc3", "doc2"], 1)))  # fmt: skip
    assert main(["eval", "--qrels", str(golden), "--run", str(run), "-k", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    row = report["runs"]["r"]["per_query"]["q"]
    assert row["rel"] == 2  # doc1 and doc2: the copies are doc1, not two more relevant docs
    assert row["P@3"] == 1 / 3 and row["R@3"] == 1 / 2
    codes = {p["code"]: p["level"] for p in report["problems"]}
    assert codes.get("content_duplicate") == "warning" and "duplicate_doc" not in codes


def test_a_corpus_that_shares_no_id_with_the_run_is_reported(tmp_path, capsys):
    golden = tmp_path / "g.yaml"
    golden.write_text(GOLDEN)
    run = tmp_path / "r.run"
    run.write_text("q Q0 doc1 1 2.0 r\nq Q0 doc2 2 1.0 r\n")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "other", "text": "unrelated passage"}\n')
    argv = ["eval", "--qrels", str(golden), "--run", str(run), "--corpus", str(corpus), "--json"]
    assert main(argv) == 0
    messages = [p["message"] for p in json.loads(capsys.readouterr().out)["problems"]]
    assert any("none of its doc ids is in the corpus" in m for m in messages)
