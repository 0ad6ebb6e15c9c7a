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

Seeds 0-39 were looked at while the estimator and its small-sample rules were chosen (--dev);
the figures reported are from held-out seeds 1000.. (the default; --first-seed for more).
--variants default,plain sets the interval eval --judge gives beside the one before the
small-sample rules; --diagnose adds the estimates' bias and spread and the mean SE.

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/design_sim.py [--seeds 100] [--dev]
       [--first-seed S] [--collections cacm,cisi,cranfield,npl] [--shares 0.1,0.2]
       [--judges k8,k6,k4,over,random] [--measures P,R,nDCG] [--variants default,plain]
       [--min-per-query M] [--diagnose]"""

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
DEFAULT_DIR = next(
    (p / "shared" / "collections" for p in ROOT.parents if (p / "shared" / "collections").is_dir()),
    ROOT.parent / "shared" / "collections",
)


def collection(root: Path) -> tuple[dict, list[str], dict[str, list[str]]]:
    from workbench.core.model import order_pairs
    from workbench.formats import read_qrels, read_run

    truth = read_qrels(root / "qrels.tsv")
    scores = read_run(root / "runs" / "bm25.run").scores
    queries = sorted(q for q in scores if any(g >= 1 for g in truth.get(q, {}).values()))
    return truth, queries, {q: order_pairs(scores[q].items())[:K] for q in queries}


def true_means(truth: dict, queries: list[str], rankings: dict) -> dict[str, float]:
    from workbench.core.measures.metrics import score_query

    out = {}
    for measure in ("P", "R", "nDCG"):
        values = []
        for q in queries:
            got = score_query(rankings[q], truth[q], [K], measures=[measure]).values
            values.append(float(got[f"{measure}@{K}"] or 0.0))
        out[measure] = sum(values) / len(values)
    return out


VARIANTS = {
    "default": {},
    "plain": {"small_sample": False},
    "small-sample": {"small_sample": True},
}
"""default: what eval --judge runs (the small-sample rules for P@k, plain for R@k and nDCG@k);
plain: lam fitted on the same draw, no variance floor (the estimator before them)."""


def synthetic_judge(rng, truth, queries, frame, hit, false_alarm, grades) -> dict:
    judge = {}
    for q in queries:
        for d in frame[q]:
            g = truth[q].get(d, 0)
            says = rng.random() < (hit if g >= 1 else false_alarm)
            judge[(q, d)] = (g if g >= 1 else int(rng.choice(grades))) if says else 0
    return judge


# long: one seed's draw, then each measure's population and each variant's estimate
def one_seed(setting: dict, seed: int, variants: list[str]) -> dict:
    import numpy as np

    from workbench.core.judges.design import DesignPlan, draw_first
    from workbench.core.judges.design_estimate import Unit, design_mean

    truth, queries, rankings, frame = (
        setting[k] for k in ("truth", "queries", "rankings", "frame")
    )
    hit, false_alarm = JUDGES[setting["judge"]]
    share = setting["share"]
    rng = np.random.default_rng([seed, int(share * 100), len(setting["judge"])])
    judge = synthetic_judge(rng, truth, queries, frame, hit, false_alarm, setting["grades"])
    plan = DesignPlan(share=share, **setting.get("plan", {}))
    items, _ = draw_first(plan, frame, judge, seed)
    drawn = {i.key for i in items if i.drawn}
    probs = {i.key: i.prob for i in items}
    pairs = [(judge[k] >= 1, truth[k[0]].get(k[1], 0) >= 1) for k in probs]
    out = {"kappa": _kappa(pairs), "size": len(drawn), "m": {}}
    for measure, form in setting["forms"].items():
        population = {}
        for q in queries:
            rank = {d: n for n, d in enumerate(rankings[q])}
            docs = rankings[q] if measure == "P" else frame[q]
            population[q] = [
                Unit(d, rank.get(d), probs[(q, d)], (q, d) in drawn, judge[(q, d)],
                     truth[q].get(d, 0))
                for d in docs
            ]  # fmt: skip
        for variant in variants:
            if measure != "P" and variant == "plain" and (measure, "default") in out["m"]:
                out["m"][(measure, variant)] = out["m"][(measure, "default")]  # the same rule
                continue
            e = design_mean(population, form, **VARIANTS[variant])
            assert e is not None and e.human_low is not None
            out["m"][(measure, variant)] = e
    return out


def settings(args):
    from workbench.core.judges.design_estimate import ndcg_form, precision_form, recall_form

    plan = {"min_per_query": args.min_per_query} if args.min_per_query else {}
    for name in args.collections.split(","):
        truth, queries, rankings = collection(Path(args.collections_dir) / name)
        frame = {q: sorted(set(truth[q]) | set(rankings[q])) for q in queries}
        truths = true_means(truth, queries, rankings)
        max_grade = max(g for q in queries for g in truth[q].values())
        forms = {"P": precision_form(K), "R": recall_form(K), "nDCG": ndcg_form(K, max_grade)}
        for judge in args.judges.split(","):
            judge = JUDGE_KEYS.get(judge, judge)
            for share in (float(s) for s in args.shares.split(",")):
                yield {"name": name, "truth": truth, "queries": queries, "rankings": rankings,
                       "frame": frame, "truths": truths, "grades": list(range(1, max_grade + 1)),
                       "forms": forms, "judge": judge, "share": share, "plan": plan}  # fmt: skip


JUDGE_KEYS = {"k8": "honest, kappa~.8", "k6": "honest, kappa~.6", "k4": "honest, kappa~.4",
              "over": "over-grades", "random": "random"}  # fmt: skip


# long: the command line, then one table row per setting, measure and variant
def main() -> int:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=None)
    parser.add_argument("--dev", action="store_true", help="the seeds looked at (0..)")
    parser.add_argument("--collections", default="cacm,cisi,cranfield,npl")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--shares", default="0.1,0.2")
    parser.add_argument("--judges", default=",".join(JUDGE_KEYS))
    parser.add_argument("--measures", default="P,R,nDCG")
    parser.add_argument("--variants", default="default")
    parser.add_argument("--min-per-query", type=float, default=0.0)
    parser.add_argument("--diagnose", action="store_true", help="bias, spread and mean SE too")
    args = parser.parse_args()
    first = args.first_seed if args.first_seed is not None else (0 if args.dev else 1000)
    variants = args.variants.split(",")
    measures = args.measures.split(",")
    print("| collection | judge | kappa | humans (drawn) | measure (true) | variant | covers:"
          " corrected / humans alone | width: corrected / humans alone |"
          + (" bias | sd | mean se |" if args.diagnose else ""))  # fmt: skip
    print("|---|---|---|---|---|---|---|---|" + ("---|---|---|" if args.diagnose else ""))
    for setting in settings(args):
        runs = [one_seed(setting, seed, variants) for seed in range(first, first + args.seeds)]
        kappa = np.mean([r["kappa"] for r in runs])
        size = np.mean([r["size"] for r in runs])
        for measure in measures:
            true = setting["truths"][measure]
            for variant in variants:
                es = [r["m"][(measure, variant)] for r in runs]
                cover = np.mean([e.low <= true <= e.high for e in es])
                cover_h = np.mean([e.human_low <= true <= e.human_high for e in es])
                width = np.median([e.high - e.low for e in es])
                width_h = np.median([e.human_high - e.human_low for e in es])
                row = (
                    f"| {setting['name']} ({len(setting['queries'])}q) | {setting['judge']} |"
                    f" {kappa:.2f} | {setting['share']:.0%} (~{size:.0f}) | {measure}@{K}"
                    f" {true:.3f} | {variant} | {cover:.3f} / {cover_h:.3f} | {width:.3f} /"
                    f" {width_h:.3f} |"
                )
                if args.diagnose:
                    ests = np.array([e.estimate for e in es])
                    ses = np.sqrt([e.variance for e in es])
                    row += (
                        f" {ests.mean() - true:+.4f} | {ests.std(ddof=1):.4f} | {ses.mean():.4f} |"
                    )
                print(row, flush=True)
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
