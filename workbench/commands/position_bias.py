"""`workbench position-bias`: does a pairwise judge's verdict survive swapping the order?"""

from __future__ import annotations

import argparse
import json

from workbench.commands import add_output_options, output_format
from workbench.core.exit_codes import ExitCode


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE",
        help='JSONL {"qid", "a", "b", "first": "a"|"b", "preferred": "a"|"b"|"tie"}; '
        '"a"/"b" name documents, "first" says which was shown first',
    )
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    from workbench.flows.position_bias import position_bias_of_file
    from workbench.reports.position_bias import position_bias_document
    from workbench.reports.render import render_text

    report = position_bias_of_file(str(args.file))
    if output_format(args) == "json":
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        print(render_text(position_bias_document(report, str(args.file))), end="")
    return ExitCode.OK
