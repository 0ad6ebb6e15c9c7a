"""Where a study interval's width comes from: one oracle walk (as bench/study_sim.py walks), its
study at one budget, then the same study with each query's rest of the corpus held at its median
draw (only the candidates left uncertain) and with the candidates held instead. The width that
stays when a part is held is what the other part leaves open.

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/study_width.py cacm [--seed 0] [--budget 100]"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from coverage_sim import DEFAULT_DIR, base_runs, pool_adaptive  # noqa: E402
from study_sim import folded  # noqa: E402


def held(draws, part):
    """The draws with every measured query's `part` at its median."""
    import numpy as np

    queries = {}
    for query_id, qd in draws.queries.items():
        if not qd.measured:
            queries[query_id] = qd
            continue
        arrays = {part: np.full_like(getattr(qd, part), np.median(getattr(qd, part)))}
        if part == "rest_missing":
            arrays["rest_rate"] = np.full_like(qd.rest_rate, np.median(qd.rest_rate))
        queries[query_id] = dataclasses.replace(qd, **arrays)
    return dataclasses.replace(draws, queries=queries)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--work", default=str(ROOT / ".workbench-cache" / "study-width"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from workbench.core.adaptive import PolicyConfig
    from workbench.core.adaptive.walk import walk
    from workbench.core.study import study, study_draws
    from workbench.flows.adaptive import session_from_store
    from workbench.formats import read_qrels
    from workbench.store import open_store

    root, work = Path(args.collections_dir) / args.collection, Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    runs = base_runs(args.collection, root, work, ROOT / ".workbench-cache")
    db = work / f"{args.collection}-{args.seed}-{os.getpid()}.db"
    pool_adaptive(root, runs, db, args.seed, work / f"{args.collection}-study-runs")
    with open_store(db) as store:
        config = PolicyConfig(stop_when_certified=False, seed=args.seed)
        session = session_from_store(store, config, annotator="oracle")
        aliases = store.aliases()
    db.unlink()
    rankings, truth = folded(runs, read_qrels(root / "qrels.tsv"), aliases)
    judged: dict[str, dict[str, int]] = {}

    def answer(q, d):
        grade = truth.get(q, {}).get(d, 0)
        judged.setdefault(q, {})[d] = grade
        return grade

    walk(session, answer, args.budget, 1)
    draws = study_draws(session)
    queries = [q for q in session.queries if any(g >= 1 for g in judged.get(q, {}).values())]
    scored = {name: {"R@10": queries} for name in rankings}

    def widths(d):
        result = study(d, judged, rankings, [10], scored, measures=("R",))
        return ", ".join(f"{n} {result[n].intervals['R@10'].width:.3f}" for n in rankings)

    print(f"{args.collection} seed {args.seed}, {args.budget} judgments per query, R@10 width: "
          f"as drawn {widths(draws)}; the rest held {widths(held(draws, 'rest_missing'))}; "
          f"the candidates held {widths(held(draws, 'candidates_missing'))}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
