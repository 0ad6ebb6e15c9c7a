"""`workbench agree`: agreement between annotators and of model judges against humans."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from workbench.commands import add_store_option

if TYPE_CHECKING:
    from workbench.core.agreement import AgreementReport

DISAGREEMENTS_SHOWN = 20


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "--format",
        choices=("table", "markdown", "html"),
        default="table",
        help="the report as terminal text (default), Markdown or a self-contained HTML page",
    )
    parser.add_argument(
        "--rel-threshold", type=int, default=1, help="grade >= this is relevant (binary kappa)"
    )
    parser.add_argument(
        "--show", type=int, default=DISAGREEMENTS_SHOWN, help="disagreements listed (default 20)"
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.agreement import agreement_report
    from workbench.reports.agreement import agreement_document
    from workbench.reports.render import RENDERERS
    from workbench.store import open_store

    with open_store(args.db) as store:
        report = agreement_report(
            store.current_judgments(), store.grade_scale(), args.rel_threshold
        )
    if args.json:
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        print(RENDERERS[args.format](agreement_document(report, args.show)), end="")
    return 0


def format_report(report: AgreementReport, show: int = DISAGREEMENTS_SHOWN) -> list[str]:
    """The terminal text as lines."""
    from workbench.reports.agreement import agreement_document
    from workbench.reports.render import render_text

    return render_text(agreement_document(report, show)).splitlines()
