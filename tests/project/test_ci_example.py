"""The docs' CI workflow (docs/ci.md) runs as written: its steps, taken from the page, run in a
shell on the demo's runs and golden set and do what the page says they do (the compare step
passes, the gate fails on the recall floor's lower end and on incomplete judgments)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CI_PAGE = ROOT / "docs" / "ci.md"


def workflow_steps() -> list[dict]:
    """The workflow's steps, from the yaml block of the docs' CI page."""
    page = CI_PAGE.read_text(encoding="utf-8")
    section = page[page.index("# In CI: a workflow for pull requests") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None, "the CI page has no yaml block"
    return yaml.safe_load(block.group(1))["jobs"]["eval"]["steps"]


def run_step(step: dict, tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """One `run:` step in bash, in the repository, with `workbench` this interpreter's."""
    shim = tmp_path / "bin" / "workbench"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m workbench "$@"\n')
    shim.chmod(0o755)
    summary = tmp_path / "summary.md"
    summary.touch()
    env = {
        **os.environ,
        "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=ROOT, env=env, capture_output=True, text=True
    )
    return done, summary.read_text(encoding="utf-8")


def test_the_workflow_is_the_light_install_then_compare_then_the_gate():
    steps = workflow_steps()
    runs = [s["run"] for s in steps if "run" in s]
    assert runs[0] == "pip install ."
    assert runs[1].startswith("workbench compare") and "--fail-on-regression" in runs[1]
    assert runs[2].startswith("workbench eval") and "--strict" in runs[2]
    assert "--fail-under" in runs[2]


def test_the_compare_step_passes_and_writes_the_markdown_table(tmp_path):
    step = [s for s in workflow_steps() if s.get("run", "").startswith("workbench compare")][0]
    done, summary = run_step(step, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| nDCG@10 |" in summary
    row = next(line for line in summary.splitlines() if line.startswith("| nDCG@10 |"))
    assert "better" in row


def test_the_gate_fails_on_the_floor_and_the_incomplete_judgments_as_the_docs_say(tmp_path):
    step = [s for s in workflow_steps() if s.get("run", "").startswith("workbench eval")][0]
    done, _ = run_step(step, tmp_path)
    out = " ".join((done.stdout + done.stderr).split())  # notes wrap to the terminal's width
    assert done.returncode == 1, out
    assert "R@10 = 0.7263 against the judged set" in out
    assert "is 0.3087" in out and "below the floor 0.5" in out
    assert "nDCG@10 = 0.8553, clears the floor 0.6" in out
    assert "incomplete_judgments" in out
    assert "a floor not cleared: see floors above; error-level problems above" in out
    page = CI_PAGE.read_text(encoding="utf-8")
    assert "0.726 against the judged set but\n0.309 at the lower end" in page
