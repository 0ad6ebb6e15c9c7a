"""`workbench demo`: pool the embedded demo corpus once, then open the judging app on it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from workbench.commands.app_launch import open_app, require_terminal
from workbench.commands.shared_options import add_annotator_option
from workbench.core.display import visible
from workbench.core.errors import InputError

DEMO_SYSTEMS = ("bm25", "dense", "rerank")
DEMO_SAMPLE = 10
"""Random passages per query from outside the pool, mixed blindly into the queue, so the
coverage report can estimate what the pool missed."""
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


def demo_corpus_candidates() -> list[Path]:
    """Where the demo corpus may lie: package data in a wheel, or corpora/ in a checkout."""
    package = Path(__file__).resolve().parent.parent
    return [package / "demo", package.parent / "corpora" / "demo"]


def find_demo_corpus() -> Path | None:
    for candidate in demo_corpus_candidates():
        if (candidate / "docs").is_dir() and (candidate / "queries.jsonl").is_file():
            return candidate
    return None


def is_pooled(db: Path) -> bool:
    if not db.exists():
        return False
    from workbench.store import open_store

    with open_store(db, pooling=True) as store:  # an interrupted pooling: pooled again
        if store.interrupted_pooling() is not None:
            return False
        return bool(store.queries()) and bool(store.pool())


def run(args: argparse.Namespace) -> int:
    corpus = find_demo_corpus()
    if corpus is None:
        looked = ", ".join(str(p) for p in demo_corpus_candidates())
        raise InputError(
            [
                f"the demo corpus is not installed with this workbench (looked in {looked}); "
                "run `workbench demo` from a source checkout, or pool your own corpus with "
                "`workbench pool`"
            ]
        )
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


def skipped_notices(db: Path) -> tuple[str, ...]:
    """What the last pooling of `db` left out and why, to repeat whenever the app opens."""
    from workbench.store import open_store

    with open_store(db) as store:
        poolings = store.poolings()
    skipped = poolings[-1]["params"].get("skipped", {}) if poolings else {}
    return tuple(f"The demo pool was built without {name}: {why}" for name, why in skipped.items())


def pool_demo(corpus: Path, db: Path, rerank_model: str | None = None) -> tuple[str, ...]:
    """Pool with BM25, the dense model and the reranker, progress on stderr; returns what the
    app should repeat on screen (a system that was skipped, and why)."""
    from workbench.commands.pool_summary import render_summary
    from workbench.flows.pool import PoolOptions, pool_corpus
    from workbench.formats.passages import PARAGRAPHS
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
    options = PoolOptions(
        corpus / "docs",
        corpus / "queries.jsonl",
        db,
        systems=DEMO_SYSTEMS,
        sample=DEMO_SAMPLE,
        rerank_model=rerank_model,
        passages=PARAGRAPHS,  # the demo is written a paragraph a passage (its README)
    )
    with Heartbeat(StageProgress()) as progress:
        summary = pool_corpus(options, progress)
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(render_summary(summary, str(db), 20, "rrf"), file=sys.stderr)
    return skipped_notices(db)
