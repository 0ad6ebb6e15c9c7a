"""`workbench judge`: open the judging app on one annotator's queue."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from workbench.errors import InputError


def default_annotator() -> str:
    return os.environ.get("USER") or "annotator"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, type=Path, help="the judgments store (SQLite)")
    parser.add_argument(
        "--annotator", default=default_annotator(), help="your name (default: $USER)"
    )
    parser.add_argument(
        "--rel-threshold", type=int, default=1, help="lowest grade counted as relevant"
    )


def open_app(
    db: Path, annotator: str, rel_threshold: int = 1, notices: tuple[str, ...] = ()
) -> int:
    """Run the app on an existing, pooled store; returns the exit code."""
    from workbench.store import Store

    annotator = annotator.strip()
    if not annotator:
        raise InputError(["--annotator: a name is required"])
    store = Store(db)
    try:
        pool = store.pool()
        if not pool:
            raise InputError([f"{db}: the store has no pool yet (build one with `workbench pool`)"])
        # Textual paints at most MAX_FPS times a second; at its default 60 a grade waits up to
        # 17 ms for the next paint. 120 cut p95 grade-to-next-passage from ~45 to ~30 ms.
        os.environ.setdefault("TEXTUAL_FPS", "120")
        from workbench.tui.app import JudgeApp

        JudgeApp(store, annotator, rel_threshold, pool=pool, notices=notices).run()
    finally:
        store.close()
    return 0


def run(args: argparse.Namespace) -> int:
    return open_app(args.db, args.annotator, args.rel_threshold)
