"""`workbench demo`: pool the embedded demo corpus once, then open the judging app on it; the
use case (the corpus found, pooled, what it left out) is `workbench.flows.demo`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from workbench.commands.app_launch import open_app, require_terminal
from workbench.commands.shared_options import add_annotator_option
from workbench.core.display import visible
from workbench.flows.demo import (
    DEMO_SYSTEMS,
    installed_demo_corpus,
    is_pooled,
    pool_demo_corpus,
    skipped_notices,
)

DEMO_DB_NAME = "workbench-demo.db"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", type=Path, help=f"the demo store (default: ./{DEMO_DB_NAME} in this directory)"
    )
    add_annotator_option(parser)
    parser.add_argument(
        "--rerank-model",
        metavar="NAME_OR_PATH",
        help="cross-encoder for the reranker, e.g. a local model folder (used when first pooling)",
    )


def run(args: argparse.Namespace) -> int:
    corpus = installed_demo_corpus()
    require_terminal()  # before pooling: the pool is only worth building to judge it
    db = Path(os.path.realpath(args.db or Path.cwd() / DEMO_DB_NAME))  # a loop: said on open
    notices: tuple[str, ...] = ()
    if is_pooled(db):
        print(
            f"Opening the demo pool in {visible(str(db), one_line=True)} (delete that file to pool"
            " again).",
            file=sys.stderr,
        )
        notices = skipped_notices(db)
    else:
        notices = pool_demo(corpus, db, args.rerank_model)
    return open_app(db, args.annotator, notices=notices)


def pool_demo(corpus: Path, db: Path, rerank_model: str | None = None) -> tuple[str, ...]:
    """Pool with BM25, the dense model and the reranker, progress on stderr; returns what the
    app should repeat on screen (a system that was skipped, and why)."""
    from workbench.commands.pool_summary import render_summary
    from workbench.reports.progress import Heartbeat, StageProgress
    from workbench.retrieval.registry import models_missing

    missing = models_missing(DEMO_SYSTEMS, rerank_model=rerank_model)
    running = [name for name in DEMO_SYSTEMS if name not in missing]
    print(
        f"Pooling the demo corpus ({corpus}) into {db}.\n"
        f"Loading {', '.join(running)}: the models load and encode on the CPU; "
        "this takes a little while the first time.",
        file=sys.stderr,
    )
    for name, why in missing.items():
        print(f"{name} is left out: {why}.", file=sys.stderr)
    with Heartbeat(StageProgress()) as progress:
        summary = pool_demo_corpus(corpus, db, progress, rerank_model)
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(render_summary(summary, str(db), 20, "rrf"), file=sys.stderr)
    return skipped_notices(db)
