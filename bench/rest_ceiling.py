"""Is the adaptive interval's coverage limited by what its rest model learns, or by the model's
form? Walk each collection adaptively (the code of bench/coverage_sim.py, oracle judgments) and
estimate every query's |Rel| twice: with the rest model the session fitted from its own draws,
and with the rest's shared rate fitted to the full qrels (what no estimator could learn better),
its fall as the session's draws weigh it most, and the queries' departure (alpha) fixed at each
of a grid. If coverage stays
under .95 where alpha is near what the true counts fit, the form (a negative binomial around a
depth-weighted scale) is the limit, not the learning; a smaller alpha buys coverage with width.

Prints, per collection and alpha: share of queries whose true |Rel| lies inside the 95%
interval, and the median interval width / |Rel| (seeds pooled). The session's own row includes
its heavy-rest rule (core.adaptive.rest.HEAVY_REST: alpha at most 1 where the rest holds 40% or
more of the relevant, as on cisi), so on cisi it is no longer the uncapped fit.

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/rest_ceiling.py --work DIR
       [--collections cisi] [--seeds 0,1,2] [--budget 100]"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ALPHAS = (0.5, 1.0, 1.5, 2.0, 3.0)


def true_rest(session, truth) -> dict[str, int]:
    """Per query with a relevant document: its relevant passages outside the candidates."""
    out = {}
    for qid, q in session.queries.items():
        relevant = {d for d, g in truth.get(qid, {}).items() if g >= 1}
        if relevant:
            out[qid] = len(relevant - set(q.frame.doc_ids[: q.frame.candidates]))
    return out


def truth_model(session, rest: dict[str, int], gamma: float, alpha: float):
    """The session's rest model with one grid point: the fall `gamma`, `alpha`, and the shared
    rate kappa fitted to the true rest counts (held as a posterior with a million hits, so its
    draws do not move)."""
    from workbench.core.adaptive.rest import RestModel

    fitted = session.rest_model()
    expected = 0.0
    for qid in rest:
        sample = session.rest_sample(qid)
        expected += sum(fitted.fall(b, sample.bands, gamma) * sample.scale * b.size
                        for b in sample.bands)  # fmt: skip
    kappa = sum(rest.values()) / expected
    hits = 10**6
    return RestModel(fitted.hits, fitted.exposure, ((gamma, alpha, hits / kappa),), (1.0,),
                     hits, fitted.reference)  # fmt: skip


def figures(session, truth, rest_model=None) -> tuple[list[bool], list[float]]:
    inside, widths = [], []
    if rest_model is not None:
        key = (tuple(q.version for q in session.queries.values()), session.model_version)
        session._rest = (key, rest_model)
    for qid in true_rest(session, truth):
        total = session.total(qid)
        relevant = sum(1 for g in truth[qid].values() if g >= 1)
        if total.low is not None:
            inside.append(total.low <= relevant <= total.high)
            widths.append((total.high - total.low) / relevant)
    session._rest = None
    return inside, widths


def main() -> int:
    from coverage_sim import DEFAULT_DIR, adaptive_walk, base_runs

    from workbench.core.adaptive.rest import GAMMAS
    from workbench.formats import read_qrels

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="cisi")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--work", required=True, help="run files (bench/coverage_sim.py --work)")
    parser.add_argument("--cache-dir", default=str(ROOT / ".workbench-cache"))
    args = parser.parse_args()
    work = Path(args.work)
    print("| collection | rest model | cover | width / |Rel| |\n|---|---|---|---|")
    for name in args.collections.split(","):
        root = Path(args.collections_dir) / name
        truth = read_qrels(root / "qrels.tsv")
        runs = base_runs(name, root, work, Path(args.cache_dir))
        rows: dict[str, tuple[list[bool], list[float]]] = {}
        for seed in (int(s) for s in args.seeds.split(",")):
            session, _ = adaptive_walk(name, root, work, runs, truth, seed, args.budget)
            rest = true_rest(session, truth)
            # the fall the true counts fit best, as the session's own grid weighs it
            weights: dict[float, float] = {}
            fitted = session.rest_model()
            for (gamma, *_), w in zip(fitted.grid, fitted.weights, strict=True):
                weights[gamma] = weights.get(gamma, 0.0) + w
            gamma = max(weights, key=weights.get) if weights else GAMMAS[0]
            variants = {"fitted from its draws": None}
            for alpha in ALPHAS:
                variants[f"true rate, alpha {alpha:g}"] = truth_model(session, rest, gamma, alpha)
            for label, model in variants.items():
                inside, widths = figures(session, truth, model)
                held, wide = rows.setdefault(label, ([], []))
                held += inside
                wide += widths
        for label, (inside, widths) in rows.items():
            print(f"| {name} | {label} | {sum(inside) / len(inside):.3f} | "
                  f"{statistics.median(widths):.2f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
