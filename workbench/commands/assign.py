"""`workbench assign`: mark a share of the pool for overlap (judged by two annotators, blind);
the use case is `workbench.flows.overlap`."""

from __future__ import annotations

import argparse
import json

from workbench.commands import add_output_options, add_store_option, output_format, say
from workbench.commands.shared_options import add_overlap_options
from workbench.core.exit_codes import ExitCode


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    add_overlap_options(parser, required=True)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choice")
    add_output_options(parser, what="the summary")


def run(args: argparse.Namespace) -> int:
    from workbench.flows.overlap import assign_overlap
    from workbench.reports.overlap import overlap_sentence

    summary = assign_overlap(args.db, args.overlap, args.seed, args.judges)
    as_json = output_format(args) == "json"
    say(json.dumps(summary.to_json(), indent=1) if as_json else overlap_sentence(summary))
    return ExitCode.OK
