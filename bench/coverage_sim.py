"""Does the coverage report tell the truth? Pool real test collections, judge with an oracle,
compare the report with the full qrels.

For each collection under ../shared/collections (or --collections-dir): pool bm25 + dense at
depth 20 with a stratified sample of 40 per query from outside the pool (workbench.pipeline),
let an oracle answer from the collection's qrels (absent = 0), run the coverage report, and
compare with the truth. Only queries with |Rel| >= 1 count. Printed per collection:

- cover: share of queries whose true |Rel| lies inside the 95% interval (target >= 0.90)
- width: median interval width relative to |Rel|
- MAE: mean absolute error of completeness (judged relevant / |Rel|), target <= 0.12;
  naive: the same error when judged = complete is assumed; HT: plain Horvitz-Thompson
- R@5 of each system against the judged depth-20 pool vs against the full qrels (the seed's
  lesson on real data), and with the estimated |Rel| as the denominator

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/coverage_sim.py [--collections cranfield,cisi,cacm]
       [--seeds 0,1,2] [--sample 40] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DIR = ROOT.parent / "shared" / "collections"


def recall_at(ranking: list[str], relevant: set[str], k: int) -> float:
    return len(set(ranking[:k]) & relevant) / len(relevant)


def simulate_collection(
    name: str, root: Path, work: Path, cache: Path, seed: int, sample: int, depth: int
) -> dict:
    from workbench.commands.simulate import oracle_judgments
    from workbench.core.coverage import coverage_for_store, grades_counted
    from workbench.formats import read_qrels, read_run
    from workbench.pipeline import pool_corpus
    from workbench.store import Store

    db = work / f"{name}-{seed}-s{sample}-d{depth}.db"
    runs_dir = work / f"{name}-{seed}-s{sample}-d{depth}-runs"
    done = work / f"{db.name}.judged"
    started = time.time()
    truth = read_qrels(root / "qrels.tsv")
    if not done.exists():
        # A store left half-made by an interrupted run is rebuilt from scratch.
        if db.exists():
            db.unlink()
        if runs_dir.exists():
            shutil.rmtree(runs_dir)
        pool_corpus(
            root / "corpus.jsonl",
            root / "queries.jsonl",
            db,
            systems=("bm25", "dense"),
            depth=depth,
            sample=sample,
            seed=seed,
            bm25_backend="bm25s",
            cache_dir=cache,
            runs_dir=runs_dir,
        )
        with Store(db) as store:
            store.add_judgments(oracle_judgments(store.pool(), truth, "oracle", set()))
        done.write_text("ok\n")
    pooled_s = time.time() - started
    with Store(db) as store:
        started = time.time()
        report = coverage_for_store(store, k=5, seed=seed).to_json()
        report_s = time.time() - started
        grades = grades_counted(store.current_judgments())
        pool_docs: dict[str, set[str]] = {}
        for e in store.pool():
            if e.stratum == "pool":
                pool_docs.setdefault(e.query_id, set()).add(e.doc_id)
    runs = {tag: read_run(runs_dir / f"{tag}.run").rankings() for tag in ("bm25", "dense")}

    rows = []
    for qid, row in report["queries"].items():
        relevant_true = {d for d, g in truth.get(qid, {}).items() if g >= 1}
        if not relevant_true:
            continue
        judged_rel = row["relevant"]
        true_completeness = judged_rel / len(relevant_true)
        pool_rel = {d for d in pool_docs.get(qid, set()) if grades.get(qid, {}).get(d, 0) >= 1}
        est = row["est_rel"]
        entry = {
            "qid": qid,
            "true_rel": len(relevant_true),
            "judged_rel": judged_rel,
            "measured": est is not None,
            "inside": est is not None
            and row["est_rel_low"] <= len(relevant_true) <= row["est_rel_high"],
            "width": (row["est_rel_high"] - row["est_rel_low"]) / len(relevant_true)
            if est is not None
            else None,
            "error": abs(
                (row["completeness"] if row["completeness"] is not None else 1.0)
                - true_completeness
            ),
            "naive_error": abs(1.0 - true_completeness),
            "ht_error": abs(min(1.0, judged_rel / row["est_rel_ht"]) - true_completeness)
            if row["est_rel_ht"]
            else abs(1.0 - true_completeness),
            "true_completeness": true_completeness,
            "complete_status": row["status"] == "complete",
            "low": row["completeness_low"],
        }
        for tag, rankings in runs.items():
            ranking = rankings.get(qid, [])
            hits_pool = len(set(ranking[:5]) & pool_rel)
            entry[f"{tag}_R5_pool"] = hits_pool / len(pool_rel) if pool_rel else None
            entry[f"{tag}_R5_true"] = recall_at(ranking, relevant_true, 5)
            entry[f"{tag}_R5_est"] = (
                len(set(ranking[:5]) & {d for d, g in grades.get(qid, {}).items() if g >= 1}) / est
                if est
                else None
            )
        rows.append(entry)
    return {"rows": rows, "pool_s": pooled_s, "report_s": report_s, "model": report["model"]}


def mean(values) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def summarize(name: str, runs: list[dict]) -> dict:
    rows = [r for run in runs for r in run["rows"]]
    measured = [r for r in rows if r["measured"]]
    complete = [r for r in rows if r["complete_status"]]
    out = {
        "collection": name,
        "queries": len(runs[0]["rows"]) if runs else 0,
        "draws": len(runs),
        "cover": mean(r["inside"] for r in measured),
        "width_median": statistics.median(r["width"] for r in measured) if measured else None,
        "mae": mean(r["error"] for r in rows),
        "mae_naive": mean(r["naive_error"] for r in rows),
        "mae_ht": mean(r["ht_error"] for r in rows),
        "true_completeness_mean": mean(r["true_completeness"] for r in rows),
        "lower_bound_holds": mean(r["low"] <= r["true_completeness"] for r in measured),
        "called_complete": len(complete) / len(rows) if rows else None,
        "called_complete_truly_ge_0.8": mean(r["true_completeness"] >= 0.8 for r in complete),
        "pool_seconds": mean(run["pool_s"] for run in runs),
        "report_seconds": mean(run["report_s"] for run in runs),
    }
    for tag in ("bm25", "dense"):
        for basis in ("pool", "true", "est"):
            out[f"{tag}_R@5_{basis}"] = mean(r[f"{tag}_R5_{basis}"] for r in rows)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="cranfield,cisi,cacm")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--cache-dir", default=str(ROOT / ".workbench-cache"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the pooled, oracle-judged stores in DIR and reuse them on the next run "
        "(for iterating on the estimator; delete DIR after changing workbench.core.sampling)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    results = []
    with tempfile.TemporaryDirectory(prefix="coverage-sim-") as tmp:
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            tmp = args.keep
        for name in [c.strip() for c in args.collections.split(",") if c.strip()]:
            root = Path(args.collections_dir) / name
            runs = [
                simulate_collection(
                    name, root, Path(tmp), Path(args.cache_dir), seed, args.sample, args.depth
                )
                for seed in seeds
            ]
            summary = summarize(name, runs)
            results.append(summary)
            if not args.json:
                print_summary(summary)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def print_summary(s: dict) -> None:
    print(
        f"{s['collection']}: {s['queries']} queries x {s['draws']} draws | "
        f"cover {_f(s['cover'])} (>= 0.90) | width/|Rel| median {_f(s['width_median'], 2)} | "
        f"MAE completeness {_f(s['mae'])} (<= 0.12), naive {_f(s['mae_naive'])}, "
        f"HT {_f(s['mae_ht'])} | true completeness {_f(s['true_completeness_mean'])}"
    )
    print(
        f"   lower bound <= truth {_f(s['lower_bound_holds'])}; called complete "
        f"{_f(s['called_complete'])} of queries, of which truly >= 0.8: "
        f"{_f(s['called_complete_truly_ge_0.8'])} | pool {s['pool_seconds']:.0f}s, "
        f"report {s['report_seconds']:.1f}s"
    )
    for tag in ("bm25", "dense"):
        print(
            f"   {tag:<5} R@5 vs judged pool {_f(s[f'{tag}_R@5_pool'])}  vs full qrels "
            f"{_f(s[f'{tag}_R@5_true'])}  with est |Rel| as denominator {_f(s[f'{tag}_R@5_est'])}"
        )


if __name__ == "__main__":
    sys.exit(main())
