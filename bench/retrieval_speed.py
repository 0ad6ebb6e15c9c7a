"""Retriever speed on a real collection (prints figures; not a timed test).

BM25 index build (cold, empty cache), cache load (warm) and search of every query at depth
1000 for both backends, with score parity between them; dense encoding throughput (passages/s)
and query search time with the packaged MiniLM.

    .venv/bin/python bench/retrieval_speed.py [cranfield] [--no-dense]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from workbench.core.model import Doc, Query
from workbench.retrieval import BM25Retriever, DenseRetriever

COLLECTIONS = Path(__file__).resolve().parents[2] / "shared" / "collections"


def load(name: str) -> tuple[list[Doc], list[Query]]:
    folder = COLLECTIONS / name
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    docs = [Doc(r["_id"], r.get("text", ""), r.get("title", "")) for r in rows]
    rows = [json.loads(line) for line in (folder / "queries.jsonl").open(encoding="utf-8")]
    return docs, [Query(r["_id"], r["text"]) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("collection", nargs="?", default="cranfield")
    parser.add_argument("--no-dense", action="store_true")
    args = parser.parse_args()
    docs, queries = load(args.collection)
    print(f"{args.collection}: {len(docs)} docs, {len(queries)} queries, {os.cpu_count()} CPUs")
    runs = {}
    with tempfile.TemporaryDirectory() as cache:
        for backend in ("rank_bm25", "bm25s"):
            start = time.perf_counter()
            retriever = BM25Retriever(docs, backend=backend, cache_dir=cache)
            built = time.perf_counter()
            runs[backend] = retriever.search(queries, 1000)
            searched = time.perf_counter()
            BM25Retriever(docs, backend=backend, cache_dir=cache)
            warm = time.perf_counter()
            print(
                f"bm25 {backend:9s} build {built - start:6.3f} s  search {searched - built:6.3f} s"
                f"  warm load {warm - searched:6.3f} s"
            )
        ref, fast = runs["rank_bm25"], runs["bm25s"]
        worst = max(
            abs(s - fast.scores[q].get(d, 0.0)) / abs(s)
            for q, ranked in ref.scores.items()
            for d, s in ranked.items()
        )
        same = sum(ref.rankings()[q] == fast.rankings()[q] for q in ref.scores)
        print(
            f"bm25s vs rank_bm25: max relative score gap {worst:.1e}, "
            f"identical rankings {same}/{len(ref.scores)}"
        )
        if args.no_dense:
            return
        start = time.perf_counter()
        dense = DenseRetriever(docs, cache_dir=cache)
        model_loaded = time.perf_counter()
        dense.model()
        loaded = time.perf_counter()
        encoder = DenseRetriever.__new__(DenseRetriever)
        encoder.__dict__.update(dense.__dict__, encoded_count=0)
        texts = [f"{d.title}\n{d.text}" if d.title else d.text for d in docs]
        begin = time.perf_counter()
        encoder._encode_passages(texts)
        encoded = time.perf_counter()
        dense.search(queries, 1000)
        searched = time.perf_counter()
        print(
            f"dense cold build {model_loaded - start:.1f} s; re-encode {len(texts)} passages "
            f"{encoded - begin:.1f} s = {len(texts) / (encoded - begin):.1f} passages/s "
            f"(model load {loaded - model_loaded:.2f} s); search {len(queries)} queries "
            f"{searched - encoded:.2f} s"
        )


if __name__ == "__main__":
    main()
