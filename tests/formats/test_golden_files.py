"""The committed golden sets read back strictly and name what they are."""

from __future__ import annotations

from pathlib import Path

from workbench.formats import read_golden, read_qrels, read_text_folder
from workbench.formats.passages import PARAGRAPHS, golden_rule

ROOT = Path(__file__).resolve().parents[2]


def test_demo_golden_set_matches_its_qrels_and_the_demo_corpus():
    golden = read_golden(ROOT / "golden" / "demo.yaml")
    assert "judged by the project's developers" in golden.description
    assert len(golden.queries) == 12
    assert sum(len(docs) for docs in golden.qrels.values()) == 467
    assert {a["role"] for a in golden.annotators} == {"human", "adjudicator"}
    assert golden.coverage is not None and set(golden.coverage["queries"]) == set(golden.qrels)
    assert read_qrels(ROOT / "golden" / "demo.qrels") == golden.expanded_qrels()
    # exported before passage rules were recorded: read as paragraphs, the demo's rule
    assert golden_rule(golden.pool, "demo.yaml") == PARAGRAPHS
    docs = read_text_folder(ROOT / "corpora" / "demo" / "docs", PARAGRAPHS)
    passage_ids = {d.doc_id for d in docs}
    judged = {d for docs in golden.expanded_qrels().values() for d in docs}
    assert judged <= passage_ids
