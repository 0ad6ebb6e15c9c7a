"""`workbench report`: one self-contained HTML page on a judging round (no network, no script,
inline CSS and SVG): coverage, metrics per run with their audit, agreement."""

from __future__ import annotations

import argparse
from dataclasses import replace

from workbench.commands import (
    add_judge_covariate_option,
    add_rel_threshold_option,
    add_store_option,
    finite_number,
    reads_study_once,
)
from workbench.core.exit_codes import ExitCode


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--run", action="append", default=[], metavar="RUN", help="a TREC run to score (repeatable)"
    )
    parser.add_argument(
        "-k",
        action="append",
        metavar="K",
        help="cutoff(s), e.g. -k 5 -k 10 or -k 5,10 (default 10)",
    )
    parser.add_argument("-o", "--output", required=True, metavar="FILE.html", help="the page")
    add_rel_threshold_option(parser)
    parser.add_argument(
        "--complete-at",
        type=finite_number,
        default=0.8,
        help="completeness a query needs (default 0.8)",
    )
    add_judge_covariate_option(parser, "the page's coverage and recall intervals", stores=False)
    reads_study_once(parser)


# long: reads each part of the page once and hands it to the page's builder
def run(args: argparse.Namespace) -> int:

    from workbench.commands import say
    from workbench.core.agreement.agreement import agreement_report
    from workbench.core.errors import InputError
    from workbench.core.evaluation.eval_report import eval_report
    from workbench.core.measures.eval_options import complete_at_problem, cutoffs_of_text
    from workbench.core.model import Role
    from workbench.core.study import study_draws
    from workbench.flows.judged import judged_with_coverage
    from workbench.flows.runs import read_runs
    from workbench.flows.study_context import CoverageOptions, RunChoices, StudyContext
    from workbench.formats.atomic import atomic_write_text, check_outputs, store_companions
    from workbench.reports.render import render_html
    from workbench.reports.study import Study, study_document
    from workbench.store import open_store

    try:
        ks = cutoffs_of_text(args.k)
    except ValueError as exc:
        raise InputError([str(exc)]) from None
    if problem := complete_at_problem(args.complete_at, "--complete-at"):
        raise InputError([problem])
    store_file = {} if args.db.is_url else store_companions("--db", args.db)
    problems = check_outputs(
        {"-o": args.output}, {**store_file, **{f"--run {r}": r for r in args.run}}
    )
    read = read_runs(args.run)
    runs, warnings = read.runs, read.warnings
    problems += read.problems
    if problems:
        raise InputError(problems)
    options = CoverageOptions(k=ks[0], complete_at=args.complete_at, rel_threshold=None)
    with open_store(args.db, read_only=True) as opened:
        context = StudyContext(opened, options, RunChoices(queue_judge=args.judge))
        store, rel_threshold = context.store, context.rel_threshold
        # no plan: its study scores the pooled rankings, the metrics below the run files
        parts = context.parts(plan=False)
        coverage = parts.report
        judged = judged_with_coverage(
            store, context.summary(), args.db, rel_threshold, args.complete_at
        )
        if parts.session is not None and judged.coverage is not None:
            # the study's draws, as `eval` has them on a store: its study line under each run
            draws = study_draws(parts.session)
            judged = replace(judged, coverage=replace(judged.coverage, study=draws))
        current = store.current_judgments()
        agreement = agreement_report(
            current, store.grade_scale(), rel_threshold, identities=store.judge_versions()
        )
        from workbench.flows.activity import store_activity

        people = store_activity(store, rel_threshold)
        poolings = store.poolings()
        study = Study(
            name=args.db.stem,
            queries=len(store.queries()),
            pooled=len(context.pool),
            judged=len({(j.query_id, j.doc_id) for j in current if j.role != Role.MODEL}),
            labelled=len({(j.query_id, j.doc_id) for j in current if j.role == Role.MODEL}),
            annotators=store.annotators(),
            pooling=poolings[-1] if poolings else None,
            corpus_size=store.corpus_size(),
            adaptive=context.adaptive,
        )
    evaluation = None
    if runs:
        evaluation = eval_report(
            judged.qrels or {}, runs, ks, rel_threshold=rel_threshold, run_warnings=warnings,
            coverage=judged.coverage, aliases=judged.aliases, judges=judged.judges,
        )  # fmt: skip
    page = study_document(study, coverage, evaluation, agreement, parts.judge, people)
    atomic_write_text(args.output, render_html(page))
    say(f"Wrote {args.output}: open it in a browser (one file, no network needed).")
    return ExitCode.OK
