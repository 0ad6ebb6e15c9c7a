"""`workbench judge`: open the judging app on one annotator's queue, or (--adjudicate) on the
pairs whose human annotators disagree. The checks before the app opens are
`workbench.flows.app_entry`'s; the opening itself `workbench.commands.app_launch`'s."""

from __future__ import annotations

import argparse

from workbench.commands import (
    add_judge_covariate_option,
    add_rel_threshold_option,
    add_store_option,
    store_judge_choice,
)
from workbench.commands.shared_options import add_annotator_option


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    add_annotator_option(parser)
    add_rel_threshold_option(parser)
    parser.add_argument(
        "--adjudicate",
        action="store_true",
        help="walk the disagreements between human annotators; your grade (role"
        " 'adjudicator') decides the pair in exports",
    )
    add_judge_covariate_option(parser, "the queue")


def run(args: argparse.Namespace) -> int:
    from workbench.commands.app_launch import open_app

    if args.judge is not None:
        store_judge_choice(args.db, args.judge, args.rel_threshold, "judge")
    return open_app(args.db, args.annotator, args.rel_threshold, adjudicate=args.adjudicate)
