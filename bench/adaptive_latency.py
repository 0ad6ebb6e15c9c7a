"""How long the adaptive queue takes to decide, as the app lives it: after each grade, record
it (similarities; a refit of the relevance model every 20 grades) and choose the next passage
(with the stopping check). On a store pooled with --policy adaptive from a real collection
(default cranfield: 225 queries, bm25 + dense run files), an oracle grading query by query as
an annotator would. Prints the 50th/95th/99th percentile and the worst, in ms (target: p95
under 50 ms).

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/adaptive_latency.py [--collection cranfield]
       [--runs DIR with bm25.run and dense.run (default: made by `workbench pool`)] [--steps 3000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", default="cranfield")
    parser.add_argument("--collections-dir", default=str(ROOT.parent / "shared" / "collections"))
    parser.add_argument("--runs", help="folder holding bm25.run and dense.run")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--cache-dir", default=str(ROOT / ".workbench-cache"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from workbench.core.adaptive.chooser import policy_chooser
    from workbench.flows.adaptive import session_from_store
    from workbench.flows.pool import PoolOptions, pool_corpus
    from workbench.formats import read_qrels
    from workbench.store import open_store

    root = Path(args.collections_dir) / args.collection
    truth = read_qrels(root / "qrels.tsv")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "study.db"
        options = (
            dict(
                systems=(), run_files=[Path(args.runs) / "bm25.run", Path(args.runs) / "dense.run"]
            )
            if args.runs
            else dict(systems=("bm25", "dense"), bm25_backend="bm25s", cache_dir=args.cache_dir)
        )  # noqa: E501
        asked = PoolOptions(root / "corpus.jsonl", root / "queries.jsonl", db,
                            policy="adaptive", runs_dir=Path(tmp) / "runs", **options)  # fmt: skip
        pool_corpus(asked)
        with open_store(db) as store:
            started = time.perf_counter()
            session = session_from_store(store)
            opened = time.perf_counter() - started
            queries = [q.query_id for q in store.queries()]
        choose = policy_chooser(session, queries)
        times = []
        current = queries[0]
        key = choose(current)
        for _ in range(args.steps):
            if key is None:
                break
            query_id, doc_id = key
            grade = truth.get(query_id, {}).get(doc_id, 0)
            started = time.perf_counter()
            session.record(query_id, doc_id, grade >= 1)
            key = choose(query_id)
            times.append(time.perf_counter() - started)
    times.sort()

    def at(q: float) -> float:
        return times[min(len(times) - 1, int(q * len(times)))] * 1000

    print(
        f"{args.collection}: {len(queries)} queries, {len(times)} decisions; session from the "
        f"store {opened:.1f} s; decision p50 {at(0.5):.1f} ms, p95 {at(0.95):.1f} ms, "
        f"p99 {at(0.99):.1f} ms, worst {times[-1] * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
