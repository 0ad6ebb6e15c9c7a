"""`workbench import-labels`: external labels (TREC qrels or JSONL) as a non-human annotator;
the use case is `workbench.flows.label_import`, the readers `workbench.formats.labels`."""

from __future__ import annotations

import argparse
import json

from workbench.commands import add_output_options, add_store_option, output_format
from workbench.commands.shared_options import add_judge_name_option
from workbench.core.exit_codes import ExitCode
from workbench.core.names import judge_text


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labels", metavar="LABELS", help="TREC qrels or JSONL {qid, docid, grade}")
    add_store_option(parser, required=True)
    add_judge_name_option(parser, "annotator name for the labels")
    parser.add_argument(
        "--format", choices=("qrels", "jsonl"), help="default: jsonl for .jsonl, else qrels"
    )
    parser.add_argument(
        "--role",
        choices=("model", "human"),
        default="model",
        help="model (default: a judge, compared with the humans) or human (another"
        " assessor's round, e.g. existing TREC qrels, paired with the humans)",
    )
    parser.add_argument(
        "--judge-model",
        type=judge_text,
        metavar="TEXT",
        help="with --role model: the model (and its version) that gave the labels, e.g."
        " gpt-4o-2024-08-06; recorded as the judge's identity",
    )
    parser.add_argument(
        "--judge-prompt",
        type=judge_text,
        metavar="TEXT",
        help="with --role model: the prompt's version or hash; recorded as the judge's identity",
    )
    add_output_options(parser, what="the summary")


def run(args: argparse.Namespace) -> int:
    from workbench.core.model import Role
    from workbench.flows.label_import import LabelImport, import_labels
    from workbench.reports.labels import import_document
    from workbench.reports.render import render_text

    request = LabelImport(
        str(args.labels), args.name, args.format, Role(args.role), args.judge_model,
        args.judge_prompt,
    )  # fmt: skip
    report = import_labels(args.db, request)
    if output_format(args) == "json":
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        print(render_text(import_document(report)), end="")
    return ExitCode.OK
