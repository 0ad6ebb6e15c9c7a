"""`workbench eval` must start fast: nothing heavy on its import path (as harlequin checks
that its core never loads textual)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("textual", "torch", "sentence_transformers", "sklearn", "transformers", "scipy", "bm25s")


def loaded_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60, check=True)
    modules = json.loads(done.stdout.splitlines()[-1])
    return {m.split(".")[0] for m in modules}


def test_eval_path_imports_nothing_heavy():
    modules = loaded_after(
        "import workbench.metrics, workbench.audit, workbench.report, workbench.formats, "
        "workbench.commands.eval, workbench.cli"
    )
    assert "workbench" in modules
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_the_eval_command_line_imports_nothing_heavy():
    """A whole `workbench eval` run, dispatcher included, loads nothing heavy."""
    qrels = ROOT / "tests" / "eval_data" / "seed-example.qrels"
    run = ROOT / "golden" / "seed-example.run"
    modules = loaded_after(
        "import contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['eval', '--qrels', '{qrels}', '--run', '{run}']) == 0\n"
    )
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
