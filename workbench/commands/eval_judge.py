"""`workbench eval --qrels STORE --judge NAME`: the run's P@k from a model judge's labels,
corrected by the human labels (prediction-powered; `workbench.core.ppi`)."""

from __future__ import annotations

import argparse
import sys

from workbench.core.ppi import corrected_precision


def judge_corrected(args: argparse.Namespace, ks: list[int]) -> int:
    from workbench.commands.eval import read_runs
    from workbench.core.display import json_line, visible
    from workbench.core.errors import InputError
    from workbench.core.model import Role, order_pairs
    from workbench.core.resolve import judged_set
    from workbench.reports.corrected import render
    from workbench.store import is_store, open_store

    if not is_store(args.qrels):
        raise InputError([f"--judge: --qrels must be a judgments store, not {args.qrels}"])
    problems: list[str] = []
    runs, _ = read_runs(args.run, problems)
    if not runs:
        problems.append("--judge: give at least one --run")
    if args.target_width is not None and not 0 < args.target_width < 1:
        problems.append("--target-width: an interval width between 0 and 1")
    if problems:
        raise InputError(problems)
    with open_store(args.qrels) as store:
        roles = store.annotators()
        if roles.get(args.judge) != Role.MODEL:
            said = "graded nothing" if args.judge not in roles else f"is {roles[args.judge]}"
            raise InputError([f"--judge {visible(args.judge)}: {said} (a model judge is needed)"])
        judge = {
            (j.query_id, j.doc_id): (j.grade or 0) >= args.rel_threshold
            for j in store.current_judgments(args.judge)
        }
        human_grades = judged_set(store).qrels
    human = {
        (q, d): g >= args.rel_threshold for q, docs in human_grades.items() for d, g in docs.items()
    }
    queries = sorted({q for q, _ in human} | {q for q, _ in judge})
    rows = [
        corrected_precision(
            name,
            {q: order_pairs(docs.items()) for q, docs in scores.items()},
            k,
            judge,
            human,
            queries,
            args.target_width,
        )
        for name, scores in runs.items()
        for k in ks
    ]
    if args.json or args.format == "json":
        sys.stdout.write(json_line({"judge": args.judge, "runs": [r.to_json() for r in rows]}))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(rows, visible(args.judge, one_line=True), args.target_width))

    return 0 if all(r.estimate is not None for r in rows) else 1
