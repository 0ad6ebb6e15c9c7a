"""`workbench eval --qrels STORE --judge NAME`: the run's P@k from a model judge's labels,
corrected by the human labels (prediction-powered; `workbench.core.ppi`)."""

from __future__ import annotations

import argparse
import sys

from workbench.core.judge_versions import JudgeLabels, mixing_problems
from workbench.core.ppi import corrected_by_queries, corrected_precision


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
    if args.stage1 or args.stage2:
        problems.append("--judge: the corrected metrics take --run, not --stage1/--stage2")
    if args.target_width is not None and not 0 < args.target_width < 1:
        problems.append("--target-width: an interval width between 0 and 1")
    if problems:
        raise InputError(problems)
    with open_store(args.qrels, read_only=True) as store:
        roles = store.annotators()
        if roles.get(args.judge) != Role.MODEL:
            said = "graded nothing" if args.judge not in roles else f"is {roles[args.judge]}"
            raise InputError([f"--judge {visible(args.judge)}: {said} (a model judge is needed)"])
        current = store.current_judgments(args.judge)
        judge_grades = {(j.query_id, j.doc_id): j.grade or 0 for j in current}
        labels = [(j.annotator, j.role, j.judge_version) for j in current]
        warnings = mixing_problems(JudgeLabels.of(labels, store.judge_versions()))
        judge = {key: grade >= args.rel_threshold for key, grade in judge_grades.items()}
        human_grades = judged_set(store).qrels
        pooled: dict[str, list[str]] = {}
        for entry in store.pool():
            pooled.setdefault(entry.query_id, []).append(entry.doc_id)
    human = {
        (q, d): g >= args.rel_threshold for q, docs in human_grades.items() for d, g in docs.items()
    }
    queries = sorted({q for q, _ in human} | {q for q, _ in judge})
    judge_qrels: dict[str, dict[str, int]] = {}
    for (q, d), grade in judge_grades.items():
        judge_qrels.setdefault(q, {})[d] = grade
    labeled = [q for q in queries if pooled.get(q) and all((q, d) in human for d in pooled[q])]
    rows = []
    for name, scores in runs.items():
        rankings = {q: order_pairs(docs.items()) for q, docs in scores.items()}
        for k in ks:
            rows.append(
                corrected_precision(name, rankings, k, judge, human, queries, args.target_width)
            )
            for measure in ("R", "nDCG"):
                rows.append(
                    corrected_by_queries(name, rankings, k, measure, judge_qrels, human_grades,
                                         labeled, queries, args.rel_threshold, args.target_width)
                )  # fmt: skip
    if args.json or args.format == "json":
        problems = [{"level": str(p.level), "code": p.code, "message": p.message} for p in warnings]
        out = {"judge": args.judge, "runs": [r.to_json() for r in rows], "problems": problems}
        sys.stdout.write(json_line(out) + "\n")
    else:
        notes = [f"{p.level} [{p.code}] {p.message}" for p in warnings]
        fmt = args.format or "table"
        sys.stdout.write(render(rows, args.judge, args.target_width, fmt, notes))

    return 0 if all(r.estimate is not None for r in rows if r.unit == "items") else 1
