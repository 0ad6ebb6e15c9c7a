"""Does a model judge as the adaptive model's covariate narrow the completeness interval, and
does the interval stay honest whatever the judge? Pool the shared test collections for the
adaptive queue, give the store a synthetic model judge built from the qrels, judge with an
oracle through the queue with the judge as covariate (`session_from_store(judge=...)`, the code
`simulate --judge` runs), and at 30, 60 and 100 human judgments per query compare the per-query
interval of |Rel| with the truth.

Judges (each labels every passage of every query's frame, candidates and reserve, in the store
as role model with a recorded version, as `import-labels` would):

- none: no judge (today's model, rank and tf-idf);
- k.4, k.6, k.8: the truth's grade with probability a (0.4, 0.6, 0.8), else a grade drawn from
  the frames' grades whatever the passage: Cohen's kappa about a on the pool;
- over: the k.8 judge, each label raised one grade with probability 0.3 (an over-grader);
- random: a grade drawn from the frames' grades whatever the passage (kappa about 0);
- model (only when named in --judges): the real `judge-model --scorer bi-encoder` (the packaged
  all-MiniLM-L6-v2), run through the command itself, its cut points fitted on oracle labels of
  queries outside the measured ones (`model_judge`).

The measured binary kappa of each judge on the pool is printed beside its rows.

Per (collection, judge, budget), over the seeds: cover (share of queries whose true |Rel| lies
in the 95% interval; goal >= .95 for every judge), width (median interval width / |Rel|; goal
<= 0.3 with k.8 at 100), MAE and signed (completeness error, estimated - true), certified (share
of queries whose completeness lower bound reaches 0.8; of them truly >= .8). Only queries with
|Rel| >= 1 count. One oracle walk per (seed, judge), continued from one budget to the next
(`--no-stop`: equal budgets).

The judge's prior weights (`workbench.core.adaptive.judge.PRIOR`) were set by hand, not tuned
on any seed; seeds 3-5 are held out all the same (the adaptive queue itself was chosen on 0-2)
and printed apart. `--max-queries` judges the first N queries only: the rest of the corpus's
model is shared over the queries judged, so fewer queries make its part of the interval wider
than a whole study's (the none rows are the baseline to read the judges against).

Usage: HF_HUB_OFFLINE=1 .venv/bin/python bench/judge_sim.py [--collections cranfield,cisi,cacm,npl]
       [--seeds 0,1,2,3,4,5] [--budgets 30,60,100] [--judges none,k.4,k.6,k.8,over,random]
       [--quick (held-out seed 3; budgets 30,100; 20 queries per collection)] [--max-queries N]
       [--reserve N (reserve passages per query; default 300)] [--two-phase]
       [--collections-dir DIR] [--out FILE.json] [--summarize FILE.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from coverage_sim import DEFAULT_DIR, base_runs, pool_adaptive  # noqa: E402

from workbench.core.audit.truth import TruthRow, rows_from_states, summarize_rows  # noqa: E402

HELD_OUT = {3, 4, 5}
JUDGES = ("none", "k.4", "k.6", "k.8", "over", "random")
MODEL_JUDGE = "model"
"""The real bi-encoder judge (`model_judge`): asked for by name, never by default."""
CALIBRATION_LABELS = 300
"""Oracle labels the model judge's cut points are fitted on (`judge-model --fit-on`)."""
QUICK = {"seeds": [3], "budgets": [30, 100], "max_queries": 20}


def judge_grades(kind: str, items, truth, top: int, seed: int) -> dict[tuple[str, str], int]:
    """A synthetic judge's grade of every (query, passage) in `items` (see the docstring)."""
    rng = random.Random(f"{kind}/{seed}")
    true = [min(truth.get(q, {}).get(d, 0), top) for q, d in items]
    out = {}
    for item, grade in zip(items, true, strict=True):
        if kind == "random":
            label = rng.choice(true)
        else:
            agree = 0.8 if kind == "over" else float(kind[2:]) / 10
            label = grade if rng.random() < agree else rng.choice(true)
            if kind == "over" and rng.random() < 0.3:
                label = min(top, label + 1)
        out[item] = label
    return out


def binary_kappa(judge: dict, truth, rel: int = 1) -> float:
    n = len(judge)
    a = [g >= rel for g in judge.values()]
    b = [truth.get(q, {}).get(d, 0) >= rel for q, d in judge]
    agree = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return (agree - chance) / (1 - chance) if chance < 1 else 1.0


def add_judge(store, kind: str, truth, seed: int, queries=None) -> tuple[str, float]:
    """Store the synthetic judge `kind` (role model, a version of its own) of the pool of
    `queries` (default: every query's); its name and its binary kappa on that pool."""
    from workbench.core.judgments.judge_versions import JudgeIdentity
    from workbench.core.model import Judgment, Role

    name = f"judge-{kind}"
    wanted = None if queries is None else set(queries)
    items = sorted(
        {(e.query_id, e.doc_id) for e in store.pool() if wanted is None or e.query_id in wanted}
    )
    grades = judge_grades(kind, items, truth, max(store.grade_scale()), seed)
    store.add_annotator(name, Role.MODEL)
    version = store.record_judge(name, JudgeIdentity("import-labels", scorer=f"synthetic {kind}"))
    store.add_judgments(
        Judgment(name, q, d, g, role=Role.MODEL, judge_version=version)
        for (q, d), g in grades.items()
    )
    return name, binary_kappa(grades, truth)


def model_judge(store, db, truth, seed: int, queries, args) -> tuple[str, float]:
    """The real `judge-model --scorer bi-encoder` judge, run as the command runs (its `judge`:
    every pooled pair scored, cut points fitted, grades stored as role model with a version).
    Its human labels: the oracle's grades of `CALIBRATION_LABELS` pairs drawn from a system's
    top 20 of the queries outside `queries` (as a team calibrates on an earlier, pooled round;
    the measured queries' when there are none), stored as the human annotator 'calibration',
    whom the measured walk (annotator 'oracle') never reads. Its name and its binary kappa on
    the measured queries' pool."""
    from workbench.commands import judge_model
    from workbench.core.model import Judgment, Role
    from workbench.flows.model_judge import ModelJudgeRequest, judge
    from workbench.retrieval import DEFAULT_DENSE_MODEL

    measured = set(queries)
    top = {(e.query_id, e.doc_id) for e in store.pool() if any(p.rank <= 20 for p in e.provenance)}
    pooled = sorted(top)
    outside = [item for item in pooled if item[0] not in measured]
    rng = random.Random(f"model/{seed}")
    chosen = rng.sample(outside or pooled, min(CALIBRATION_LABELS, len(outside or pooled)))
    store.add_annotator("calibration", Role.HUMAN)
    store.add_judgments(
        Judgment("calibration", q, d, truth.get(q, {}).get(d, 0), role=Role.HUMAN)
        for q, d in chosen
    )
    name = "judge-model"
    parser = argparse.ArgumentParser()
    judge_model.configure(parser)
    options = parser.parse_args(["--db", str(db), "--scorer", "bi-encoder", "--annotator",
                                 name, "--fit-on", "calibration", "--cache-dir", args.cache_dir,
                                 "--seed", str(seed)])  # fmt: skip
    request = ModelJudgeRequest(
        options.db, options.scorer, DEFAULT_DENSE_MODEL, name, options.fit_on, options.holdout,
        seed, 1 if options.rel_threshold is None else options.rel_threshold,
        options.batch_size, options.cache_dir,
    )  # fmt: skip; the model: as `run` resolves the bi-encoder's default
    report = judge(store, request, judge_model.check_options(options), print)
    if report is None:
        raise SystemExit("judge-model: the bi-encoder could not be loaded (HF_HUB_OFFLINE=1)")
    grades = {
        (j.query_id, j.doc_id): j.grade
        for j in store.current_judgments(name)
        if j.query_id in measured and j.grade is not None
    }
    held = report.calibration.to_json()["held_out"] or {}
    kappas = {k: v for k, v in held.items() if "kappa" in k}
    print(f"  judge-model (seed {seed}): {len(grades)} labels on the measured queries; fit on "
          f"{len(chosen)} oracle labels of other queries; held out: {kappas}",
          file=sys.stderr, flush=True)  # fmt: skip
    return name, binary_kappa(grades, truth)


def run_seed(name, root, work, runs, truth, seed, args) -> list[dict]:
    """One pooling per seed; per judge, one oracle walk with checkpoints at the budgets."""
    from workbench.core.adaptive import PolicyConfig
    from workbench.core.adaptive.walk import walk
    from workbench.flows.adaptive import judge_covariate, session_from_store
    from workbench.store import open_store

    template = work / f"{name}-judge-{seed}.db"
    pool_adaptive(root, runs, template, seed, work / f"{name}-judge-runs")
    with open_store(template) as store:
        top = max(store.grade_scale())
        queries = [q.query_id for q in store.queries() if truth.get(q.query_id)]
    if args.max_queries:
        queries = queries[: args.max_queries]
    clamped = {q: {d: min(g, top) for d, g in docs.items()} for q, docs in truth.items()}
    out = []
    for kind in args.judges:
        started = time.time()
        db = work / f"{name}-judge-{seed}-{kind}.db"
        shutil.copy(template, db)
        kappa = None
        with open_store(db) as store:
            covariate = None
            if kind == MODEL_JUDGE:
                judge_name, kappa = model_judge(store, db, clamped, seed, queries, args)
                covariate = judge_covariate(store, judge_name)
            elif kind != "none":
                judge_name, kappa = add_judge(store, kind, clamped, seed, queries)
                covariate = judge_covariate(store, judge_name)
            config = PolicyConfig(stop_when_certified=False, seed=seed,
                                  two_phase=args.two_phase)  # fmt: skip
            session = session_from_store(store, config, annotator="oracle", judge=covariate)
        db.unlink()
        done = 0
        for budget in args.budgets:
            walk(session, lambda q, d: clamped.get(q, {}).get(d, 0), budget - done,
                 query_ids=queries)  # fmt: skip
            done = budget
            states = {q: session.state(q) for q in queries}
            rows = rows_from_states(states, truth)
            out.append({"collection": name, "judge": kind, "kappa": kappa, "seed": seed,
                        "budget": budget, "rows": [dataclasses.asdict(r) for r in rows.values()],
                        "seconds": time.time() - started})  # fmt: skip
            s = summarize_rows(list(rows.values()))
            print(
                f"  {name} seed {seed} {kind} B={budget}: cover {s.cover:.3f} width "
                f"{s.width:.2f} certified {s.certified:.3f} ({time.time() - started:.0f}s)",
                file=sys.stderr,
                flush=True,
            )
    template.unlink()
    return out


def with_reserve(size: int) -> None:
    """Pool every frame with a reserve of `size` passages (an experiment: `pool` stores 300; the
    judge labels the whole reserve, the first phase of `core.adaptive.twophase`)."""
    import functools

    import workbench.core.adaptive as adaptive

    adaptive.build_frame = functools.partial(adaptive.build_frame, reserve=size)


def _f(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def print_table(results: list[dict], seeds: set[int] | None, title: str) -> None:
    print(f"\n{title}")
    print("| collection | B | judge (kappa) | cover | width / \\|Rel\\| | MAE | signed | "
          "certified (truly >= .8) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    order = {j: n for n, j in enumerate(JUDGES)}
    keys = sorted(
        {(r["collection"], r["budget"], r["judge"]) for r in results},
        key=lambda k: (k[0], k[1], order.get(k[2], 99)),
    )
    for collection, budget, judge in keys:
        runs = [
            r for r in results
            if (r["collection"], r["budget"], r["judge"]) == (collection, budget, judge)
            and (seeds is None or r["seed"] in seeds)
        ]  # fmt: skip
        if not runs:
            continue
        s = summarize_rows([TruthRow(**row) for run in runs for row in run["rows"]])
        kappas = [r["kappa"] for r in runs if r["kappa"] is not None]
        shown = f"{judge} ({sum(kappas) / len(kappas):.2f})" if kappas else judge
        print(
            f"| {collection} ({len(runs[0]['rows'])}q x {len(runs)}) | {budget} | {shown} | "
            f"{_f(s.cover)} | {_f(s.width, 2)} | {_f(s.mae)} | {s.signed:+.3f} | "
            f"{_f(s.certified)} ({_f(s.certified_ok, 2)}) |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="cranfield,cisi,cacm,npl")
    parser.add_argument("--collections-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--seeds", default="0,1,2,3,4,5")
    parser.add_argument("--budgets", default="30,60,100")
    parser.add_argument("--judges", default=",".join(JUDGES))
    parser.add_argument("--max-queries", type=int, help="judge only the first N queries")
    parser.add_argument("--reserve", type=int, help="reserve passages per query (default 300)")
    two = "sample the reserve in two phases by the judge's label (an experiment; off by default)"
    parser.add_argument("--two-phase", action="store_true", help=two)
    quick = "held-out seed 3 alone; budgets 30,100; the first 20 queries"
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--cache-dir", default=str(ROOT / ".workbench-cache"))
    parser.add_argument("--work", help="keep run files here between runs (default: a temp dir)")
    parser.add_argument("--out", help="write the results as JSON to this file")
    parser.add_argument("--summarize", metavar="FILE", help="print the table from an --out file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.summarize:
        results = json.loads(Path(args.summarize).read_text())
    else:
        args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        args.budgets = sorted(int(b) for b in args.budgets.split(",") if b.strip())
        args.judges = [j.strip() for j in args.judges.split(",") if j.strip()]
        known = (*JUDGES, MODEL_JUDGE)
        unknown = [j for j in args.judges if j not in known]
        if unknown:
            parser.error(f"--judges: unknown {', '.join(unknown)} (known: {', '.join(known)})")
        if args.reserve:
            with_reserve(args.reserve)
        if args.quick:
            args.seeds, args.budgets = QUICK["seeds"], QUICK["budgets"]
            args.max_queries = args.max_queries or QUICK["max_queries"]
        results = []
        with tempfile.TemporaryDirectory(prefix="judge-sim-") as tmp:
            work = Path(args.work or tmp)
            work.mkdir(parents=True, exist_ok=True)
            from workbench.formats import read_qrels

            for name in [c.strip() for c in args.collections.split(",") if c.strip()]:
                root = Path(args.collections_dir) / name
                truth = read_qrels(root / "qrels.tsv")
                runs = base_runs(name, root, work, Path(args.cache_dir))
                for seed in args.seeds:
                    results.extend(run_seed(name, root, work, runs, truth, seed, args))
                    if args.out:
                        Path(args.out).write_text(json.dumps(results))
    held = {r["seed"] for r in results} & HELD_OUT
    if held:
        print_table(results, HELD_OUT, f"Held-out seeds ({', '.join(map(str, sorted(held)))})")
    print_table(results, None, "All seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
