"""`workbench eval` must start fast: nothing heavy on its import path (as harlequin checks
that its core never loads textual)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "textual", "torch", "sentence_transformers", "sklearn", "transformers", "scipy", "bm25s",
    "onnxruntime", "onnx",
)  # fmt: skip


def loaded_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    modules = json.loads(done.stdout.splitlines()[-1])
    return {m.split(".")[0] for m in modules}


def test_eval_path_imports_nothing_heavy():
    modules = loaded_after(
        "import workbench.core.measures.metrics, workbench.core.audit.audit, "
        "workbench.reports.evaluation, "
        "workbench.formats, workbench.commands.eval, workbench.cli"
    )
    assert "workbench" in modules
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


@pytest.mark.parametrize("source", ["qrels", "golden", "store"])
def test_the_eval_command_line_imports_nothing_heavy(source: str, tmp_path: Path) -> None:
    """A whole `workbench eval` run, dispatcher included, loads nothing heavy, whatever the
    judgments are: TREC qrels, a golden.yaml, or a judgments store (coverage computed)."""
    qrels = {
        "qrels": ROOT / "tests" / "eval_data" / "seed-example.qrels",
        "golden": ROOT / "golden" / "seed-example.yaml",
        "store": tmp_path / "s.db",
    }[source]
    if source == "store":
        from workbench.core.model import Doc, Judgment, PoolEntry, Query
        from workbench.store import Store

        with Store(qrels, create=True) as store:
            store.add_queries([Query("q_milk", "milk")])
            store.add_docs([Doc("d1", "milk"), Doc("d2", "cows")])
            store.add_pool_entries([PoolEntry("q_milk", "d1", 0), PoolEntry("q_milk", "d2", 1)])
            store.add_judgment(Judgment("a", "q_milk", "d1", 2))
    run = ROOT / "golden" / "seed-example.run"
    modules = loaded_after(
        "import contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['eval', '--qrels', '{qrels}', '--run', '{run}']) in (0, 1)\n"
    )
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_eval_on_trec_files_loads_no_store_and_no_yaml() -> None:
    """TREC qrels and a run: no store (sqlite3, psycopg), no YAML, no report renderer for
    --json; the vectorised reader's numpy is all it adds."""
    qrels = ROOT / "tests" / "eval_data" / "seed-example.qrels"
    run = ROOT / "golden" / "seed-example.run"
    probe = (
        "import contextlib, io, json, sys\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['eval', '--qrels', '{qrels}', '--run', '{run}', '--json']) in (0, 1)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
        timeout=60, check=True,
    )  # fmt: skip
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    unwanted = {"workbench.store", "sqlite3", "psycopg", "yaml", "workbench.reports", *HEAVY}
    assert not modules & unwanted, sorted(modules & unwanted)
