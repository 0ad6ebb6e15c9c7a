"""Pooling speed, memory and recall on real collections (prints figures; not a timed test).

For each collection: `workbench pool` with bm25 + dense at depth 20, cold (fresh cache dir) and
warm (same cache, fresh db), each in its own subprocess so wall time and peak RSS are the
process's own; encoding throughput; the share of the qrels' relevant docs that each system's
top 20 and their union find; and rank_bm25 vs bm25s (index build + search).

    .venv/bin/python bench/pool_speed.py [cranfield npl] [--json OUT]

`--vs-plain`: a cold `pool` (bm25 + dense, `--encoder`, a fresh cache folder; the exported graph
kept from a first pool, which is timed apart) against plain sentence-transformers encoding the
same passages and queries (import, load, `encode`, in its own interpreter too), `--rounds` of
each in the order ABBA..., so a change of load falls on both alike; prints each wall time, the
ratio of the summed times, the top-20 overlap of the pool's dense run with torch fp32's ranking
(from the plain run's vectors) and the load average.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/pool_speed.py cisi --vs-plain --encoder auto \
        [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COLLECTIONS = Path(__file__).resolve().parents[2] / "shared" / "collections"
if not COLLECTIONS.is_dir():
    COLLECTIONS = Path("/work/shared/collections")
DEPTH = 20


def child(corpus: str, queries: str, db: str, cache: str, encoder: str = "torch") -> None:
    """Runs in the subprocess: pool, and report stage times and the summary as JSON."""
    from workbench.flows.pool import PoolOptions, pool_corpus

    stages: dict[str, list[float]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        span = stages.setdefault(stage, [now, now, 0])
        span[1], span[2] = now, total

    start = time.perf_counter()
    options = PoolOptions(corpus, queries, db, systems=["bm25", "dense"], depth=DEPTH,
                          cache_dir=cache, encoder=encoder, device="cpu")  # fmt: skip
    summary = pool_corpus(options, progress)
    report = summary.to_json()
    report["seconds"] = time.perf_counter() - start
    report["stages"] = {k: {"seconds": v[1] - v[0], "total": v[2]} for k, v in stages.items()}
    print(json.dumps(report))


def plain_child(corpus: str, queries: str, out: str) -> None:
    """Runs in the subprocess: what a user would write without workbench (sentence-transformers
    on torch fp32, its default batch size), then each query's top 20 by dot product."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from workbench.retrieval.models import DEFAULT_DENSE_MODEL, resolve_model

    rows = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    texts = [f"{r['title']}\n{r['text']}" if r.get("title") else r["text"] for r in rows]
    query_rows = [json.loads(line) for line in open(queries, encoding="utf-8")]
    model = SentenceTransformer(resolve_model(DEFAULT_DENSE_MODEL), device="cpu")
    passages = model.encode(texts, normalize_embeddings=True)
    vectors = model.encode([r["text"] for r in query_rows], normalize_embeddings=True)
    order = np.argsort(-(vectors @ passages.T), axis=1, kind="stable")[:, :DEPTH]
    pairs = zip(query_rows, order, strict=True)
    tops = {r["_id"]: [rows[i]["_id"] for i in row] for r, row in pairs}
    Path(out).write_text(json.dumps(tops), encoding="utf-8")
    print(json.dumps({"queries": len(query_rows)}))


def pool_in_subprocess(
    corpus: Path, queries: Path, db: Path, cache: Path, encoder: str = "torch", plain: bool = False
) -> dict:
    """Wall time and peak RSS of one `pool_corpus` (or, `plain`, of `plain_child` writing its
    top 20s to `db`) in a fresh interpreter (imports included)."""
    mode = ["--plain-child"] if plain else ["--child"]
    command = [sys.executable, __file__, *mode, str(corpus), str(queries), str(db), str(cache)]
    command += [] if plain else [encoder]
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage: its peak RSS
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode:
        raise SystemExit(f"pooling subprocess failed:\n{stderr}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["wall_seconds"] = wall
    result["peak_rss_mib"] = round(usage.ru_maxrss / 1024, 1)  # Linux: KiB
    return result


def found_share(runs: dict[str, str], qrels_path: Path) -> dict[str, float]:
    """Share of relevant (query, doc) pairs found in each system's top 20 and in their union."""
    from workbench.formats import read_qrels, read_run

    qrels = read_qrels(qrels_path)
    relevant = {(q, d) for q, docs in qrels.items() for d, g in docs.items() if g >= 1}
    tops: dict[str, set[tuple[str, str]]] = {}
    for name, path in runs.items():
        run = read_run(path)
        tops[name] = {(q, d) for q, r in run.rankings().items() for d in r[:DEPTH]}
    tops["union"] = set().union(*tops.values())
    return {name: round(len(top & relevant) / len(relevant), 4) for name, top in tops.items()}


def bm25_backends(corpus: Path, queries: Path) -> dict[str, dict[str, float]]:
    """Index build (no cache) and search of all queries at depth 100, per backend."""
    from workbench.formats import read_corpus, read_queries
    from workbench.retrieval import BM25Retriever

    docs, query_list = read_corpus(corpus), read_queries(queries)
    figures: dict[str, dict[str, float]] = {}
    for backend in ("rank_bm25", "bm25s"):
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            retriever = BM25Retriever(docs, backend=backend, cache_dir=cache)
            built = time.perf_counter()
            retriever.search(query_list, 100)
            searched = time.perf_counter()
            BM25Retriever(docs, backend=backend, cache_dir=cache).search(query_list, 100)
            warm = time.perf_counter()
        figures[backend] = {
            "build_s": round(built - start, 3),
            "search_s": round(searched - built, 3),
            "warm_build_and_search_s": round(warm - searched, 3),
        }
    return figures


def bench(name: str, workdir: Path) -> dict:
    folder = COLLECTIONS / name
    corpus, queries = folder / "corpus.jsonl", folder / "queries.jsonl"
    cache = workdir / f"{name}-cache"
    cold = pool_in_subprocess(corpus, queries, workdir / f"{name}-cold.db", cache)
    warm = pool_in_subprocess(corpus, queries, workdir / f"{name}-warm.db", cache)
    again = pool_in_subprocess(corpus, queries, workdir / f"{name}-warm.db", cache)
    encode = cold["stages"].get("dense encode", {})
    figures = {
        "docs": encode.get("total"),
        "queries": cold["queries"],
        "cold_wall_s": round(cold["wall_seconds"], 2),
        "cold_peak_rss_mib": cold["peak_rss_mib"],
        "warm_wall_s": round(warm["wall_seconds"], 2),
        "warm_pool_corpus_s": round(warm["seconds"], 2),
        "warm_peak_rss_mib": warm["peak_rss_mib"],
        "repool_same_db_new_items": again["new_items"],
        "encode_docs_per_s": round(encode["total"] / encode["seconds"], 1)
        if encode.get("seconds")
        else None,
        "pool_items": warm["pool_items"],
        "found_share_top20": found_share(warm["runs"], folder / "qrels.tsv"),
        "bm25_backends": bm25_backends(corpus, queries),
    }
    single = max(v for k, v in figures["found_share_top20"].items() if k != "union")
    figures["union_beats_best_single"] = figures["found_share_top20"]["union"] > single
    return figures


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} CPUs"


def vs_plain(name: str, workdir: Path, encoder: str, rounds: int) -> dict:
    """Cold pools against plain sentence-transformers, interleaved ABBA (see the module's note)."""
    from workbench.formats import read_run

    folder = COLLECTIONS / name
    corpus, queries = folder / "corpus.jsonl", folder / "queries.jsonl"
    os.environ.setdefault("WORKBENCH_GRAPH_DIR", str(workdir / "graphs"))
    first = pool_in_subprocess(corpus, queries, workdir / "first.db", workdir / "c-first", encoder)
    print(f"{name}: first pool ever ({encoder}, graph exported): {first['wall_seconds']:.1f}s; "
          f"{load_line()}", flush=True)  # fmt: skip
    walls: dict[str, list[float]] = {"plain": [], "pool": []}
    overlaps: list[float] = []
    for number in range(2 * rounds):
        kind = ("plain", "pool", "pool", "plain")[number % 4]
        db, cache = workdir / f"{kind}{number}.db", workdir / f"c{number}"
        result = pool_in_subprocess(corpus, queries, db, cache, encoder, plain=kind == "plain")
        walls[kind].append(result["wall_seconds"])
        if kind == "pool":
            dense = read_run(Path(f"{workdir / f'{kind}{number}'}-runs") / "dense.run").rankings()
            stages = {k: round(v["seconds"], 1) for k, v in result["stages"].items()}
        else:
            plain_tops = json.loads(db.read_text(encoding="utf-8"))
        print(f"  {kind:<5} {result['wall_seconds']:6.1f}s; {load_line()}"
              + (f"; stages {stages}" if kind == "pool" else ""), flush=True)  # fmt: skip
        if number % 2 == 1:
            overlaps.append(
                sum(len(set(dense[q][:DEPTH]) & set(t)) / DEPTH for q, t in plain_tops.items())
                / len(plain_tops)
            )
    ratio = sum(walls["plain"]) / sum(walls["pool"])
    figures = {
        "encoder": encoder,
        "first_pool_s": round(first["wall_seconds"], 1),
        "plain_s": [round(w, 1) for w in walls["plain"]],
        "cold_pool_s": [round(w, 1) for w in walls["pool"]],
        "plain_over_pool": round(ratio, 2),
        "top20_overlap_vs_torch": round(min(overlaps), 4),
    }
    print(f"{name}: cold pool ({encoder}) {ratio:.2f}x faster than plain sentence-transformers; "
          f"top-20 overlap {figures['top20_overlap_vs_torch']:.3f}; {load_line()}")  # fmt: skip
    return figures


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:7])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--plain-child":
        plain_child(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collections", nargs="*", default=["cranfield", "npl"])
    parser.add_argument("--json", metavar="OUT", help="also write the figures to OUT")
    parser.add_argument("--vs-plain", action="store_true", help="cold pool vs plain encoding")
    parser.add_argument("--encoder", default="auto", help="for --vs-plain (default auto)")
    parser.add_argument("--rounds", type=int, default=2, help="for --vs-plain: pairs of runs")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="pool-speed-") as tmp:
        if args.vs_plain:
            for name in args.collections:
                results[name] = vs_plain(name, Path(tmp), args.encoder, args.rounds)
            if args.json:
                Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
            return
        for name in args.collections:
            results[name] = bench(name, Path(tmp))
            print(json.dumps({name: results[name]}, indent=1), flush=True)
    if "cranfield" in results:
        warm = results["cranfield"]["warm_wall_s"]
        print(f"target: warm pooling of cranfield < 5 s: {warm:.2f} s "
              f"({'met' if warm < 5 else 'NOT met'})")  # fmt: skip
    for name, figures in results.items():
        print(f"target: union beats best single system on {name}: "
              f"{'met' if figures['union_beats_best_single'] else 'NOT met'}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
