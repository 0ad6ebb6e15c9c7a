"""Is `eval --judge`'s correction by a recorded design valid, and how wide? On each shared
collection, the bm25 run's top 10 per query (queries with |Rel| >= 1); the frame of each query
(the pool a study would judge): its qrels documents and the run's top 10; the truth: the qrels.
A synthetic judge grades every frame item (an honest judge at three agreement levels, one that
over-grades, and a random one: the qrels' grade with probability `hit` where relevant, a random
positive grade with probability `false_alarm` where not). The human sample is drawn as
`workbench draw-sample --share S` draws it (`core.design`: Poisson, judge-positive items twice
as likely, floored) and humans give the qrels' grade on the drawn items. Per setting and seed:
P@10, R@10 and nDCG@10 by `core.design_estimate.design_mean` (the code eval --judge runs);
the share of 95% intervals holding the true mean, and the median widths, beside the humans
alone (Horvitz-Thompson on the same draw, lam = 0).

Seeds 0..D-1 were looked at while the estimator was written (--dev); the figures reported are
from held-out seeds 1000.. (the default).

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/design_sim.py [--seeds 100] [--dev]
       [--collections cacm,cisi] [--shares 0.1,0.2]"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

JUDGES = {
    "honest, kappa~.8": (0.90, 0.04),
    "honest, kappa~.6": (0.80, 0.10),
    "honest, kappa~.4": (0.65, 0.18),
    "over-grades": (0.97, 0.35),
    "random": (0.30, 0.30),
}
K = 10
DEFAULT_DIR = ROOT.parent / "shared" / "collections"


def collection(root: Path) -> tuple[dict, list[str], dict[str, list[str]]]:
    from workbench.core.model import order_pairs
    from workbench.formats import read_qrels, read_run

    truth = read_qrels(root / "qrels.tsv")
    scores = read_run(root / "runs" / "bm25.run").scores
    queries = sorted(q for q in scores if any(g >= 1 for g in truth.get(q, {}).values()))
    return truth, queries, {q: order_pairs(scores[q].items())[:K] for q in queries}


def true_means(truth: dict, queries: list[str], rankings: dict) -> dict[str, float]:
    from workbench.core.metrics import score_query

    out = {}
    for measure in ("P", "R", "nDCG"):
        values = []
        for q in queries:
            got = score_query(rankings[q], truth[q], [K], measures=[measure]).values
            values.append(float(got[f"{measure}@{K}"] or 0.0))
        out[measure] = sum(values) / len(values)
    return out


# long: one loop over settings and seeds, printing a table row per setting
def main() -> int:
    import numpy as np

    from workbench.core.design import DesignPlan, draw_first
    from workbench.core.design_estimate import (
        Unit,
        design_mean,
        ndcg_form,
        precision_form,
        recall_form,
    )

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--dev", action="store_true", help="the seeds looked at (0..)")
    parser.add_argument("--collections", default="cacm,cisi,cranfield,npl")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--shares", default="0.1,0.2")
    args = parser.parse_args()
    first_seed = 0 if args.dev else 1000
    print("| collection | judge | kappa | humans (drawn) | measure (true) | covers: corrected /"
          " humans alone | width: corrected / humans alone |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name in args.collections.split(","):
        truth, queries, rankings = collection(Path(args.collections_dir) / name)
        frame = {q: sorted(set(truth[q]) | set(rankings[q])) for q in queries}
        truths = true_means(truth, queries, rankings)
        max_grade = max(g for q in queries for g in truth[q].values())
        grades = list(range(1, max_grade + 1))
        forms = {"P": precision_form(K), "R": recall_form(K), "nDCG": ndcg_form(K, max_grade)}
        for judge_name, (hit, false_alarm) in JUDGES.items():
            for share in (float(s) for s in args.shares.split(",")):
                stats = {m: ([], [], [], []) for m in forms}
                kappas, sizes = [], []
                for seed in range(first_seed, first_seed + args.seeds):
                    rng = np.random.default_rng([seed, int(share * 100), len(judge_name)])
                    judge = {}
                    for q in queries:
                        for d in frame[q]:
                            g = truth[q].get(d, 0)
                            says = rng.random() < (hit if g >= 1 else false_alarm)
                            judge[(q, d)] = (
                                (g if g >= 1 else int(rng.choice(grades))) if says else 0
                            )
                    items, _ = draw_first(DesignPlan(share=share), frame, judge, seed)
                    drawn = {i.key for i in items if i.drawn}
                    probs = {i.key: i.prob for i in items}
                    sizes.append(len(drawn))
                    pairs = [(judge[k] >= 1, truth[k[0]].get(k[1], 0) >= 1) for k in probs]
                    kappas.append(_kappa(pairs))
                    for measure, form in forms.items():
                        population = {}
                        for q in queries:
                            rank = {d: n for n, d in enumerate(rankings[q])}
                            docs = rankings[q] if measure == "P" else frame[q]
                            population[q] = [
                                Unit(d, rank.get(d), probs[(q, d)], (q, d) in drawn,
                                     judge[(q, d)], truth[q].get(d, 0))
                                for d in docs
                            ]  # fmt: skip
                        e = design_mean(population, form)
                        assert e is not None and e.human_low is not None
                        cover, cover_h, width, width_h = stats[measure]
                        cover.append(e.low <= truths[measure] <= e.high)
                        cover_h.append(e.human_low <= truths[measure] <= e.human_high)
                        width.append(e.high - e.low)
                        width_h.append(e.human_high - e.human_low)
                for measure, (cover, cover_h, width, width_h) in stats.items():
                    print(
                        f"| {name} ({len(queries)}q) | {judge_name} | {np.mean(kappas):.2f} |"
                        f" {share:.0%} (~{np.mean(sizes):.0f}) | {measure}@{K}"
                        f" {truths[measure]:.3f} | {np.mean(cover):.3f} / {np.mean(cover_h):.3f}"
                        f" | {np.median(width):.3f} / {np.median(width_h):.3f} |",
                        flush=True,
                    )
    return 0


def _kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    agree = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return (agree - chance) / (1 - chance) if chance < 1 and not math.isclose(chance, 1) else 0.0


if __name__ == "__main__":
    sys.exit(main())
