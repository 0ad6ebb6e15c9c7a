"""A team on one PostgreSQL store: N annotator processes grade G items each through the store
API the app uses (claim the item, then add the judgment), while `coverage` and `export` run
alongside, optionally with the server restarted in the middle. Then the store is checked
against what every process was told:

- lost: a judgment a process was acknowledged (an id returned) that is not in the store;
- duplicated: an (annotator, item, graded_at) in the store more than once;
- double-held: an item judged by two annotators (each item needs one: a won claim keeps
  the others off it, so this is 0 when claims are exclusive);
- out of order: a follower reading `judgments_since` in a loop must see every row once.

Writes that meet the restarted server are sent again (as the app's store thread does); the
store adds a stamped judgment once however often it is sent.

Run: .venv/bin/python bench/team_store.py [--url postgresql://127.0.0.1/test]
     [--annotators 8] [--grades 1000] [--restart]"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def retrying(call):  # type: ignore[no-untyped-def]
    from workbench.store import StoreUnavailable

    while True:
        try:
            return call()
        except StoreUnavailable:
            time.sleep(0.2)


def annotator(url: str, name: str, items: list[tuple[str, str]], grades: int, out) -> None:  # type: ignore[no-untyped-def]
    from workbench.core.model import Judgment
    from workbench.store import open_store

    acknowledged, waits, claims_lost = [], [], 0
    store = retrying(lambda: open_store(url))
    for query_id, doc_id in items:
        if len(acknowledged) >= grades:
            break
        if not retrying(lambda q=query_id, d=doc_id: store.claim(name, q, d)):
            claims_lost += 1
            continue
        judgment = Judgment(name, query_id, doc_id, len(acknowledged) % 4, graded_at=time.time())
        started = time.perf_counter()
        judgment_id = retrying(lambda j=judgment: store.add_judgment(j))
        waits.append(time.perf_counter() - started)
        acknowledged.append((judgment_id, query_id, doc_id, judgment.graded_at))
    store.close()
    out.put((name, acknowledged, waits, claims_lost))


def bystander(url: str, stop, out) -> None:  # type: ignore[no-untyped-def]
    """coverage and export in a loop, and a follower of judgments_since."""
    from workbench.commands.export import golden_of
    from workbench.flows.coverage import summary_for_store
    from workbench.store import open_store

    class Args:
        rel_threshold, name, description = 1, "bench", ""

    store = retrying(lambda: open_store(url))
    runs, seen, last = 0, [], 0
    while not stop.is_set():
        try:
            summary_for_store(store)
            golden_of(store, Args())
            runs += 1
            last, rows = store.judgments_since(last)
            seen.extend((j.annotator, j.query_id, j.doc_id, j.graded_at) for j in rows)
        except Exception:  # the server restarting: try again
            time.sleep(0.2)
    last, rows = retrying(lambda: store.judgments_since(last))
    seen.extend((j.annotator, j.query_id, j.doc_id, j.graded_at) for j in rows)
    out.put(("bystander", runs, seen))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="postgresql://127.0.0.1/test")
    parser.add_argument("--annotators", type=int, default=8)
    parser.add_argument("--grades", type=int, default=1000)
    parser.add_argument("--restart", action="store_true", help="restart the server midway")
    args = parser.parse_args()

    import psycopg
    from tui_fixtures import build_store

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in args.url else "?"
    url = f"{args.url}{sep}options=-csearch_path%3D{schema}"
    try:
        queries, per_query = 100, args.annotators * args.grades * 2 // 100
        build_store(url, queries=queries, per_query=per_query, words=20).close()
        items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(queries) for i in range(per_query)]
        print(f"store: {len(items)} pooled items in schema {schema}")
        ctx = multiprocessing.get_context("spawn")
        out, stop = ctx.Queue(), ctx.Event()
        import random

        workers = []
        for n in range(args.annotators):
            mine = items[:]
            random.Random(n).shuffle(mine)  # overlapping orders: they contend for items
            workers.append(
                ctx.Process(target=annotator, args=(url, f"a{n}", mine, args.grades, out))
            )
        watcher = ctx.Process(target=bystander, args=(url, stop, out))
        started = time.perf_counter()
        watcher.start()
        for w in workers:
            w.start()
        restart_s = None
        if args.restart:
            time.sleep(3)
            cluster = subprocess.run(["ls", "/etc/postgresql"], capture_output=True, text=True)
            version = cluster.stdout.split()[0]
            t = time.perf_counter()
            subprocess.run(
                ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
                check=True,
            )
            restart_s = time.perf_counter() - t
        results = [out.get(timeout=900) for _ in workers]
        elapsed = time.perf_counter() - started
        stop.set()
        _, runs, seen = out.get(timeout=300)
        for w in [*workers, watcher]:
            w.join(60)

        from workbench.store import open_store

        with open_store(url) as store:
            rows = store.judgments()
        stored = {(j.annotator, j.query_id, j.doc_id, j.graded_at) for j in rows}
        keys = [(j.annotator, j.query_id, j.doc_id, j.graded_at) for j in rows]
        acknowledged = [(name, q, d, at) for name, acks, _, _ in results for _, q, d, at in acks]
        lost = sum(1 for a in acknowledged if a not in stored)
        duplicated = len(keys) - len(set(keys))
        judges: dict[tuple[str, str], set[str]] = {}
        for j in rows:
            judges.setdefault((j.query_id, j.doc_id), set()).add(j.annotator)
        double = sum(1 for names in judges.values() if len(names) > 1)
        waits = [w for _, _, ws, _ in results for w in ws]
        print(
            f"{args.annotators} annotators x {args.grades} grades: {len(rows)} rows in "
            f"{elapsed:.1f} s ({len(rows) / elapsed:.0f} grades/s); claims lost to others: "
            f"{sum(r[3] for r in results)}"
        )
        if restart_s is not None:
            print(f"server restarted midway (pg_ctlcluster restart took {restart_s:.1f} s)")
        print(
            f"add_judgment: p50 {percentile(waits, 0.5) * 1000:.1f} ms, "
            f"p95 {percentile(waits, 0.95) * 1000:.1f} ms (retries after a restart included)"
        )
        print(f"coverage + export alongside: {runs} rounds")
        print(
            f"acknowledged {len(acknowledged)}; lost {lost}; duplicated {duplicated}; "
            f"items judged by two annotators {double}; follower saw {len(seen)} rows "
            f"({len(set(seen))} distinct)"
        )
        return 0 if not (lost or duplicated or double) and len(set(seen)) == len(rows) else 1
    finally:
        with psycopg.connect(args.url, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    sys.exit(main())
