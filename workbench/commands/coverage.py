"""`workbench coverage`: how complete is the judged relevant set, per query.

Judgments counted: each pair's resolved grade (adjudicator, agreement, else low median; model
judges left out, 'oracle' rows from `workbench simulate` counted), or one annotator's with
--annotator. The estimate of what the pool missed needs the stratified sample that
`workbench pool --sample N` mixes into the queue; without judged samples a query is 'unmeasured'."""

from __future__ import annotations

import argparse
import json

from workbench.commands import add_store_option
from workbench.core.names import annotator_name


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--format",
        choices=("table", "json", "markdown", "html"),
        default="table",
        help="table (terminal text), json, markdown, or html (one self-contained page)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (= --format json)")
    parser.add_argument("-k", type=int, default=10, help="cutoff for the ceiling (default 10)")
    parser.add_argument(
        "--complete-at",
        type=float,
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
    parser.add_argument("--rel-threshold", type=int, default=1, help="grade counted as relevant")
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the posterior draws (default: the pooling's for an adaptive store, as the "
        "app's; else 0)",
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.coverage import coverage_for_store
    from workbench.core.errors import InputError
    from workbench.store import open_store

    problems = []
    if args.k < 1:
        problems.append("-k: must be >= 1")
    if not 0 < args.complete_at <= 1:
        problems.append("--complete-at: must be in (0, 1]")
    if args.min_samples < 1:
        problems.append("--min-samples: must be >= 1")
    if problems:
        raise InputError(problems)
    with open_store(args.db, read_only=True) as store:
        if args.annotator is not None and args.annotator not in store.annotators():
            raise InputError([f"--annotator: {args.annotator!r} has no judgments in {args.db}"])
        report = coverage_for_store(
            store,
            k=args.k,
            complete_at=args.complete_at,
            min_samples=args.min_samples,
            annotator=args.annotator,
            rel_threshold=args.rel_threshold,
            seed=args.seed,
        )
    if args.json or args.format == "json":
        print(json.dumps(report.to_json(), indent=2, sort_keys=False))
    else:
        from workbench.reports.coverage import coverage_document
        from workbench.reports.render import RENDERERS

        print(RENDERERS[args.format](coverage_document(report)), end="")
    return 0
