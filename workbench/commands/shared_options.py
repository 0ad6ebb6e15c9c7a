"""Options that several commands share and that are not every command's (those are
`workbench.commands`' own): a person's name, a judge's name, the overlap share. Not a command:
a command imports these, never another command."""

from __future__ import annotations

import argparse
import os

from workbench.commands import finite_number
from workbench.core.names import NAME_RULE, annotator_name, name_problem

FALLBACK_ANNOTATOR = "annotator"


def default_annotator() -> str:
    """$USER when it is a valid annotator name, else 'annotator': a default is never refused."""
    user = os.environ.get("USER", "")
    return user if name_problem(user) is None else FALLBACK_ANNOTATOR


def add_annotator_option(parser: argparse.ArgumentParser) -> None:
    """`--annotator NAME` of the one who judges in the app, checked where it enters (exit 2 on
    a bad name)."""
    parser.add_argument(
        "--annotator",
        type=annotator_name,
        default=default_annotator(),
        help=f"your name, {NAME_RULE} (default: $USER when it is one, else 'annotator')",
    )


def add_judge_name_option(parser: argparse.ArgumentParser, help: str) -> None:
    """`--annotator NAME`, required, the name a judge's (or an imported round's) grades are
    stored under; `--as NAME`, its older spelling, still taken but no longer shown."""
    name = parser.add_mutually_exclusive_group(required=True)
    name.add_argument("--annotator", dest="name", type=annotator_name, metavar="NAME", help=help)
    name.add_argument("--as", dest="name", type=annotator_name, help=argparse.SUPPRESS)


def add_overlap_options(parser: argparse.ArgumentParser, required: bool) -> None:
    """`--overlap SHARE` and `--judges N` (`assign`, and `pool` marking it as it pools)."""
    parser.add_argument(
        "--overlap",
        type=finite_number,
        required=required,
        default=None if required else 0.0,
        metavar="SHARE",
        help="share of each query's items judged by two annotators, blind (e.g. 0.2)",
    )
    parser.add_argument(
        "--judges",
        type=int,
        default=2,
        help="distinct annotators each newly marked overlap item needs (default 2)",
    )
