"""Whole-process wall time of `workbench eval --json` against ranx and pytrec_eval, on the
same synthetic files (2,000 queries x 1,000 docs and their qrels) and the same measures.

Each tool runs in a fresh subprocess, file parsing and imports included: that is what a user
(or CI) waits for. One untimed warm-up each (ranx compiles with numba on first use), then the
median of --repeat runs, taken round robin so that a change in machine load hits every tool.
Run: `.venv/bin/python bench/eval_speed.py`; `--baseline DIR` also times the workbench of
another source tree (e.g. `git archive OLD | tar -x -C DIR`): before/after in one run;
`--skip ranx` leaves out the slowest tool. The last line is workbench's time over
pytrec_eval's, the median of the rounds' paired ratios."""

from __future__ import annotations

import argparse
import compileall
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = "workbench eval --json"

WORKBENCH = [
    sys.executable,
    "-m",
    "workbench",
    "eval",
    "--qrels",
    "{qrels}",
    "--run",
    "{run}",
    "-k",
    "5,10",
    "--json",
]

RANX = """
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
evaluate(qrels, run, ["precision@5", "precision@10", "recall@5", "recall@10", "ndcg@5",
                      "ndcg@10", "mrr", "bpref"])
"""

PYTREC = """
import sys
import pytrec_eval
qrels, run = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
evaluator = pytrec_eval.RelevanceEvaluator(
    qrels, {"P.5,10", "recall.5,10", "ndcg_cut.5,10", "recip_rank", "bpref"})
evaluator.evaluate(run)
"""


def write_collection(folder: Path, queries: int, depth: int, seed: int = 7) -> tuple[Path, Path]:
    """A run with distinct float scores (and some ties) and qrels with 1-30 judged docs per
    query, grades 0-3, a third of them retrieved."""
    rnd = random.Random(seed)
    qrels_lines: list[str] = []
    run_lines: list[str] = []
    for q in range(queries):
        qid = f"q{q}"
        docs = rnd.sample(range(100_000), depth)
        score = 50.0
        for rank, d in enumerate(docs, 1):
            score -= rnd.choice((0.0, 0.001, 0.01, 0.1))
            run_lines.append(f"{qid} Q0 doc{d} {rank} {score:.4f} synth\n")
        judged = rnd.sample(docs[:60], rnd.randint(0, 10)) + rnd.sample(
            range(100_000, 200_000), rnd.randint(1, 20)
        )
        for d in judged:
            qrels_lines.append(f"{qid} 0 doc{d} {rnd.choice((0, 0, 1, 2, 3))}\n")
    qrels, run = folder / "synth.qrels", folder / "synth.run"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


def wall(cmd: list[str], cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one run of `cmd`. On a busy machine the
    CPU time is the steadier figure: it does not count waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: an audit finding (e.g. a query without relevant docs)
        raise SystemExit(f"{cmd[:4]} failed ({done.returncode}):\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="a workbench source tree to time too (`python -m workbench` there)",
    )
    parser.add_argument(
        "--skip", action="append", default=[], metavar="TOOL", help="leave out a tool (ranx)"
    )
    args = parser.parse_args()
    # Byte-compiled first, as `pip install` leaves an installed package: with
    # PYTHONDONTWRITEBYTECODE set (as on this project's machines) an editable checkout would
    # otherwise compile every module it imports on every run, which no user's install does.
    for tree in (ROOT, *([args.baseline] if args.baseline else [])):
        compileall.compile_dir(tree / "workbench", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, run = write_collection(folder, args.queries, args.depth)
        (folder / "ranx_eval.py").write_text(RANX)
        (folder / "pytrec_eval_eval.py").write_text(PYTREC)
        workbench_cmd = [a.format(qrels=qrels, run=run) for a in WORKBENCH]
        commands = {
            OURS: (workbench_cmd, ROOT),
            "ranx": ([sys.executable, str(folder / "ranx_eval.py"), str(qrels), str(run)], ROOT),
            "pytrec_eval": (
                [sys.executable, str(folder / "pytrec_eval_eval.py"), str(qrels), str(run)],
                ROOT,
            ),
        }
        if args.baseline:
            commands["workbench (baseline)"] = (workbench_cmd, args.baseline.resolve())
        for name in args.skip:
            commands.pop(name, None)
        size_mb = run.stat().st_size / 1e6
        print(
            f"run: {args.queries} queries x {args.depth} docs ({size_mb:.0f} MB); measures "
            "P@5,10 R@5,10 nDCG@5,10 MRR bpref; median of "
            f"{args.repeat} whole-process runs after one warm-up"
        )
        for cmd, cwd in commands.values():
            wall(cmd, cwd)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # round robin: a change in machine load hits every tool
            for name, (cmd, cwd) in commands.items():
                samples[name].append(wall(cmd, cwd))
        times = {name: statistics.median(w for w, _ in values) for name, values in samples.items()}
        cpus = {name: statistics.median(c for _, c in values) for name, values in samples.items()}
        ours = times[OURS]
        for name, seconds in times.items():
            ratio = "" if name == OURS else f"  ({seconds / ours:.2f}x workbench)"
            print(f"  {name:<22} {seconds:6.2f} s (CPU {cpus[name]:5.2f} s){ratio}")
        if "pytrec_eval" in samples:
            # Each round's pair ran back to back: the median of their ratios is the least noisy.
            for kind, index in (("wall", 0), ("CPU", 1)):
                pairs = zip(samples[OURS], samples["pytrec_eval"], strict=True)
                paired = [a[index] / b[index] for a, b in pairs]
                print(
                    f"  workbench / pytrec_eval ({kind}): {statistics.median(paired):.2f} "
                    f"(median of {len(paired)} paired ratios; {min(paired):.2f}-{max(paired):.2f})"
                )


if __name__ == "__main__":
    main()
