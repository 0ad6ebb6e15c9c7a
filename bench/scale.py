"""Cost against corpus size on synthetic collections (prints figures; not a timed test).

For each size (passages; 500 queries by default), each step in its own process so that wall
time and peak RSS are its own (imports included):
  bm25     read the corpus, tokenize + index (bm25s backend, fresh cache), search every query
           100 deep; `--rank-bm25-upto N` also times rank_bm25 up to N passages;
  pool     `workbench pool --systems bm25 --policy static` into a new SQLite store, cold (fresh
           cache) and warm (same cache, new store): wall, peak RSS, store size;
  adaptive with --adaptive: `pool --policy adaptive` (the index cached), into a new store;
  app      with --latency: a real `workbench judge` on the store under a pty: launch to the first
           passage drawn, and grade key to the next passage drawn (bench/judge_latency.py's
           method; on the adaptive store bench/adaptive_app_latency.py's, with the first grade
           taken).
--run-check also pools a 1,000-query x 1,000-doc TREC run (over a 100,000-passage corpus)
alone, and --vectors-sizes N ... pools the dense system from given 64-dim passage and query
vectors (--embeddings, --query-embeddings) over N passages.
The load average (1 min) is printed beside each figure: other work on the machine slows it.

    .venv/bin/python bench/scale.py [--sizes 10000 100000 1000000] [--queries 500]
        [--work DIR] [--latency] [--run-check] [--vectors-sizes 1000000]
        [--rank-bm25-upto 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import synthetic  # noqa: E402


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def measured(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout) of a child process."""
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{err.decode()[-3000:]}")
    peak = _peak_mib(err.decode())
    return wall, peak, out.decode()


def _peak_mib(stderr: str) -> float:
    for line in stderr.splitlines():
        if line.startswith("PEAK_RSS_KIB "):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed(command: list[str]) -> tuple[float, float, str]:
    """A command run under this script's --child-rss wrapper, which reports its peak RSS."""
    return measured([sys.executable, __file__, "--child-rss", *command])


def child_rss(command: list[str]) -> int:
    """Run `command`, then print its peak RSS (the children's rusage) on stderr."""
    import resource

    code = subprocess.call(command)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"PEAK_RSS_KIB {peak}", file=sys.stderr)
    return code


def child_bm25(corpus: str, queries: str, cache: str, backend: str) -> None:
    """In the child: stage times of read, index, search, as JSON."""
    from workbench.formats import read_corpus, read_queries
    from workbench.retrieval.bm25 import BM25Retriever

    t0 = time.perf_counter()
    docs, qs = read_corpus(corpus), read_queries(queries)
    t1 = time.perf_counter()
    retriever = BM25Retriever(docs, backend=backend, cache_dir=cache)
    t2 = time.perf_counter()
    retriever.search(qs, 100)
    t3 = time.perf_counter()
    print(json.dumps({"read": t1 - t0, "index": t2 - t1, "search": t3 - t2,
                      "cached": retriever.from_cache}))  # fmt: skip


def ensure_collection(work: Path, docs: int, queries: int, **extra: int) -> Path:
    name = f"s{docs}-q{queries}" + "".join(f"-{k}{v}" for k, v in sorted(extra.items()))
    folder = work / name
    if not (folder / "done").exists():
        args = [str(folder), "--docs", str(docs), "--queries", str(queries)]
        for key, value in extra.items():
            args += [f"--{key.replace('_', '-')}", str(value)]
        synthetic.main(args)
        (folder / "done").write_text("")
    return folder


def workbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def app_latency(db: Path, grades: int, adaptive: bool = False) -> dict[str, float]:
    """Launch to the first passage, and grade key to the next passage, on a real app. The
    static queue's next passage is known from the store: the wait is for its id. The adaptive
    queue chooses it after each grade: there the figures are bench/adaptive_app_latency.py's
    (drawn: the app's first frame after the key; settled: its output quiet again, the status
    line's figures brought up to date), on a copy of the store, with `first_grade_s`: launch to
    the first grade taken (a key is refused while the next pick waits for the passages to be
    read and indexed, for seconds at 100,000 x 500), keys sent every 50 ms from the first
    passage on."""
    from pty_app import PtyApp

    from workbench.store import open_store

    if adaptive:
        return _adaptive_latency(db, grades)
    with open_store(db) as store:
        order = [e.doc_id for e in store.pool()][: grades + 1]
    app = PtyApp(["judge", "--db", str(db), "--annotator", "bench"])
    try:
        offset = app.wait_for(order[0], timeout=120)
        launch = time.perf_counter() - app.started
        app.drain(0.5)
        latencies = []
        for mark in order[1:]:
            sent = time.perf_counter()
            app.send("1")
            offset = app.wait_for(mark, timeout=30, start=offset)
            latencies.append((time.perf_counter() - sent) * 1000)
    finally:
        app.kill()
    latencies.sort()
    return {
        "launch_s": launch,
        "p50_ms": statistics.median(latencies),
        "p95_ms": latencies[int(0.95 * (len(latencies) - 1))],
    }


def _adaptive_latency(db: Path, grades: int) -> dict[str, float]:
    import shutil
    import tempfile

    from adaptive_app_latency import grade_latencies
    from pty_app import PtyApp

    from workbench.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / db.name  # the grades below do not change the store measured again
        with open_store(db) as store:
            store.title  # noqa: B018 (opened: a checkpoint leaves no WAL to copy)
        shutil.copy(db, copy)
        app = PtyApp(["judge", "--db", str(copy), "--annotator", "bench"])
        try:
            app.wait_for("end of passage", timeout=120)
            launch = time.perf_counter() - app.started
            with open_store(copy) as store:
                while not store.current_judgments("bench"):
                    if time.perf_counter() - app.started > 120:
                        raise AssertionError("no grade was taken within 120 s")
                    app.send("0")
                    app.drain(0.05)
                first_grade = time.perf_counter() - app.started
            app.drain(1.0)
            drawn, settled = grade_latencies(app, grades)
        finally:
            app.kill()
    drawn.sort()
    settled.sort()
    return {
        "launch_s": launch,
        "first_grade_s": first_grade,
        "p50_ms": statistics.median(drawn),
        "p95_ms": drawn[int(0.95 * (len(drawn) - 1))],
        "settled_p50_ms": statistics.median(settled),
        "settled_p95_ms": settled[int(0.95 * (len(settled) - 1))],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--work", type=Path, default=Path("/tmp/workbench-scale"))
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--adaptive", action="store_true", help="also pool --policy adaptive")
    parser.add_argument("--grades", type=int, default=100)
    parser.add_argument("--run-check", action="store_true")
    parser.add_argument("--vectors-sizes", type=int, nargs="*", default=[])
    parser.add_argument("--rank-bm25-upto", type=int, default=0)
    parser.add_argument("--skip-bm25", action="store_true")
    args = parser.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    for size in args.sizes:
        data = ensure_collection(work, size, args.queries)
        corpus, queries = str(data / "corpus.jsonl"), str(data / "queries.jsonl")
        mib = (data / "corpus.jsonl").stat().st_size / 2**20
        print(f"\n== {size:,} passages ({mib:.0f} MiB JSONL), {args.queries} queries")
        backends = ["bm25s"] + (["rank_bm25"] if size <= args.rank_bm25_upto else [])
        for backend in backends if not args.skip_bm25 else []:
            cache = work / f"cache-bm25-{backend}-{size}-{time.time_ns()}"
            for run in ("cold", "warm"):
                ld = load()
                wall, peak, out = timed(
                    [sys.executable, __file__, "--child-bm25", corpus, queries, str(cache), backend]
                )
                stages = json.loads(out.strip().splitlines()[-1])
                print(
                    f"bm25 {backend:<9} {run}: read {stages['read']:.1f} s, "
                    f"{'load index' if stages['cached'] else 'tokenize+index'} "
                    f"{stages['index']:.1f} s, search {stages['search']:.1f} s; "
                    f"wall {wall:.1f} s, peak RSS {peak:,.0f} MiB  ({ld})"
                )
        cache = work / f"cache-pool-{size}-{time.time_ns()}"
        for run in ("cold", "warm"):
            db = work / f"pool-{size}-{run}-{time.time_ns()}.db"
            ld = load()
            wall, peak, _ = timed(
                workbench(
                    "pool",
                    "--corpus",
                    corpus,
                    "--queries",
                    queries,
                    "--db",
                    str(db),
                    "--systems",
                    "bm25",
                    "--cache-dir",
                    str(cache),
                    "--policy",
                    "static",
                )  # fmt: skip
            )
            size_mib = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 2**20
            print(
                f"pool {run}: wall {wall:.1f} s, peak RSS {peak:,.0f} MiB, "
                f"store {size_mib:.1f} MiB  ({ld})"
            )
        if args.adaptive:
            adaptive_db = work / f"pool-{size}-adaptive-{time.time_ns()}.db"
            ld = load()
            wall, peak, _ = timed(
                workbench(
                    "pool",
                    "--corpus",
                    corpus,
                    "--queries",
                    queries,
                    "--db",
                    str(adaptive_db),
                    "--systems",
                    "bm25",
                    "--cache-dir",
                    str(cache),
                    "--policy",
                    "adaptive",
                )  # fmt: skip
            )
            size_mib = adaptive_db.stat().st_size / 2**20
            print(
                f"pool --policy adaptive (index cached): wall {wall:.1f} s, peak RSS {peak:,.0f} "
                f"MiB, store {size_mib:.1f} MiB  ({ld})"
            )
            if args.latency:
                ld = load()
                figures = app_latency(adaptive_db, args.grades, adaptive=True)
                print(
                    f"app on the adaptive store: launch to first passage "
                    f"{figures['launch_s']:.2f} s, to the first grade taken "
                    f"{figures['first_grade_s']:.2f} s; grade to next passage drawn p50 "
                    f"{figures['p50_ms']:.0f} ms, p95 {figures['p95_ms']:.0f} ms, output settled "
                    f"p50 {figures['settled_p50_ms']:.0f} ms, p95 "
                    f"{figures['settled_p95_ms']:.0f} ms  ({ld})"
                )
        if args.latency:
            ld = load()
            figures = app_latency(db, args.grades)
            print(
                f"app on this store: launch to first passage {figures['launch_s']:.2f} s, "
                f"grade to next passage p50 {figures['p50_ms']:.0f} ms, "
                f"p95 {figures['p95_ms']:.0f} ms  ({ld})"
            )
    if args.run_check:
        data = ensure_collection(work, 100_000, 1000, run_depth=1000)
        db = work / f"run-{time.time_ns()}.db"
        ld = load()
        wall, peak, _ = timed(
            workbench(
                "pool",
                "--corpus",
                str(data / "corpus.jsonl"),
                "--queries",
                str(data / "queries.jsonl"),
                "--db",
                str(db),
                "--systems",
                "",
                "--run",
                str(data / "run.trec"),
                "--policy",
                "static",
            )  # fmt: skip
        )
        print(
            f"\n1,000 queries x 1,000 docs run (100,000 passages) pooled alone: wall {wall:.1f} s,"
            f" peak RSS {peak:,.0f} MiB  ({ld})"
        )
    if args.vectors_sizes:
        for size in args.vectors_sizes:
            data = ensure_collection(work, size, args.queries, dim=64)
            db = work / f"vectors-{size}-{time.time_ns()}.db"
            ld = load()
            wall, peak, _ = timed(
                workbench(
                    "pool",
                    "--corpus",
                    str(data / "corpus.jsonl"),
                    "--queries",
                    str(data / "queries.jsonl"),
                    "--db",
                    str(db),
                    "--systems",
                    "dense",
                    "--embeddings",
                    str(data / "doc_vectors.npy"),
                    "--query-embeddings",
                    str(data / "query_vectors.npy"),
                    "--policy",
                    "static",
                )  # fmt: skip
            )
            print(
                f"\n{size:,} passages, 64-dim vectors given (--embeddings, --query-embeddings):"
                f" pool wall {wall:.1f} s, peak RSS {peak:,.0f} MiB  ({ld})"
            )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child-rss":
        sys.exit(child_rss(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "--child-bm25":
        child_bm25(*sys.argv[2:6])
        sys.exit(0)
    sys.exit(main())
