"""`workbench agree`: agreement between annotators and of model judges against humans; or
between any two of them (`--pair A B`); or between two label files with no store
(`workbench agree A.qrels B.qrels`)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from workbench.commands import (
    add_output_options,
    add_rel_threshold_option,
    add_store_option,
    output_format,
    text_width,
)
from workbench.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from workbench.core.agreement.agreement import AgreementReport

DISAGREEMENTS_SHOWN = 20


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="*",
        metavar="LABELS",
        help="two label files (TREC qrels or JSONL) to compare, instead of --db",
    )
    add_store_option(parser)
    parser.add_argument(
        "--pair",
        nargs=2,
        metavar=("A", "B"),
        help="compare these two annotators of the store, whatever their roles",
    )
    add_output_options(parser, ("table", "markdown", "html", "json"))
    add_rel_threshold_option(parser, "grade >= this is relevant (binary kappa)")
    parser.add_argument(
        "--show", type=int, default=DISAGREEMENTS_SHOWN, help="disagreements listed (default 20)"
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.errors import InputError
    from workbench.flows.agreement import files_agreement, store_agreement
    from workbench.reports.agreement import agreement_document
    from workbench.reports.render import render_as

    if bool(args.files) == bool(args.db) or (args.files and len(args.files) != 2):
        raise InputError(["give --db STORE, or two label files (workbench agree A.qrels B.qrels)"])
    if args.files:
        if args.pair:
            raise InputError(["--pair: two label files are the pair already"])
        found = files_agreement(args.files, args.rel_threshold)
    else:
        pair = (args.pair[0], args.pair[1]) if args.pair else None
        found = store_agreement(args.db, args.rel_threshold, pair)
    report, people = found.report, found.people
    fmt = output_format(args)
    if fmt == "json":
        data = report.to_json()
        if people is not None:
            data["per_annotator"] = {p.annotator: p.to_json() for p in people}
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        document = agreement_document(report, args.show)
        if people is not None:  # who judged what first: what a lead reads before any kappa
            from workbench.reports.activity import activity_blocks

            document.blocks[:0] = activity_blocks(people, report.bar)
        print(render_as(document, fmt, text_width(args)), end="")
    return ExitCode.OK


def format_report(report: AgreementReport, show: int = DISAGREEMENTS_SHOWN) -> list[str]:
    """The terminal text as lines."""
    from workbench.reports.agreement import agreement_document
    from workbench.reports.render import render_text

    return render_text(agreement_document(report, show)).splitlines()
