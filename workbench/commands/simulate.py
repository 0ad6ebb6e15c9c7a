"""`workbench simulate`: judge a store's queue with an oracle that answers from existing qrels;
the use case is `workbench.flows.simulate`."""

from __future__ import annotations

import argparse
import sys

from workbench.commands import add_judge_covariate_option, add_store_option, say
from workbench.core.exit_codes import ExitCode
from workbench.core.names import annotator_name


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--oracle", required=True, metavar="QRELS", help="TREC qrels or golden.yaml to answer from"
    )
    parser.add_argument(
        "--annotator", default="oracle", type=annotator_name, help="annotator name (default oracle)"
    )
    parser.add_argument(
        "--budget", type=int, help="at most this many judgments in all (default: the whole queue)"
    )
    parser.add_argument(
        "--per-query",
        type=int,
        help="at most this many judgments per query, one query after another in turn (default: "
        "adaptive stores are judged in the order the app serves: every query measured first)",
    )
    parser.add_argument(
        "--seed", type=int, help="seed of the coverage estimate (default: the pooling's, else 0)"
    )
    parser.add_argument(
        "--policy",
        choices=["adaptive", "static"],
        help="adaptive: the queue that learns from every grade, draws recorded samples and stops "
        "a certified query (needs `pool --policy adaptive`); static: the queue in its order "
        "(default: the store's)",
    )
    parser.add_argument(
        "--target",
        metavar="MEASURE@K:WIDTH",
        help="adaptive: judge until the study interval of this mean (e.g. R@10:0.05) is at most "
        "WIDTH wide for every pooled run, spending each judgment where it narrows it most "
        "(default: judge every query up to --per-query)",
    )
    add_judge_covariate_option(parser, "the queue")
    parser.add_argument(
        "--no-stop",
        action="store_true",
        help="adaptive: keep judging a certified query up to --per-query (equal budgets)",
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.errors import InputError
    from workbench.flows.simulate import SimulateRequest, simulate

    problems = []
    if args.budget is not None and args.budget < 0:
        problems.append("--budget: must be >= 0")
    if args.per_query is not None and args.per_query < 0:
        problems.append("--per-query: must be >= 0")
    if problems:
        raise InputError(problems)
    request = SimulateRequest(
        args.db, args.oracle, args.annotator, args.budget, args.per_query, args.seed,
        args.policy, args.target, args.judge, args.no_stop,
    )  # fmt: skip
    simulate(request, say, lambda line: say(line, file=sys.stderr))
    return ExitCode.OK
