"""What the fuzz tests of the commands share: good input files and a small judged store beside a
hostile file (`build_inputs`), a command run in process with its output caught (`run_main`), a
file's digest to tell it unchanged (`digest`), the store damaged on purpose (`tamper`, `TAMPERS`)
and hypothesis' settings for them (`FUZZ`). The commands run offline, in process and in the
subprocesses that inherit this environment."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sqlite3
from pathlib import Path

from hostile import SAMPLES
from hypothesis import HealthCheck, settings

from workbench.cli import main
from workbench.core.model import Doc, PoolEntry, Query
from workbench.store import Store

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SUFFIX = {"qrels": ".qrels", "run": ".run", "corpus": ".jsonl", "queries": ".jsonl",
          "labels": ".jsonl", "comparisons": ".jsonl", "golden": ".yaml"}  # fmt: skip


def build_inputs(folder: Path) -> dict[str, Path]:
    """Good files and a small judged store beside the hostile file."""
    paths = {}
    for kind in ("qrels", "run", "corpus", "queries"):
        paths[kind] = folder / f"good-{kind}{SUFFIX[kind]}"
        paths[kind].write_text(SAMPLES[kind], encoding="utf-8")
    paths["run2"] = folder / "good-run2.run"  # a second run, for compare
    paths["run2"].write_text(SAMPLES["run"].replace(" sys\n", " sys2\n"), encoding="utf-8")
    paths["db"] = folder / "s.db"
    with Store(paths["db"], create=True) as store:
        store.add_queries([Query("q1", "maize pest"), Query("q2", "scouting")])
        store.add_docs([Doc(f"d{i}", f"maize pest {i}", f"title {i}") for i in range(1, 6)])
        store.add_pool_entries(
            [PoolEntry("q1", "d1", 0), PoolEntry("q1", "d2", 1), PoolEntry("q2", "d3", 0)]
        )
    return paths


def digest(path: Path) -> str:
    """The file's SHA-256 (or "absent"): an input left unchanged keeps it."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"


def run_main(argv: list[str]) -> tuple[int, str]:
    """`workbench argv` in this process: its exit code and all it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue() + err.getvalue()


FUZZ = settings(
    max_examples=int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "25")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def tamper(db: Path, how: str) -> None:
    """Damage the SQLite store `db` one way (`how`: one of TAMPERS)."""
    conn = sqlite3.connect(db)
    statements = {
        "version_text": "UPDATE meta SET value = 'abc' WHERE key = 'schema_version'",
        "version_future": "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
        "version_huge": f"UPDATE meta SET value = '{'9' * 5000}' WHERE key = 'schema_version'",
        "no_pool_table": "DROP TABLE pool",
        "scale_garbage": "UPDATE meta SET value = '{[' WHERE key = 'grade_scale'",
        "scale_words": "UPDATE meta SET value = '{\"x\": \"y\"}' WHERE key = 'grade_scale'",
        "scale_dashes": "UPDATE meta SET value = '{\"--1\": \"y\"}' WHERE key = 'grade_scale'",
        "bad_utf8_text": "UPDATE docs SET text = CAST(X'66FF6F' AS TEXT) WHERE doc_id = 'd1'",
        "blob_id": "INSERT INTO queries VALUES (X'00FF', 9, 'x', '')",
        "escape_text": "UPDATE queries SET query_id = 'q\x1b]2;PWNED\x07' WHERE query_id = 'q2'",
        "corpus_size_text": "INSERT OR REPLACE INTO meta VALUES ('corpus_size', 'many')",
    }
    if how.startswith("truncate"):
        conn.close()
        data = db.read_bytes()
        db.write_bytes(data[: int(how.split(":")[1])])
        return
    if how == "garbage":
        conn.close()
        db.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
        return
    conn.execute(statements[how])
    conn.commit()
    conn.close()


TAMPERS = ["truncate:0", "truncate:50", "truncate:4096", "truncate:9000", "garbage",
           "version_text", "version_future", "version_huge", "no_pool_table", "scale_garbage",
           "scale_words", "scale_dashes", "bad_utf8_text", "blob_id", "escape_text",
           "corpus_size_text"]  # fmt: skip
