"""`workbench coverage`: how complete is the judged relevant set, per query.

Judgments counted: each pair's resolved grade (adjudicator, agreement, else low median; model
judges left out, 'oracle' rows from `workbench simulate` counted), or one annotator's with
--annotator. The estimate of what the pool missed needs the stratified sample that
`workbench pool --sample N` mixes into the queue; without judged samples a query is 'unmeasured'."""

from __future__ import annotations

import argparse
import json
from typing import Any

from workbench.commands import (
    add_judge_covariate_option,
    add_output_options,
    add_rel_threshold_option,
    add_store_option,
    finite_number,
    output_format,
    reads_study_once,
    say,
    text_width,
)
from workbench.core.exit_codes import ExitCode
from workbench.core.names import annotator_name


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    add_output_options(parser, ("table", "markdown", "html", "json"))
    parser.add_argument("-k", type=int, default=10, help="cutoff for the ceiling (default 10)")
    parser.add_argument(
        "--complete-at",
        type=finite_number,
        default=0.8,
        help="a query is complete when its completeness lower bound reaches this (default 0.8)",
    )
    parser.add_argument(
        "--min-samples",
        type=int,
        default=1,
        help="judged outside-pool samples a query needs to be measured (default 1)",
    )
    parser.add_argument(
        "--annotator", type=annotator_name, help="count only this annotator's grades"
    )
    add_rel_threshold_option(parser)
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the posterior draws (default: the pooling's for an adaptive store, as the "
        "app's; else 0)",
    )
    parser.add_argument(
        "--target",
        metavar="MEASURE@K:WIDTH",
        help="adaptive store: judging is done when the study interval of this mean (R, P or "
        "nDCG at K) is at most WIDTH wide for every pooled run; for this run only, unless "
        "--save (default: the stored target, R@10:0.05 for a new store)",
    )
    add_judge_covariate_option(parser, stores=False)
    parser.add_argument(
        "--save",
        action="store_true",
        help="store --target and --queue-judge with the study, which the app and every later "
        "command then use (the one write `coverage` makes; without it coverage only reads)",
    )
    reads_study_once(parser)


def _checked(args: argparse.Namespace) -> Any:
    """The options checked (InputError names every problem); the --target parsed, or None."""
    from workbench.core.errors import InputError
    from workbench.core.measures.eval_options import complete_at_problem, cutoff_problem

    checked = [cutoff_problem(args.k, "-k"), complete_at_problem(args.complete_at, "--complete-at")]
    problems = [problem for problem in checked if problem]
    if args.min_samples < 1:
        problems.append("--min-samples: must be >= 1")
    target = None
    if args.target is not None:
        from workbench.core.study import parse_target

        try:
            target = parse_target(args.target)
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise InputError(problems)
    return target


def run(args: argparse.Namespace) -> int:
    from workbench.core.errors import InputError
    from workbench.flows.study_context import CoverageOptions, RunChoices, StudyContext
    from workbench.store import open_store

    target = _checked(args)
    fmt = output_format(args)
    choices = RunChoices(target, args.judge)
    if args.save:
        _save(args, choices)
    options = CoverageOptions(
        args.k, args.complete_at, args.min_samples, args.annotator, args.rel_threshold, args.seed
    )
    with open_store(args.db, read_only=True) as store:
        context = StudyContext(store, options, choices)
        if args.annotator is not None and args.annotator not in context.store.annotators():
            raise InputError([f"--annotator: {args.annotator!r} has no judgments in {args.db}"])
        from workbench.core.display import relevant_wording
        from workbench.flows.activity import store_activity

        parts = context.parts()
        relevant = relevant_wording(context.store.grade_scale(), context.rel_threshold)
        people = store_activity(context.store, context.rel_threshold)
    if fmt == "json":
        data = parts.to_json(context.rel_threshold, people)
        print(json.dumps(data, indent=2, sort_keys=False))
    else:
        from workbench.reports.activity import activity_blocks
        from workbench.reports.coverage import coverage_document
        from workbench.reports.render import render_as

        document = coverage_document(parts.report, parts.plan, parts.judge, relevant)
        document.add(*activity_blocks(people))
        print(render_as(document, fmt, text_width(args)), end="")
    return ExitCode.OK


def _save(args: argparse.Namespace, choices: Any) -> None:
    """`--save`: this run's target and queue judge stored with the study (said on stderr)."""
    import sys

    from workbench.core.errors import InputError
    from workbench.flows.study_context import save_choices
    from workbench.store import open_store

    if choices.target is None and choices.queue_judge is None:
        raise InputError(["--save: stores --target and --queue-judge; give one of them"])
    with open_store(args.db) as store:
        for said in save_choices(store, choices, args.rel_threshold):
            say(f"coverage: {said}", file=sys.stderr)
