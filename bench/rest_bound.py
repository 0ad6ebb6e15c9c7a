"""How narrow can an honest interval for a query's relevant documents outside the candidates
be, when it knows everything a cross-query model could learn? An oracle that knows each query's
relevant count among the candidates (every system's top 100), the exact shared rate of the rest
per relevant candidate, and how much queries truly differ (a negative binomial fitted to the
true rest counts) still cannot know which query has an unusually large rest: its 95% interval
for the rest alone (no uncertainty about the candidates at all) is printed as median width /
|Rel|, with how often it holds, for two scales of a query's rest: its relevant candidates
counted plainly (+1), and each weighted by its best rank / 100 (+1/2), the scale the adaptive
estimate uses (`workbench.core.adaptive.rest`). The adaptive estimate adds to this only what
the reserve's few draws per query say about that query; at 100 judgments per query they say
little (issue 11's note). Needs the bench's run files (bench/coverage_sim.py --work DIR) and
scipy (test extra).

Usage: .venv/bin/python bench/rest_bound.py --work DIR [--collections cranfield,cisi,cacm,npl]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DIR = ROOT.parent / "shared" / "collections"


def bound(name: str, collections: Path, work: Path, depth: int = 100) -> list[str]:
    import numpy as np
    from scipy import stats

    from workbench.formats import read_qrels, read_run

    truth = read_qrels(collections / name / "qrels.tsv")
    runs = [read_run(work / f"{name}-runs" / f"{tag}.run").rankings() for tag in ("bm25", "dense")]
    rest, plain, weighted, total = [], [], [], []
    for qid, judged in truth.items():
        relevant = {d for d, g in judged.items() if g >= 1}
        if not relevant:
            continue
        best: dict[str, int] = {}
        for ranking in runs:
            for rank, d in enumerate(ranking.get(qid, [])[:depth], start=1):
                best[d] = min(best.get(d, rank), rank)
        rest.append(len(relevant - best.keys()))
        plain.append(len(relevant & best.keys()) + 1.0)
        weighted.append(sum(best[d] / depth for d in relevant & best.keys()) + 0.5)
        total.append(len(relevant))
    r, rel = np.asarray(rest, dtype=float), np.asarray(total, dtype=float)
    rows = []
    for label, scale in (("plain", plain), ("depth-weighted", weighted)):
        s = np.asarray(scale)
        mu = r.sum() / s.sum() * s  # the model's form, with the true shared rate
        alpha = (mu**2).sum() / ((r - mu) ** 2 - mu).sum()  # moments fit on the true counts
        p = alpha / (alpha + mu)
        low, high = stats.nbinom.ppf(0.025, alpha, p), stats.nbinom.ppf(0.975, alpha, p)
        rows.append(
            f"| {name} | {label} | {len(r)} | {r.sum() / rel.sum():.2f} | {alpha:.2f} | "
            f"{np.median((high - low) / rel):.2f} | {np.mean((r >= low) & (r <= high)):.3f} |"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="cranfield,cisi,cacm,npl")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--work", required=True, help="the --work folder of coverage_sim.py")
    args = parser.parse_args()
    print("| collection | scale | queries | rest share of relevant | NB alpha (true) |"
          " oracle rest-only width / |Rel| | holds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name in args.collections.split(","):
        print("\n".join(bound(name, Path(args.collections_dir), Path(args.work))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
