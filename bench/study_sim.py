"""Does the study interval hold the truth? Pool real test collections for the adaptive queue,
judge them with an oracle, and at 30, 60, 100 and 150 judgments per query compare the study
intervals of mean R@10 and mean nDCG@10 of both pooled runs (bm25, dense), and of their
difference, with the truth from the full qrels.

Per collection and seed: `pool --policy adaptive` from bm25 and dense run files (1000 deep,
made once, as bench/coverage_sim.py makes them), one oracle walk (`simulate --policy adaptive
--no-stop`, continued from one checkpoint to the next), and at each checkpoint the study of
both runs over the queries eval's mean covers (those with a judged relevant passage). The truth
is the same mean over the same queries with every relevant passage of the qrels known.

Per (collection, run, seed) case: whether the interval holds the true mean (target: 95% of
cases), its width (target <= 0.05 at 100 judgments per query); per (collection, seed): whether
the delta's interval holds the true delta, and whether it excludes 0 when |true delta| >= 0.05.
With `--target R@10:0.05`: the judgments per query at which every run's R@10 interval is at most
0.05 wide (checked every 10 per query).

Seeds 0-2 were used to choose the method; the table is printed for seeds 3-5 (held out) apart.

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/study_sim.py [--collections cranfield,cisi,cacm,npl]
       [--seeds 0,1,2,3,4,5] [--budgets 30,60,100,150] [--out FILE.json] [--summarize FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from coverage_sim import DEFAULT_DIR, base_runs, pool_adaptive  # noqa: E402

HELD_OUT = {3, 4, 5}
KEYS = ("R@10", "nDCG@10", "P@10")


def true_means(truth, rankings, queries, key):
    """The mean of `key` over `queries` with every relevant passage of the qrels known."""
    from workbench.core.measures.metrics import evaluate

    k = int(key.split("@")[1])
    result = evaluate(truth, {q: rankings.get(q, []) for q in queries}, [k], 1, "linear",
                      [key.split("@")[0]])  # fmt: skip
    values = [result.per_query[q].values[key] for q in queries if q in result.per_query]
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def checkpoint(session, judged, runs, truth, count):
    """The study of both runs now, beside the truth."""
    from workbench.core.study import study, study_delta, study_draws

    draws = study_draws(session, count)
    queries = [q for q in session.queries if any(g >= 1 for g in judged.get(q, {}).values())]
    scored = {name: dict.fromkeys(KEYS, queries) for name in runs}
    result = study(draws, judged, runs, [10], scored)
    out = {"queries": len(queries), "runs": {}, "delta": {}}
    for name in runs:
        out["runs"][name] = {
            key: {**result[name].intervals[key].to_json(),
                  "truth": true_means(truth, runs[name], queries, key)}
            for key in KEYS
        }  # fmt: skip
    a, b = list(runs)
    for key in KEYS:
        delta = study_delta(result[a], result[b], key)
        truth_a, truth_b = out["runs"][a][key]["truth"], out["runs"][b][key]["truth"]
        out["delta"][key] = {**delta.to_json(), "truth": truth_a - truth_b}
    return out


def folded(runs, truth, aliases):
    """The runs' rankings and the truth with identical passages folded onto one (the pool's
    aliases), as eval scores a run against the store: a twin is one passage, relevant once."""
    from workbench.core.audit.audit import fold_aliases
    from workbench.formats import read_run

    rankings = {
        tag: {q: fold_aliases(r, aliases) for q, r in read_run(path).rankings().items()}
        for tag, path in runs.items()
    }
    folded_truth = {}
    for q, docs in truth.items():
        for d, g in docs.items():
            c = aliases.get(d, d)
            folded_truth.setdefault(q, {})[c] = max(g, folded_truth.get(q, {}).get(c, g))
    return rankings, folded_truth


def run_seed(name, root, work, runs, truth, seed, budgets, count):
    from workbench.core.adaptive import PolicyConfig
    from workbench.core.adaptive.walk import walk
    from workbench.flows.adaptive import session_from_store
    from workbench.store import open_store

    db = work / f"{name}-study-{seed}-{os.getpid()}.db"  # benches side by side: a store each
    pool_adaptive(root, runs, db, seed, work / f"{name}-study-runs")
    with open_store(db) as store:
        config = PolicyConfig(stop_when_certified=False, seed=seed)
        session = session_from_store(store, config, annotator="oracle")
        aliases = store.aliases()
    db.unlink()
    rankings, truth = folded(runs, truth, aliases)
    judged: dict[str, dict[str, int]] = {}

    def answer(q, d):
        grade = truth.get(q, {}).get(d, 0)
        judged.setdefault(q, {})[d] = grade
        return grade

    done, points = 0, []
    for budget in budgets:
        started = time.time()
        walk(session, answer, budget - done, 1)
        done = budget
        point = checkpoint(session, judged, rankings, truth, count)
        point.update(collection=name, seed=seed, budget=budget, seconds=time.time() - started)
        points.append(point)
        r = point["runs"]
        print(
            f"  {name} seed {seed} B={budget}: "
            + "; ".join(
                f"{run} {key} {v['estimate']:.3f} [{v['low']:.3f}, {v['high']:.3f}] true "
                f"{v['truth']:.3f}"
                for run in r
                for key, v in r[run].items()
                if v["low"] is not None
            )
            + f" ({time.time() - started:.0f}s)",
            file=sys.stderr,
            flush=True,
        )
    return points


def summarize(points, seeds, title):
    print(f"\n{title}")
    head = " | ".join(f"{key} holds | {key} width (median, max)" for key in KEYS)
    print(f"| collection | B | cases | {head} | delta holds | delta decided (|true| >= .05) |")
    print("|---|---|---|" + "---|---|" * len(KEYS) + "---|---|")
    keys = sorted({(p["collection"], p["budget"]) for p in points})
    misses = []
    for collection, budget in keys:
        chosen = [p for p in points if (p["collection"], p["budget"]) == (collection, budget)
                  and p["seed"] in seeds]  # fmt: skip
        if not chosen:
            continue
        cells = []
        for key in KEYS:
            rows = [p["runs"][run][key] for p in chosen for run in p["runs"]]
            measured = [r for r in rows if r["low"] is not None]
            holds = [r["low"] <= r["truth"] <= r["high"] for r in measured]
            widths = sorted(r["high"] - r["low"] for r in measured)
            for p in chosen:
                for run, by in p["runs"].items():
                    r = by[key]
                    if r["low"] is not None and not r["low"] <= r["truth"] <= r["high"]:
                        misses.append(f"{collection} B={budget} seed {p['seed']} {run} {key}: "
                                      f"[{r['low']:.3f}, {r['high']:.3f}] true {r['truth']:.3f}")
            cells.append(f"{sum(holds)}/{len(rows)}")
            cells.append(f"{widths[len(widths) // 2]:.3f}, {widths[-1]:.3f}" if widths else "–")
        deltas = [(p, key, p["delta"][key]) for p in chosen for key in KEYS]
        measured = [(p, key, d) for p, key, d in deltas if d["low"] is not None]
        held = [d["low"] - 1e-9 <= d["truth"] <= d["high"] + 1e-9 for _, _, d in measured]
        for (p, key, d), ok in zip(measured, held, strict=True):
            if not ok:
                misses.append(f"{collection} B={budget} seed {p['seed']} delta {key}: "
                              f"[{d['low']:.3f}, {d['high']:.3f}] true {d['truth']:.3f}")
        big = [d for _, _, d in measured if abs(d["truth"]) >= 0.05]
        decided = sum((d["low"] > 0) == (d["truth"] > 0) and (d["low"] > 0 or d["high"] < 0)
                      for d in big)  # fmt: skip
        print(f"| {collection} | {budget} | {len(chosen) * 2} | {' | '.join(cells)} | "
              f"{sum(held)}/{len(deltas)} | {decided}/{len(big)} |")
    if misses:
        print("\nMisses:")
        print("\n".join(f"- {m}" for m in misses))


def queue_order(name, root, work, runs, truth, seed, count, size=12, most=150):
    """A `size`-query subset (drawn with the seed among the queries with a relevant passage)
    judged in the app's order of work (`policy_chooser` with the study's ranking), one grade
    at a time: the judgments until the first study figure (every scored query with an
    estimate), that figure beside the truth, and the judgments until the R@10 delta's interval
    excludes 0 (checked every `size` judgments, at most `most` per query)."""
    import random

    from workbench.core.adaptive import PolicyConfig
    from workbench.core.adaptive.chooser import policy_chooser
    from workbench.core.adaptive.projection import has_estimate, more_to_estimate, to_first_figure
    from workbench.core.study.target import StudyRanking, target_of
    from workbench.flows.adaptive import session_from_store
    from workbench.store import open_store

    answerable = sorted(q for q, docs in truth.items() if any(g >= 1 for g in docs.values()))
    subset = sorted(random.Random(seed).sample(answerable, min(size, len(answerable))))
    folder = work / f"{name}-queue-{seed}-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    queries = folder / "queries.jsonl"
    keep = set(subset)
    with open(root / "queries.jsonl", encoding="utf-8") as src:
        queries.write_text("".join(line for line in src if json.loads(line)["_id"] in keep))
    subset_runs = {}
    for tag, path in runs.items():
        subset_runs[tag] = folder / f"{tag}.run"
        with open(path, encoding="utf-8") as src:
            subset_runs[tag].write_text("".join(ln for ln in src if ln.split()[0] in keep))
    db = folder / "study.db"
    pool_adaptive(root, subset_runs, db, seed, folder / "runs", queries=queries)
    with open_store(db) as store:
        session = session_from_store(store, PolicyConfig(seed=seed), annotator="oracle")
        pool = store.pool()
        aliases = store.aliases()
    db.unlink()
    rankings, folded_truth = folded(subset_runs, truth, aliases)
    order = list(session.queries)
    choose = policy_chooser(session, order, StudyRanking(session, pool, target_of(None)))
    judged: dict[str, dict[str, int]] = {}
    current, made, first, decided = None, 0, None, None
    forecast_first = to_first_figure(session, order)
    forecasts: dict[str, int] = {}  # each query's "to an estimate" when the queue first serves it
    errors: list[int] = []
    while made < most * len(order):
        found = choose(current, frozenset(), False)
        if found is None:
            break
        current, doc = found
        if current not in forecasts and not has_estimate(session, current):
            forecasts[current] = made + more_to_estimate(session, current, False)
        grade = folded_truth.get(current, {}).get(doc, 0)
        judged.setdefault(current, {})[doc] = grade
        session.record(current, doc, grade >= 1)
        made += 1
        for query_id, due in list(forecasts.items()):
            if due is not None and has_estimate(session, query_id):
                errors.append(made - due)
                forecasts[query_id] = None
        if first is None and all(has_estimate(session, q) for q in order):
            session.refit()
            first = {"judged": made, **checkpoint(session, judged, rankings, folded_truth, count)}
        if first is not None and decided is None and made % len(order) == 0:
            session.refit()
            delta = checkpoint(session, judged, rankings, folded_truth, count)["delta"]["R@10"]
            if delta["low"] is not None and (delta["low"] > 0 or delta["high"] < 0):
                decided = {"judged": made, **delta}
    point = {"collection": name, "seed": seed, "queries": len(order), "first": first,
             "decided": decided, "judged": made, "forecast_first": forecast_first,
             "to_estimate_errors": errors}  # fmt: skip
    said = "no figure" if first is None else f"first figure at {first['judged']}"
    said += "" if decided is None else f", R@10 delta decided at {decided['judged']}"
    print(f"  {name} seed {seed} queue order, {len(order)} queries: {said}", file=sys.stderr)
    return point


def summarize_queue(points):
    print("\nIn the queue's order (12 queries; judgments per query until the first study figure, "
          "and until the R@10 delta excludes 0)")
    print("| collection | seed | first figure (per query) | forecast at the start | "
          "'to an estimate' forecast - actual | R@10 holds | nDCG@10 holds | delta holds | "
          "R@10 delta decided at (per query), right side |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in points:
        first, decided, n = p["first"], p["decided"], p["queries"]
        name = f"| {p['collection']} | {p['seed']} |"
        if first is None:
            print(f"{name} none within {p['judged'] / n:.0f} | | | | |")
            continue
        holds = {key: _held([by[key] for by in first["runs"].values()]) for key in KEYS}
        deltas = [first["delta"][key] for key in KEYS]
        truth = first["delta"]["R@10"]["truth"]
        said = "–"
        if decided is not None:
            right = "yes" if (decided["low"] > 0) == (truth > 0) else "NO"
            said = f"{decided['judged'] / n:.1f}, {right}"
        errors = p.get("to_estimate_errors") or [0]
        spread = f"{-max(errors)} to {-min(errors)}"
        forecast = "–" if p.get("forecast_first") is None else f"{p['forecast_first'] / n:.1f}"
        print(f"{name} {first['judged'] / n:.1f} | {forecast} | {spread} | "
              f"{holds['R@10']}/2 | {holds['nDCG@10']}/2 | "
              f"{_held(deltas)}/{len(deltas)} | {said} (true R@10 delta {truth:+.3f}) |")


def _held(rows):
    """How many of the measured intervals hold their truth (a hair's rounding allowed)."""
    return sum(r["low"] - 1e-9 <= r["truth"] <= r["high"] + 1e-9 for r in rows
               if r["low"] is not None)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="cranfield,cisi,cacm,npl")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--seeds", default="0,1,2,3,4,5")
    parser.add_argument("--budgets", default="30,60,100,150")
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--cache-dir", default=str(ROOT / ".workbench-cache"))
    parser.add_argument("--work", help="keep run files here between runs (default: a temp dir)")
    parser.add_argument("--out", help="write every checkpoint as JSON to this file")
    parser.add_argument("--summarize", metavar="FILE", help="print the tables from --out files")
    parser.add_argument("--queue-order", action="store_true",
                        help="judge a 12-query subset in the app's order of work instead")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.summarize:
        paths = args.summarize.split(",")
        points = [p for path in paths for p in json.loads(Path(path).read_text())]
    else:
        from workbench.formats import read_qrels

        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
        points = []
        with tempfile.TemporaryDirectory(prefix="study-sim-") as tmp:
            work = Path(args.work or tmp)
            work.mkdir(parents=True, exist_ok=True)
            for name in [c.strip() for c in args.collections.split(",") if c.strip()]:
                root = Path(args.collections_dir) / name
                truth = read_qrels(root / "qrels.tsv")
                runs = base_runs(name, root, work, Path(args.cache_dir))
                for seed in seeds:
                    if args.queue_order:
                        points.append(queue_order(name, root, work, runs, truth, seed, args.draws))
                    else:
                        points += run_seed(name, root, work, runs, truth, seed, budgets, args.draws)
                    if args.out:
                        Path(args.out).write_text(json.dumps(points))
    queued = [p for p in points if "first" in p]
    if queued:
        summarize_queue(queued)
    walked = [p for p in points if "first" not in p]
    if walked:
        summarize(walked, {0, 1, 2}, "Seeds 0-2 (used to choose the method)")
        summarize(walked, HELD_OUT, "Held-out seeds (3-5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
