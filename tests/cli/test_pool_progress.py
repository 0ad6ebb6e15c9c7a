"""What a pool says while it works, as a user meets it: a model's load is a line with its time,
each stage's bar shows from its start, and a reranker with no local copy is left out at once
(decided without importing torch), not announced and then skipped after seconds of loading."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from pty_app import PtyApp

from workbench.reports.progress import StageProgress

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "corpora" / "demo"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def offline_env(tmp_path: Path) -> dict[str, str]:
    """An empty hub cache, nothing of sentence-transformers' own: no cross-encoder here."""
    env = dict(os.environ, HF_HUB_CACHE=str(tmp_path / "hub"), HF_HUB_OFFLINE="1")
    env.pop("SENTENCE_TRANSFORMERS_HOME", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def test_a_model_load_is_a_line_with_its_time():
    clock, log = Clock(), io.StringIO()
    progress = StageProgress(log, clock=clock)
    clock.now = 5.0  # the inputs were read: no part of the load
    progress("loading all-MiniLM-L6-v2", 0, 1)
    clock.now = 8.1
    progress("loading all-MiniLM-L6-v2", 1, 1)
    assert log.getvalue() == "loading all-MiniLM-L6-v2 ... 3.1s\n"
    clock, out = Clock(), Terminal()
    progress = StageProgress(out, clock=clock)
    progress("bm25 search", 12, 12)
    progress("loading all-MiniLM-L6-v2", 0, 1)  # drawn at once, a bar drawn just before
    assert out.getvalue().endswith("\rloading all-MiniLM-L6-v2 ... 0s\x1b[K")
    clock.now = 2.0
    progress("loading all-MiniLM-L6-v2", 0, 1)  # the heartbeat's redraw: its clock moves on
    assert out.getvalue().endswith("\rloading all-MiniLM-L6-v2 ... 2s\x1b[K")
    clock.now = 3.1
    progress("loading all-MiniLM-L6-v2", 1, 1)
    progress("dense encode", 0, 423)  # drawn at once, though a redraw came just before
    assert "loading all-MiniLM-L6-v2 ... 3.1s\x1b[K\n\rdense encode   [" in out.getvalue()
    assert out.getvalue().endswith("0/423 0s\x1b[K")


def test_no_local_cross_encoder_is_found_without_importing_torch(tmp_path):
    """The decision a pool makes before it announces its systems: milliseconds, no torch, no
    sentence-transformers; a hub cache that holds the model's folder leaves it to the load."""
    script = (
        "import json, sys\n"
        "from workbench.retrieval.registry import models_missing\n"
        "missing = models_missing(['bm25', 'dense', 'rerank'])\n"
        "heavy = sorted({'torch', 'sentence_transformers', 'transformers'} & set(sys.modules))\n"
        "print(json.dumps([missing, heavy]))\n"
    )
    env = offline_env(tmp_path)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    missing, heavy = json.loads(done.stdout)
    assert heavy == []
    assert list(missing) == ["rerank"]  # the packaged dense model is a local folder
    assert "cross-encoder/ms-marco-MiniLM-L6-v2" in missing["rerank"]
    (tmp_path / "hub" / "models--cross-encoder--ms-marco-MiniLM-L6-v2" / "snapshots").mkdir(
        parents=True
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert json.loads(done.stdout)[0] == {}  # a copy may be there: the loader decides


def test_a_pool_without_a_cross_encoder_says_so_once_and_never_imports_torch(tmp_path):
    """`pool --systems bm25,rerank` (progress forced on by a real pty would redraw; stderr
    captured is the log form): rerank is not announced, one line says it is left out and
    why, the summary records it skipped, and the whole process never imports torch."""
    script = (
        "import sys\n"
        "from workbench.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print('torch imported' if 'torch' in sys.modules else 'no torch', file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    argv = ["pool", "--corpus", str(DEMO / "docs"), "--queries", str(DEMO / "queries.jsonl"),
            "--db", str(tmp_path / "d.db"), "--cache-dir", str(tmp_path / "cache"),
            "--systems", "bm25,rerank"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script, *argv], env=offline_env(tmp_path),
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    opening, left_out = done.stderr.splitlines()[:2]
    assert "then bm25 (" in opening and "rerank" not in opening
    assert left_out.startswith("rerank is left out: model 'cross-encoder/ms-marco-MiniLM-L6-v2'")
    assert done.stderr.count("is left out") == 1
    assert "loading ms-marco" not in done.stderr  # no load was tried
    assert done.stderr.splitlines()[-1] == "no torch"
    assert re.search(r"rerank +SKIPPED", done.stdout)


def test_a_cold_dense_pool_on_a_terminal_shows_the_load_then_the_bar_from_its_start(tmp_path):
    """The demo corpus pooled by dense alone, cold (no cached embeddings), under a real pty:
    the model's load is its own line with its time, and the encoding bar is drawn at 0 of the
    passages, as soon as encoding starts (the first count used to come every four batches:
    a 423-passage corpus drew its bar first at 256)."""
    app = PtyApp(["pool", "--corpus", str(DEMO / "docs"), "--queries",
                  str(DEMO / "queries.jsonl"), "--db", str(tmp_path / "d.db"),
                  "--cache-dir", str(tmp_path / "cache"), "--systems", "dense"])  # fmt: skip
    try:
        assert app.wait_exit(timeout=300) == 0
    finally:
        app.kill()
    raw = app.raw.decode("utf-8", "replace")
    load = re.search(r"loading all-MiniLM-L6-v2 \.\.\. (\d+\.\d)s", raw)
    assert load, raw
    draws = re.findall(r"dense encode +\[[#.]+\] (\d+)/(\d+)", raw)
    assert draws and raw.index("dense encode") > load.end()
    assert draws[0] == ("0", draws[0][1])  # drawn at once, before the first batch is done
    assert draws[-1][0] == draws[-1][1]
