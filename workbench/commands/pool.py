"""`workbench pool`: run retrievers and pool their top results into a judging store."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TextIO

from workbench.core.display import say
from workbench.core.pooling import STRATEGIES
from workbench.pipeline import BM25_BACKENDS, SYSTEMS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", required=True, help="BEIR corpus.jsonl or a folder of .txt/.md")
    parser.add_argument("--queries", required=True, help="queries .jsonl or a golden.yaml")
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated built-in systems (default {','.join(SYSTEMS)}; '' for none)",
    )
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="FILE",
        help="a TREC run file pooled as one more system under its tag (repeatable)",
    )
    parser.add_argument("--depth", type=int, default=20, help="top-k of each system (default 20)")
    parser.add_argument(
        "--strategy",
        default="rrf",
        choices=list(STRATEGIES),
        help="judging-queue order (default rrf: reciprocal-rank fusion)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for 'random' and --sample (default 0)"
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="N",
        help="also judge N stratified random docs per query from outside the pool",
    )
    parser.add_argument(
        "--bm25-backend",
        default="rank_bm25",
        choices=list(BM25_BACKENDS),
        help="rank_bm25 (default) or bm25s: the same scores, bm25s searches far faster",
    )
    parser.add_argument("--dense-model", metavar="NAME_OR_PATH", help="sentence-transformers model")
    parser.add_argument("--rerank-model", metavar="NAME_OR_PATH", help="cross-encoder model")
    parser.add_argument("--cache-dir", metavar="DIR", help="index and embedding cache")
    parser.add_argument("--runs-dir", metavar="DIR", help="where system runs are written")
    parser.add_argument("--db", required=True, metavar="FILE", help="judgments store (SQLite)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    from workbench.commands.assign import add_overlap_options

    add_overlap_options(parser, required=False)


class StageProgress:
    """One line per stage on stderr: redrawn in place on a terminal, printed once when done
    otherwise (logs stay short)."""

    def __init__(self, stream: TextIO | None = None, width: int = 30):
        self.stream = stream or sys.stderr
        self.width = width
        self.live = self.stream.isatty()
        self.started: dict[str, float] = {}
        self.finished: set[str] = set()
        self.last_finish = time.monotonic()
        """A stage's clock starts when the previous one ended: its first report may come only
        after a model has loaded, and that wait belongs to it."""

    def __call__(self, stage: str, done: int, total: int) -> None:
        start = self.started.setdefault(stage, self.last_finish)
        if stage in self.finished and done < total:
            self.finished.discard(stage)
            self.started[stage] = start = time.monotonic()
        complete = total > 0 and done >= total
        if complete and stage in self.finished:
            return
        now = time.monotonic()
        elapsed = now - start
        if self.live:
            filled = int(self.width * done / total) if total else 0
            bar = "#" * filled + "." * (self.width - filled)
            end = "\n" if complete else ""
            self.stream.write(f"\r{stage:<14} [{bar}] {done}/{total} {elapsed:5.1f}s{end}")
            self.stream.flush()
        elif complete:
            self.stream.write(f"{stage:<14} {done}/{total} in {elapsed:.1f}s\n")
            self.stream.flush()
        if complete:
            self.finished.add(stage)
            self.last_finish = now


def run(args: argparse.Namespace) -> int:
    import os

    from workbench.pipeline import pool_corpus

    # Our own progress lines only: no library tqdm bars (model loading) on stderr.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

    from workbench.commands.assign import apply_overlap, check

    if args.overlap:
        check(args.overlap, args.judges)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    summary = pool_corpus(
        args.corpus,
        args.queries,
        args.db,
        systems=systems,
        run_files=args.run,
        depth=args.depth,
        strategy=args.strategy,
        seed=args.seed,
        sample=args.sample,
        bm25_backend=args.bm25_backend,
        dense_model=args.dense_model,
        rerank_model=args.rerank_model,
        cache_dir=args.cache_dir,
        runs_dir=args.runs_dir,
        progress=StageProgress(),
    )
    overlap = None
    if args.overlap:
        from workbench.store import open_store

        with open_store(args.db) as store:
            overlap = apply_overlap(store, args.overlap, args.seed, args.judges)
    for warning in summary.get("warnings", []):
        say(f"warning: {warning}", file=sys.stderr)
    if args.json:
        keys = ("queries", "systems", "pool_items", "new_items", "aliases", "runs")
        shown = {k: summary[k] for k in keys}
        if args.sample:
            shown["sample"] = summary["sample"]
        if overlap is not None:
            shown["overlap"] = overlap
        print(json.dumps(shown, indent=1))
    else:
        say(render_summary(summary, args.db, args.depth, args.strategy))
        if overlap is not None:
            from workbench.commands.assign import render

            say(render(overlap))
    return 0


def render_summary(summary: dict, db: str, depth: int, strategy: str) -> str:
    lines = [f"Pooled {summary['queries']} queries into {db} (depth {depth}, order {strategy})."]
    width = max(len(name) for name in summary["systems"])
    for name, info in summary["systems"].items():
        if info["status"] == "ok":
            lines.append(f"  {name:<{width}}  ok       run: {summary['runs'][name]}")
        else:
            lines.append(f"  {name:<{width}}  SKIPPED  {info['reason']}")
    skipped = [n for n, i in summary["systems"].items() if i["status"] != "ok"]
    if skipped:
        lines.append(f"The pool was built without {', '.join(skipped)} (see the reason above).")
        if "rerank" in skipped:
            lines.append("A local cross-encoder folder can be given with --rerank-model PATH.")
    lines.append(
        f"Judging queue: {summary['pool_items']} items ({summary['new_items']} new), "
        f"{summary['aliases']} ids of identical passages folded into one item (aliases)."
    )
    sample = summary.get("sample") or {}
    if sample.get("per_query"):
        wanted = sample["per_query"] * summary["queries"]
        line = (
            f"Outside-pool sample for the coverage estimate: {sample['drawn']} documents drawn "
            f"({sample['per_query']} per query asked)"
        )
        if sample["drawn"] < wanted:
            line += "; fewer where the pool already holds (almost) the whole corpus"
        lines.append(line + ".")
    return "\n".join(lines)
