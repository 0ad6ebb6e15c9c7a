"""Are P@k intervals from a noisy judge plus a few human labels valid, and narrower than the
humans' alone? On each shared collection, the bm25 run's top 10 per query (queries with
|Rel| >= 1) and the qrels as the truth; a synthetic judge made from the qrels with controlled
noise (an honest judge at three agreement levels, and one that over-grades), and human labels
(the qrels' own grade) on a uniformly random 5%, 10% or 20% of the items. For each setting,
over many seeds: the share of prediction-powered 95% intervals (workbench.core.judges.ppi, the code
`eval --judge` runs) that contain the true mean P@10, the same for the human-only interval, the
median widths, and the judge's Cohen's kappa against the qrels (binary).

Then R@10 and nDCG@10, corrected over queries: humans judge every document of a uniformly
random 5%, 10% or 20% of the queries (draws with fewer than 20 such queries are left out, as
`eval --judge` gives no interval from them) (the universe: the qrels' documents and the run's top
10), the judge grades all of them (its grade the qrels' with the same noise, a wrong one drawn
at random from 0-3); the truth is the mean over queries of the figure under the qrels.

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/llm_judge_sim.py [--seeds 200]
       [--collections cranfield,cisi,cacm,npl] [--work DIR (run files kept between runs)]"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

JUDGES = {
    # name -> (P(judge says relevant | relevant), P(judge says relevant | not relevant))
    "honest, kappa~.8": (0.90, 0.04),
    "honest, kappa~.6": (0.80, 0.10),
    "honest, kappa~.4": (0.65, 0.18),
    "over-grades": (0.97, 0.35),
}
SHARES = (0.05, 0.10, 0.20)
K = 10


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    agree = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return (agree - chance) / (1 - chance) if chance < 1 else 0.0


def collection(name: str, args: argparse.Namespace, work: Path) -> tuple[dict, list, dict]:
    """The qrels, the queries with a relevant document, and the bm25 run's top K of each."""
    from coverage_sim import base_runs

    from workbench.core.model import order_pairs
    from workbench.formats import read_qrels, read_run

    root = Path(args.collections_dir) / name
    truth = read_qrels(root / "qrels.tsv")
    runs = base_runs(name, root, work, ROOT / ".workbench-cache")
    scores = read_run(runs["bm25"]).scores
    queries = sorted(q for q in scores if any(g >= 1 for g in truth.get(q, {}).values()))
    return truth, queries, {q: order_pairs(scores[q].items())[:K] for q in queries}


def main() -> int:
    import numpy as np
    from coverage_sim import DEFAULT_DIR

    from workbench.core.judges.ppi import corrected_precision

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--collections", default="cranfield,cisi,cacm,npl")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--work", help="keep run files here between runs")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp())
    print("| collection | judge | kappa | humans | PPI covers | human-only covers | PPI width"
          " | human-only width |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name in args.collections.split(","):
        truth, queries, rankings = collection(name, args, work)
        slots = [(q, d) for q in queries for d in rankings[q]]
        rel = {s: truth.get(s[0], {}).get(s[1], 0) >= 1 for s in slots}
        true_p = sum(rel.values()) / (K * len(queries))
        for judge_name, (hit, false_alarm) in JUDGES.items():
            for share in SHARES:
                cover = cover_h = 0
                widths, widths_h, kappas = [], [], []
                for seed in range(args.seeds):
                    rng = np.random.default_rng([seed, int(share * 100), len(judge_name)])
                    draw = rng.random(len(slots))
                    judge = {
                        s: bool(draw[i] < (hit if rel[s] else false_alarm))
                        for i, s in enumerate(slots)
                    }
                    picked = rng.random(len(slots)) < share
                    human = {s: rel[s] for i, s in enumerate(slots) if picked[i]}
                    row = corrected_precision("bm25", rankings, K, judge, human, queries)
                    e = row.estimate
                    if e is None or e.human_low is None:
                        continue
                    cover += e.low <= true_p <= e.high
                    cover_h += e.human_low <= true_p <= e.human_high
                    widths.append(e.high - e.low)
                    widths_h.append(e.human_high - e.human_low)
                    kappas.append(kappa([(judge[s], rel[s]) for s in slots]))
                runs_n = len(widths)
                print(
                    f"| {name} ({len(queries)}q, P@10 {true_p:.3f}) | {judge_name} |"
                    f" {np.mean(kappas):.2f} | {share:.0%} | {cover / runs_n:.3f} |"
                    f" {cover_h / runs_n:.3f} | {np.median(widths):.3f} |"
                    f" {np.median(widths_h):.3f} |",
                    flush=True,
                )
    print()
    print("| collection | judge | humans (queries) | measure | PPI covers | human-only covers |"
          " PPI width | human-only width |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    from workbench.core.judges.ppi import MIN_LABELED_QUERIES, ppi_mean
    from workbench.core.measures.metrics import score_query

    for name in args.collections.split(","):
        truth, queries, rankings = collection(name, args, work)
        universe = {q: sorted(set(truth.get(q, {})) | set(rankings[q])) for q in queries}
        grades = sorted({g for q in queries for g in truth[q].values()} | {0})
        for measure in ("R", "nDCG"):

            def figure(qrels: dict, q: str, measure: str = measure, rankings=rankings) -> float:
                got = score_query(rankings[q], qrels, [K], measures=[measure]).values
                value = got[f"{measure}@{K}"]
                return 0.0 if value is None else float(value)

            true_mean = sum(figure(truth[q], q) for q in queries) / len(queries)
            for judge_name, (hit, false_alarm) in JUDGES.items():
                for share in SHARES:
                    cover = cover_h = 0
                    widths, widths_h = [], []
                    for seed in range(args.seeds):
                        rng = np.random.default_rng([seed, int(share * 100), len(judge_name), 7])
                        judged = {}
                        for q in queries:
                            labels = {}
                            for d in universe[q]:
                                g = truth[q].get(d, 0)
                                says = rng.random() < (hit if g >= 1 else false_alarm)
                                labels[d] = (
                                    (g if g >= 1 else int(rng.choice(grades[1:] or [1])))
                                    if says
                                    else 0
                                )
                            judged[q] = labels
                        picked = [q for q in queries if rng.random() < share]
                        if len(picked) < MIN_LABELED_QUERIES or len(picked) == len(queries):
                            continue  # eval --judge gives no interval from so few
                        chosen = set(picked)
                        e = ppi_mean(
                            [figure(truth[q], q) for q in queries if q in chosen],
                            [figure(judged[q], q) for q in queries if q in chosen],
                            [figure(judged[q], q) for q in queries if q not in chosen],
                        )
                        if e is None or e.human_low is None:
                            continue
                        cover += e.low <= true_mean <= e.high
                        cover_h += e.human_low <= true_mean <= e.human_high
                        widths.append(e.high - e.low)
                        widths_h.append(e.human_high - e.human_low)
                    n = len(widths)
                    if n < args.seeds // 2:
                        print(f"| {name} ({len(queries)}q) | {judge_name} | {share:.0%} |"
                              f" {measure}@{K} | – | – | – | – (< {MIN_LABELED_QUERIES}"
                              " queries fully judged in most draws) |")  # fmt: skip
                        continue
                    print(
                        f"| {name} ({len(queries)}q) | {judge_name} | {share:.0%} |"
                        f" {measure}@{K} {true_mean:.3f} | {cover / n:.3f} | {cover_h / n:.3f} |"
                        f" {np.median(widths):.3f} | {np.median(widths_h):.3f} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
