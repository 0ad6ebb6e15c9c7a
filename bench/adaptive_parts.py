"""Where the adaptive estimate's error comes from: per query, the |Rel| estimate is the
candidates' part (every system's top 100, Des Raj over the recorded draws) plus the rest of the
corpus (the reserve's draws through the pooled band model); this splits the qrels the same way
and says, per part, how often its 95% interval holds the true count, its bias and its width.
The candidates' interval is shown from the draws alone and as the estimate uses it (the hull
with the model's Poisson view of the unjudged candidates, `estimate.combine`).

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/adaptive_parts.py [--collections cranfield,cisi]
       [--seeds 0,1,2] [--budget 100] [--work DIR (run files kept between runs)]"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def parts(name: str, seed: int, budget: int, work: Path) -> dict:
    import numpy as np
    from coverage_sim import DEFAULT_DIR, base_runs

    from workbench.core.adaptive import PolicyConfig
    from workbench.core.adaptive.estimate import t_quantile
    from workbench.core.adaptive.rest import fit_rest, rest_draws
    from workbench.flows.adaptive import session_from_store, walk_and_save
    from workbench.flows.pool import PoolOptions, pool_corpus
    from workbench.formats import read_qrels
    from workbench.store import open_store

    root = DEFAULT_DIR / name
    truth = read_qrels(root / "qrels.tsv")
    runs = base_runs(name, root, work, ROOT / ".workbench-cache")
    db = work / f"{name}-parts-{seed}.db"
    db.unlink(missing_ok=True)
    pool_corpus(PoolOptions(root / "corpus.jsonl", root / "queries.jsonl", db, systems=(),
                run_files=[runs["bm25"], runs["dense"]], seed=seed,
                runs_dir=work / f"{name}-parts-runs", policy="adaptive"))  # fmt: skip
    with open_store(db) as store:
        config = PolicyConfig(max_per_query=budget, stop_when_certified=False, seed=seed)
        session = session_from_store(store, config, annotator="oracle")
        walk_and_save(store, session, lambda q, d: truth.get(q, {}).get(d, 0), "oracle", budget)
    db.unlink()
    model = fit_rest([session.rest_sample(q, for_fit=True) for q in session.queries])
    rows = []
    for qid, q in session.queries.items():
        relevant = {d for d, g in truth.get(qid, {}).items() if g >= 1}
        if not relevant:
            continue
        frame = q.frame
        cand_true = len(relevant & set(frame.doc_ids[: frame.candidates]))
        c = session.candidates_total(qid)
        half = t_quantile(c.draws - 1) * math.sqrt(c.variance) if c.draws > 1 else math.inf
        rng = np.random.default_rng([seed, zlib.crc32(qid.encode()), 7])
        # estimate.combine's hull: the model's Poisson view of the unjudged candidates too
        view = c.found + rng.poisson(c.unjudged_expected, 4000)
        m_low, m_high = np.quantile(view, [0.025, 0.975])
        sample = session.rest_sample(qid)
        draws = rest_draws(model, sample, 4000, rng)
        low, high = np.quantile(draws, [0.025, 0.975])
        rows.append(
            {
                "rel": len(relevant),
                "cand": (cand_true, c.est, c.est - half, c.est + half),
                "hull": (
                    cand_true,
                    c.est,
                    min(c.est - half, m_low),
                    max(c.est + half, m_high),
                ),
                "rest": (len(relevant) - cand_true, float(np.median(draws)), low, high),
                "hits": sample.hits,
                "judged": sample.judged,
            }
        )
    return {"rows": rows}


def main() -> int:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="cranfield,cisi,cacm,npl")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--work")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp())
    header = "| collection | seed | part | interval holds | true / estimated sum | width / |Rel| |"
    print(header)
    print("|---|---|---|---|---|---|")
    for name in args.collections.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            rows = parts(name, seed, args.budget, work)["rows"]
            for part in ("cand", "hull", "rest"):
                held = np.mean([lo <= t <= hi for t, _, lo, hi in (r[part] for r in rows)])
                true = sum(r[part][0] for r in rows)
                est = sum(r[part][1] for r in rows)
                width = np.median([(r[part][3] - r[part][2]) / r["rel"] for r in rows])
                label = (
                    "candidates (draws)"
                    if part == "cand"
                    else "candidates (hull with the model's view)"
                    if part == "hull"
                    else (
                        f"rest ({sum(r['hits'] for r in rows)} hits in"
                        f" {sum(r['judged'] for r in rows)} reserve judgments)"
                    )
                )
                print(f"| {name} | {seed} | {label} | {held:.2f} | {true} / {est:.0f} |"
                      f" {width:.2f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
