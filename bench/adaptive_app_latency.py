"""The judging app on an adaptive store against the same corpus pooled static, as an annotator
lives it: a real `python -m workbench judge` under a pseudo-terminal (120x35), a grade key
written to the pty, then

  drawn    when the app's first frame after the key arrives (more than PASSAGE_BYTES: the next
           passage, not only an echo); the grade is committed before it (SQLite, WAL);
  settled  when its output then goes quiet for 0.25 s (the status line's figures brought up to
           date after the passage: the adaptive queue's word on the query, the study's ranking);
  launch   from fork to the first passage's status line drawn.

Both stores are pooled from one synthetic collection (bench/synthetic.py, default 6,000
passages x 35 queries, bm25) in the same run; the adaptive figures are also given as ratios to
the static ones. Keys go one at a time, each once the last grade's output went quiet (an
annotator reads before grading).
Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/adaptive_app_latency.py [--docs 6000]
     [--queries 35] [--grades 100]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import synthetic  # noqa: E402
from pty_app import PtyApp  # noqa: E402

PASSAGE_BYTES = 200
QUIET_S = 0.25


def pool(folder: Path, db: Path, policy: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), HF_HUB_OFFLINE="1")
    command = [sys.executable, "-m", "workbench", "pool", "--corpus", str(folder / "corpus.jsonl"),
               "--queries", str(folder / "queries.jsonl"), "--db", str(db), "--systems", "bm25",
               "--cache-dir", str(folder / "cache"), "--policy", policy]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"pool --policy {policy} failed:\n{done.stderr[-3000:]}")


def one_grade(app: PtyApp, key: str, timeout: float = 30.0) -> tuple[float, float]:
    """(drawn, settled) in ms after `key`."""
    before = len(app.raw)
    sent = time.perf_counter()
    app.send(key)
    deadline = sent + timeout
    drawn = last = None
    while time.perf_counter() < deadline:
        size = len(app.raw)
        app._pump(0.002)
        now = time.perf_counter()
        if len(app.raw) > size:
            last = now
            if drawn is None and len(app.raw) - before > PASSAGE_BYTES:
                drawn = now
        elif drawn is not None and last is not None and now - last >= QUIET_S:
            return (drawn - sent) * 1000, (last - sent) * 1000
    raise AssertionError(f"no next passage within {timeout} s")


def grade_latencies(app: PtyApp, grades: int) -> tuple[list[float], list[float]]:
    """(drawn, settled) of `grades` grades, one in three relevant, in ms."""
    drawn, settled = [], []
    for n in range(grades):
        first, last = one_grade(app, "1" if n % 3 == 0 else "0")
        drawn.append(first)
        settled.append(last)
    return drawn, settled


def measure(db: Path, grades: int) -> dict[str, float]:
    app = PtyApp(["judge", "--db", str(db), "--annotator", "bench"])
    try:
        app.wait_for("all: 0", timeout=120)
        launch = time.perf_counter() - app.started
        app.drain(1.0)
        drawn, settled = grade_latencies(app, grades)
    finally:
        app.kill()

    def p95(values: list[float]) -> float:
        return sorted(values)[int(0.95 * (len(values) - 1))]

    return {
        "launch_s": launch,
        "drawn_p50": statistics.median(drawn),
        "drawn_p95": p95(drawn),
        "settled_p50": statistics.median(settled),
        "settled_p95": p95(settled),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=6000)
    parser.add_argument("--queries", type=int, default=35)
    parser.add_argument("--grades", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        synthetic.main([str(folder), "--docs", str(args.docs), "--queries", str(args.queries)])
        figures = {}
        for policy in ("static", "adaptive"):
            db = folder / f"{policy}.db"
            pool(folder, db, policy)
            load = os.getloadavg()[0]
            figures[policy] = measure(db, args.grades)
            f = figures[policy]
            print(
                f"{policy:<8} launch {f['launch_s']:.2f} s; grade key to next passage drawn "
                f"p50 {f['drawn_p50']:.1f} ms, p95 {f['drawn_p95']:.1f} ms; output settled "
                f"p50 {f['settled_p50']:.1f} ms, p95 {f['settled_p95']:.1f} ms  (load {load:.1f})"
            )
        a, s = figures["adaptive"], figures["static"]
        print(
            f"adaptive / static: drawn p95 {a['drawn_p95'] / s['drawn_p95']:.2f}x, settled p95 "
            f"{a['settled_p95'] / s['settled_p95']:.2f}x, "
            f"launch {a['launch_s'] / s['launch_s']:.2f}x"
            f"  ({args.docs:,} passages x {args.queries} queries, {args.grades} grades each)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
