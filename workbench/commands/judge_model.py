"""`workbench judge-model`: a scoring model turned into a graded judge, calibrated on humans.
The use case (scoring, the fit, what is stored) is `workbench.flows.model_judge`."""

from __future__ import annotations

import argparse
import json
import sys

from workbench.commands import (
    add_output_options,
    add_rel_threshold_option,
    add_store_option,
    finite_number,
    output_format,
    say,
)
from workbench.commands.shared_options import add_judge_name_option
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode
from workbench.core.judges.calibration import MIN_HUMAN_LABELS, RESOLVED
from workbench.flows.model_judge import BI_ENCODER, CROSS_ENCODER


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--scorer",
        choices=(CROSS_ENCODER, BI_ENCODER),
        default=CROSS_ENCODER,
        help="how pairs are scored: a cross-encoder's logit (default) or a bi-encoder's cosine "
        "similarity",
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="NAME_OR_PATH",
        help="the scorer's model, folder or name (default: cross-encoder "
        "cross-encoder/ms-marco-MiniLM-L6-v2; bi-encoder the packaged "
        "sentence-transformers/all-MiniLM-L6-v2)",
    )
    add_judge_name_option(parser, "annotator name for the judge")
    parser.add_argument(
        "--fit-on",
        default=RESOLVED,
        metavar="resolved|ANNOTATOR",
        help="human labels to fit on: the resolved human grade (default; items whose humans "
        "disagree without adjudication are left out) or one annotator's grades",
    )
    parser.add_argument(
        "--holdout",
        type=finite_number,
        default=0.3,
        help="share of human labels held out (default 0.3)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the held-out split")
    add_rel_threshold_option(parser, "grade >= this is relevant (binary kappa)")
    parser.add_argument(
        "--min-labels",
        type=int,
        default=None,
        help="refuse to fit on fewer overlapping human labels (default 20)",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="model batch size")
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="embedding cache of the bi-encoder (as `workbench pool`)"
    )
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    import os

    from workbench.flows.model_judge import ModelJudgeRequest, judge_with_model
    from workbench.retrieval import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if args.model is None:
        args.model = DEFAULT_DENSE_MODEL if args.scorer == BI_ENCODER else DEFAULT_RERANK_MODEL
    min_labels = check_options(args)
    request = ModelJudgeRequest(
        args.db, args.scorer, args.model, args.name, args.fit_on, args.holdout, args.seed,
        args.rel_threshold, args.batch_size, args.cache_dir,
    )  # fmt: skip
    report = judge_with_model(request, min_labels, lambda line: say(line, file=sys.stderr))
    if report is None:
        return ExitCode.USAGE
    if output_format(args) == "json":
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        from workbench.reports.calibration import judge_model_document
        from workbench.reports.render import render_text

        print(render_text(judge_model_document(report, args.db)), end="")
    return ExitCode.OK


def check_options(args: argparse.Namespace) -> int:
    """The minimum of human labels; InputError listing every bad option."""
    problems = []
    if not 0.0 <= args.holdout < 1.0:
        problems.append(f"--holdout {args.holdout}: must be at least 0 and below 1")
    min_labels = MIN_HUMAN_LABELS if args.min_labels is None else args.min_labels
    if min_labels < 2:
        problems.append(f"--min-labels {min_labels}: must be at least 2")
    if args.batch_size < 1:
        problems.append(f"--batch-size {args.batch_size}: must be at least 1")
    if problems:
        raise InputError(problems)
    return min_labels
