"""`workbench draw-sample`: draw the human sample that `eval --judge` corrects a model judge by:
each pooled item in it independently with a recorded probability (more likely where the judge
calls it relevant or did not grade it, never below a floor). The drawn items come first in the
judging app's queue. Again with the same options: the design is extended to items pooled since
(their own batch, the recorded scale); other options are refused (exit 2), never a change to a
recorded probability."""

from __future__ import annotations

import argparse
import sys

from workbench.commands import (
    add_output_options,
    add_rel_threshold_option,
    add_store_option,
    finite_number,
    output_format,
    say,
)
from workbench.core.exit_codes import ExitCode


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser)
    parser.add_argument(
        "--judge",
        required=True,
        metavar="NAME",
        help="the model judge whose labels shape the probabilities",
    )
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument(
        "--share",
        type=finite_number,
        metavar="F",
        help="expected share of all pooled items drawn (0-1]",
    )
    size.add_argument(
        "--per-query", type=finite_number, metavar="N", help="expected items drawn per query"
    )
    parser.add_argument(
        "--floor",
        type=finite_number,
        metavar="P",
        help="every item's probability at least P (default: half the mean)",
    )
    parser.add_argument(
        "--min-per-query",
        type=finite_number,
        metavar="M",
        help="with --share: raise any query expected to have fewer than M items drawn to M"
        " (all its items, if fewer): R@k and nDCG@k are per-query ratios and need a sample"
        " in every query",
    )
    parser.add_argument(
        "--seed", type=int, metavar="S", help="the draw's seed (default: a random one, recorded)"
    )
    add_rel_threshold_option(parser)
    add_output_options(parser, ("table", "json"))


def run(args: argparse.Namespace) -> int:
    from workbench.core.display import json_line
    from workbench.core.errors import InputError
    from workbench.core.judges.design import DesignPlan, plan_problems
    from workbench.flows.design import draw_sample

    plan = DesignPlan(args.share, args.per_query, args.floor, args.min_per_query)
    problems = plan_problems(plan)
    if args.seed is not None and not 0 <= args.seed < 2**63:
        problems.append(f"--seed {args.seed}: a whole number from 0 to 2^63 - 1")
    if problems:
        raise InputError(problems)
    found = draw_sample(args.db, args.judge, plan, args.seed, args.rel_threshold)
    if output_format(args) == "json":
        sys.stdout.write(json_line(found.to_json()) + "\n")
        return ExitCode.OK
    if found.batch is None:
        say(
            f"design {found.design_id}: nothing new to draw ({found.drawn} of {found.frame}"
            " items drawn before); judge them: workbench judge"
        )
    else:
        say(
            f"design {found.design_id} batch {found.batch} (seed {found.seed}): drew"
            f" {found.new_drawn} of {found.new_items} items (expected {found.expected_new:.1f},"
            f" every probability >= {found.min_prob:.3f}); {found.drawn} of {found.frame} in the"
            " sample. They come first in the judging queue; then eval --judge corrects by them."
        )
    return ExitCode.OK
