"""The judging app's launch on a given store, N times: a real `python -m workbench judge` on a
pseudo-terminal (120x35), from fork to the app's first frame ("reading the store…") and to the
first passage drawn whole ("end of passage": the bench stores' passages fit the screen), each
on a fresh copy of the store (the grades of one launch never reach the next; nothing is
graded). Prints each launch and the median (not a timed test).

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/app_launch.py STORE.db [--runs 10]
     (a store bench/scale.py --adaptive made: /tmp/workbench-scale/pool-100000-adaptive-*.db)"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pty_app import PtyApp  # noqa: E402


def launch(db: Path) -> tuple[float, float]:
    """(first frame, first passage) in seconds after the fork."""
    app = PtyApp(["judge", "--db", str(db), "--annotator", "bench"])
    try:
        app.wait_for("reading the store", timeout=120)
        frame = time.perf_counter() - app.started
        app.wait_for("end of passage", timeout=120)
        return frame, time.perf_counter() - app.started
    finally:
        app.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from workbench.store import open_store

    with open_store(args.store) as store:  # opened and closed: no WAL left beside it to copy
        store.title  # noqa: B018
    passages = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            copy = Path(tmp) / f"launch-{run}.db"
            shutil.copy(args.store, copy)
            frame, passage = launch(copy)
            passages.append(passage)
            print(f"launch {run + 1}: frame {frame:.2f} s, first passage {passage:.2f} s  "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    print(f"first passage: median {statistics.median(passages):.2f} s, "
          f"{min(passages):.2f}-{max(passages):.2f} s over {args.runs} launches")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
