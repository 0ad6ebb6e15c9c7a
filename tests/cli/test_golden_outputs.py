"""The JSON every command prints, frozen: the seed example, a pooled and judged demo store, and a
shared collection, compared byte for byte (after masking paths and timings) with the files in
tests/golden_outputs/. A change to a JSON contract shows up here as a diff. Regenerate, only on
purpose, with WORKBENCH_REGEN_GOLDEN=1."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.model import Judgment
from workbench.formats import read_qrels
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parents[1] / "golden_outputs"
COLLECTIONS = ROOT.parent / "shared" / "collections"
REGEN = bool(os.environ.get("WORKBENCH_REGEN_GOLDEN"))
VOLATILE = {"load_seconds", "score_seconds", "created_at", "seconds", "elapsed_s"}

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def run_json(argv: list[str], tmp: Path, digits: int | None = None) -> object:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    assert code in (0, 1), f"{argv}: exit {code}"
    return mask(json.loads(out.getvalue()), str(tmp), digits)


def mask(data: object, tmp: str, digits: int | None = None) -> object:
    """Paths under the test's folder as <tmp> (the checkout as <root>, the environment as
    <prefix>), timings as 0, floats to `digits` decimals where a model computed them."""
    if isinstance(data, dict):
        return {k: 0 if k in VOLATILE else mask(v, tmp, digits) for k, v in data.items()}
    if isinstance(data, list):
        return [mask(v, tmp, digits) for v in data]
    if isinstance(data, str):
        return (
            data.replace(tmp, "<tmp>").replace(sys.prefix, "<prefix>").replace(str(ROOT), "<root>")
        )
    if isinstance(data, float) and digits is not None:
        return round(data, digits)
    return data


def compare(name: str, data: object) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with WORKBENCH_REGEN_GOLDEN=1 once"
    assert text == path.read_text(encoding="utf-8"), f"{name}: the JSON output changed"


def test_seed_example_eval(tmp_path: Path) -> None:
    run = str(ROOT / "golden" / "seed-example.run")
    for name, qrels in (("eval-seed-golden", "golden/seed-example.yaml"),
                        ("eval-seed-qrels", "tests/eval_data/seed-example.qrels")):  # fmt: skip
        argv = ["eval", "--qrels", str(ROOT / qrels), "--run", run, "-k", "5,10", "--json"]
        compare(name, run_json(argv, tmp_path))


def test_seed_example_compare(tmp_path: Path) -> None:
    """The seed run against itself with d1 moved from rank 1 to 4 in q_milk (DESIGN.md)."""
    lines = (ROOT / "golden" / "seed-example.run").read_text(encoding="utf-8").splitlines()
    moved = [
        line.replace(" seed", " moved").replace(" 10.0 ", " 6.5 ")
        if line.startswith("q_milk Q0 d1 ") else line.replace(" seed", " moved")
        for line in lines
    ]  # fmt: skip
    candidate = tmp_path / "moved.run"
    candidate.write_text("\n".join(moved) + "\n", encoding="utf-8")
    argv = ["compare", "--qrels", str(ROOT / "golden" / "seed-example.yaml"), "--run",
            str(ROOT / "golden" / "seed-example.run"), "--run", str(candidate), "-k", "5,10",
            "--json"]  # fmt: skip
    compare("compare-seed", run_json(argv, tmp_path))


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus pooled by BM25 (depth 10, 5 samples per query), judged by an oracle
    answering from golden/demo.qrels and by two humans who disagree on a seeded 15%."""
    folder = tmp_path_factory.mktemp("demo")
    db = folder / "demo.db"
    argv = ["pool", "--corpus", str(ROOT / "corpora" / "demo" / "docs"),
            "--queries", str(ROOT / "corpora" / "demo" / "queries.jsonl"), "--systems", "bm25",
            "--depth", "10", "--sample", "5", "--passages", "paragraphs", "--db", str(db),
            "--cache-dir", str(folder / "cache"), "--json"]  # fmt: skip
    compare("pool-demo", run_json(argv, folder))
    answers = read_qrels(ROOT / "golden" / "demo.qrels")
    rnd = random.Random(7)
    with Store(db) as store:
        rows = []
        for entry in store.pool():
            grade = answers.get(entry.query_id, {}).get(entry.doc_id, 0)
            rows.append(Judgment("ann", entry.query_id, entry.doc_id, grade, graded_at=1.0))
            if rnd.random() < 0.4:
                other = grade if rnd.random() > 0.15 else (grade + 1) % 4
                rows.append(Judgment("bob", entry.query_id, entry.doc_id, other, graded_at=2.0))
        store.add_judgments(rows)
    return db


def test_demo_store_outputs(demo_store: Path) -> None:
    folder = demo_store.parent
    run = str(folder / "demo-runs" / "bm25.run")
    db = str(demo_store)
    compare("coverage-demo", run_json(["coverage", "--db", db, "--json"], folder))
    compare("eval-demo-store", run_json(["eval", "--qrels", db, "--run", run, "-k", "5,10",
                                         "--json"], folder))  # fmt: skip
    compare("agree-demo", run_json(["agree", "--db", db, "--json"], folder))
    compare("import-labels-demo", run_json(["import-labels", "--db", db, "--as", "llm",
                                            str(ROOT / "golden" / "demo.qrels"), "--json"],
                                           folder))  # fmt: skip
    compare("agree-demo-with-model", run_json(["agree", "--db", db, "--json"], folder))


@pytest.mark.slow
def test_judge_model_output(demo_store: Path) -> None:
    folder = demo_store.parent
    argv = ["judge-model", "--db", str(demo_store), "--scorer", "bi-encoder", "--as", "mini",
            "--cache-dir", str(folder / "cache"), "--json"]  # fmt: skip
    compare("judge-model-demo", run_json(argv, folder, digits=4))  # embeddings: float noise


def test_position_bias_output(tmp_path: Path) -> None:
    rnd = random.Random(3)
    lines = []
    for i in range(40):
        for first in ("a", "b"):
            preferred = rnd.choice(("a", "b", "tie", first))
            lines.append(json.dumps({"qid": f"q{i % 5}", "a": f"d{i}", "b": f"e{i}",
                                     "first": first, "preferred": preferred}))  # fmt: skip
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    compare("position-bias", run_json(["position-bias", str(path), "--json"], tmp_path))


@pytest.mark.skipif(not COLLECTIONS.is_dir(), reason="needs ../shared/collections")
def test_shared_collection_eval(tmp_path: Path) -> None:
    cran = COLLECTIONS / "cranfield"
    argv = ["eval", "--qrels", str(cran / "qrels.tsv"), "--run", str(cran / "runs" / "bm25.run"),
            "-k", "5,10,20", "--json"]  # fmt: skip
    compare("eval-cranfield", mask(run_json(argv, tmp_path), str(COLLECTIONS)))
