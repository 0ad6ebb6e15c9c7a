"""Size bounds (issue 42, item 6): ids, query texts, narratives and passages beyond the bounds
docs/safety.md states (`workbench/core/limits.py`) are refused at read time, exit 2 naming the
file and line, before anything runs or is written; values at the bound are taken. Before: a
50 MB query id made `pool` run 55 s at 14.7 GB, a 100 MB query text ran on unseen."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from collection_fixtures import make_collection, workbench

from workbench.core.limits import MAX_ID_CHARS, MAX_PASSAGE_CHARS, MAX_QUERY_CHARS

POOL = ("pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--systems", "bm25",
        "--db", "s.db", "--cache-dir", "cache", "--policy", "static")  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    make_collection(tmp_path, docs=40, queries=2)
    return tmp_path


def append(path: Path, record: dict) -> int:
    """Add a JSONL record; its line number."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    return path.read_text(encoding="utf-8").count("\n")


@pytest.mark.parametrize(
    ("file", "record", "says"),
    [
        ("queries.jsonl", {"_id": "q" * 5_000_000, "text": "w1"}, "characters long"),
        ("queries.jsonl", {"_id": "qx", "text": "w1 " * 40_000}, "'text'"),
        ("queries.jsonl", {"_id": "qx", "text": "w1", "narrative": "n" * (MAX_QUERY_CHARS + 1)},
         "'narrative'"),
        ("corpus.jsonl", {"_id": "dx", "text": "w2 " * (MAX_PASSAGE_CHARS // 3 + 1)}, "'text'"),
        ("corpus.jsonl", {"_id": "dx", "text": "w2", "title": "t" * (MAX_PASSAGE_CHARS + 1)},
         "'title'"),
        ("corpus.jsonl", {"_id": "d" * (MAX_ID_CHARS + 1), "text": "w2"}, "characters long"),
    ],
)  # fmt: skip
def test_pool_refuses_a_value_beyond_its_bound_naming_file_and_line(
    folder: Path, file: str, record: dict, says: str
) -> None:
    line = append(folder / file, record)
    start = time.monotonic()
    result = workbench(*POOL, cwd=folder)
    assert result.returncode == 2, result.stderr[-500:]
    assert f"{file}:{line}:" in result.stderr and says in result.stderr, result.stderr[-500:]
    assert len(result.stderr) < 2000 and time.monotonic() - start < 30
    assert not (folder / "s.db").exists() and not (folder / "s-runs").exists()


def test_trec_and_golden_ids_and_texts_beyond_the_bound_name_file_and_line(folder: Path) -> None:
    long_id = "d" * (MAX_ID_CHARS + 1)
    (folder / "long.qrels").write_text(f"q0 0 d1 1\nq0 0 {long_id} 1\n")
    (folder / "long.run").write_text(f"q0 Q0 d1 1 2.0 s\n{long_id} Q0 d2 2 1.0 s\n")
    (folder / "ok.run").write_text("q0 Q0 d1 1 2.0 s\n")
    result = workbench("eval", "--qrels", "long.qrels", "--run", "ok.run", cwd=folder)
    assert result.returncode == 2 and "long.qrels:2:" in result.stderr, result.stderr[-500:]
    result = workbench("eval", "--qrels", "qrels.tsv", "--run", "long.run", cwd=folder)
    assert result.returncode == 2 and "long.run:2:" in result.stderr, result.stderr[-500:]
    golden = (
        "schema: workbench-golden\nversion: 1\nname: g\ngrade_scale: {0: no, 1: yes}\n"
        "annotators: []\naliases: {}\ncoverage: null\nqueries:\n"
        f"  - id: q0\n    text: {'w ' * MAX_QUERY_CHARS}\n    judgments:\n"
        "      - {doc: d1, grade: 1}\n"
    )
    (folder / "g.yaml").write_text(golden)
    result = workbench("eval", "--qrels", "g.yaml", "--run", "ok.run", cwd=folder)
    assert result.returncode == 2 and "g.yaml:10:" in result.stderr, result.stderr[-500:]


def test_values_at_the_bound_are_taken(folder: Path) -> None:
    at = "d" * MAX_ID_CHARS
    (folder / "at.qrels").write_text(f"q0 0 {at} 1\n")
    (folder / "at.run").write_text(f"q0 Q0 {at} 1 2.0 s\n")
    result = workbench("eval", "--qrels", "at.qrels", "--run", "at.run", "--json", cwd=folder)
    assert result.returncode == 0, result.stderr[-500:]
    assert json.loads(result.stdout)["runs"]["s"]["per_query"]["q0"]["R@10"] == 1.0
    append(folder / "queries.jsonl", {"_id": "qx", "text": "w1 " * (MAX_QUERY_CHARS // 3)})
    result = workbench(*POOL, cwd=folder)
    assert result.returncode == 0, result.stderr[-500:]
