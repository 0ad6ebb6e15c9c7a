"""The commands as a user runs them, on data this suite did not pick: a seeded random collection
(`make_collection`), `python -m workbench` in a subprocess (`workbench`) and a store pooled from
the collection by it (`pooled`). For the tests of faults, output targets, disks and folders."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "WORKBENCH_DEBUG": ""}
"""Offline, and without the traceback a debug run prints: what a user's shell gives."""


def workbench(
    *argv: object, cwd: Path, timeout: float = 60, **kw: object
) -> subprocess.CompletedProcess[str]:
    """`python -m workbench argv` in `cwd`, its output captured as text; `kw` goes to
    subprocess.run (a `preexec_fn`, say)."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", *map(str, argv)],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=ENV, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def make_collection(folder: Path, seed: int = 0, docs: int = 300, queries: int = 6) -> None:
    """A random corpus (words no model knows), queries and qrels: data this suite did not pick."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(400)]
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        for i in range(docs):
            text = " ".join(rng.choices(words, k=rng.randint(8, 60)))
            out.write(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n")
    with (
        open(folder / "queries.jsonl", "w", encoding="utf-8") as q,
        open(folder / "qrels.tsv", "w", encoding="utf-8") as qrels,
    ):
        for j in range(queries):
            q.write(json.dumps({"_id": f"q{j}", "text": " ".join(rng.choices(words, k=4))}) + "\n")
            for d in rng.sample(range(docs), rng.randint(3, 25)):
                qrels.write(f"q{j} 0 d{d} {rng.choice([0, 1, 2, 3])}\n")


def pooled(folder: Path, name: str = "s.db", *extra: object) -> Path:
    """`workbench pool` of the collection in `folder` by bm25 into `name` (a static pool unless
    `extra` gives other options); fails the test if it does not exit 0."""
    result = workbench(
        "pool", "--corpus", "corpus.jsonl", "--queries", "queries.jsonl", "--systems", "bm25",
        "--db", name, "--cache-dir", "cache", *(extra or ("--policy", "static")), cwd=folder,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return folder / name
