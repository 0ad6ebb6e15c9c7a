"""Judging-app latency on a 20,000-item pool (200 queries x 100 passages of ~80 words).

Measured on a real `python -m workbench judge` process under a pseudo-terminal (120x35):
  launch   from fork to the first passage's title drawn on the terminal (imports included);
  keypress from writing a grade key to the pty to the next passage's title drawn, which is
           after the grade is committed to SQLite (WAL, synchronous=FULL);
  jump     from Enter in the query picker (/) to a far query's first passage drawn: a passage
           not read ahead, so read from the store when asked for.
With --db URL the store is a PostgreSQL one (an empty database or schema; for example
postgresql://127.0.0.1/test?options=-csearch_path%3Dbench after CREATE SCHEMA bench): every
grade then crosses loopback to the server before the next passage is drawn.
Run: .venv/bin/python bench/judge_latency.py [--grades 500] [--launches 3] [--jumps 20]
     [--db URL]"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pty_app import PtyApp  # noqa: E402
from tui_fixtures import build_store, title_of  # noqa: E402


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=500)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--jumps", type=int, default=20)
    parser.add_argument("--db", help="a PostgreSQL URL of an empty schema (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "bench.db")
        started = time.perf_counter()
        build_store(db, queries=200, per_query=100, words=75).close()
        kind = "PostgreSQL" if args.db else "SQLite"
        print(f"{kind} store: 20,000 pooled items built in {time.perf_counter() - started:.1f} s")

        launches = []
        for _ in range(args.launches):
            # One name throughout: a killed launch's claim on its first item must not keep the
            # timed run (the same annotator) off that item.
            app = PtyApp(["judge", "--db", str(db), "--annotator", "bench"])
            app.wait_for(title_of(0, 0), timeout=30)
            launches.append(time.perf_counter() - app.started)
            app.kill()
        print(
            "launch to first passage (real process, pty): "
            f"median {statistics.median(launches):.2f} s"
            f"  (runs: {', '.join(f'{t:.2f}' for t in launches)})"
        )

        app = PtyApp(["judge", "--db", str(db), "--annotator", "bench"])
        try:
            offset = app.wait_for(title_of(0, 0), timeout=30)
            app.drain(0.5)
            latencies = []
            for item in range(args.grades):
                query, position = divmod(item + 1, 100)
                sent = time.perf_counter()
                app.send(str(item % 4))
                offset = app.wait_for(title_of(query, position), timeout=10, start=offset)
                latencies.append((time.perf_counter() - sent) * 1000)
            jumps = []
            for jump in range(args.jumps):
                query = 20 + jump * 180 // max(args.jumps, 1)  # far from every read-ahead
                app.send("/")
                offset = app.wait_for("filter queries", timeout=10, start=offset)
                app.send(f"q{query}")
                app.drain(0.3)  # the list is filtered
                sent = time.perf_counter()
                app.send("\r")
                offset = app.wait_for(title_of(query, 0), timeout=10, start=offset)
                jumps.append((time.perf_counter() - sent) * 1000)
        finally:
            app.kill()
    print(
        f"grade key to next passage drawn, {len(latencies)} grades: "
        f"p50 {percentile(latencies, 0.5):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms, "
        f"max {max(latencies):.1f} ms"
    )
    if jumps:
        print(
            f"jump to a far query to its passage drawn, {len(jumps)} jumps: "
            f"p50 {percentile(jumps, 0.5):.1f} ms, max {max(jumps):.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
