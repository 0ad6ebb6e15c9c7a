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
from workbench.core.model import DEFAULT_GRADE_SCALE

if TYPE_CHECKING:
    from workbench.core.agreement import AgreementReport
    from workbench.core.judge_versions import JudgeIdentity

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
    from workbench.core.agreement import agreement_report
    from workbench.core.errors import InputError
    from workbench.reports.agreement import agreement_document
    from workbench.reports.render import render_as
    from workbench.store import open_store

    if bool(args.files) == bool(args.db) or (args.files and len(args.files) != 2):
        raise InputError(["give --db STORE, or two label files (workbench agree A.qrels B.qrels)"])
    if args.files:
        if args.pair:
            raise InputError(["--pair: two label files are the pair already"])
        judgments, pair = _file_judgments(args.files)
        scale: list[int] = sorted(DEFAULT_GRADE_SCALE)
        identities: dict[str, dict[str, JudgeIdentity]] = {}
        people = None
    else:
        from workbench.core.activity import annotator_activity

        with open_store(args.db, read_only=True) as store:
            judgments, scale = store.current_judgments(), sorted(store.grade_scale())
            identities = store.judge_versions()
            people = annotator_activity(store.judgments(), judgments, scale, args.rel_threshold)
        pair = tuple(args.pair) if args.pair else None
        if pair is not None:
            known = {j.annotator for j in judgments}
            missing = [name for name in pair if name not in known]
            if missing:
                raise InputError([f"--pair: {', '.join(missing)} graded nothing in {args.db}"])
            if pair[0] == pair[1]:
                raise InputError(["--pair: give two different annotators"])
    report = agreement_report(judgments, scale, args.rel_threshold, pair, identities)
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


def _file_judgments(paths: list[str]) -> tuple[list, tuple[str, str]]:
    """Each file's labels as the judgments of an annotator named after it (its file name; the
    path when both names are the same)."""
    from pathlib import Path

    from workbench.commands.import_labels import (
        read_jsonl_labels,
        read_qrels_labels,
        sniff_format,
    )
    from workbench.core.errors import InputError
    from workbench.core.model import Judgment, Role
    from workbench.formats.atomic import same_file

    if same_file(paths[0], paths[1]):
        raise InputError([f"{paths[1]}: is {paths[0]} again; compare two different files"])
    names = [Path(p).name for p in paths]
    if names[0] == names[1]:
        names = list(paths)
    judgments = []
    for path, name in zip(paths, names, strict=True):
        if sniff_format(path, None) == "jsonl":
            labels, _ = read_jsonl_labels(path)
        else:
            labels = read_qrels_labels(path)
        judgments += [Judgment(name, lab.query_id, lab.doc_id, lab.grade, role=Role.HUMAN)
                      for lab in labels]  # fmt: skip
    return judgments, (names[0], names[1])


def format_report(report: AgreementReport, show: int = DISAGREEMENTS_SHOWN) -> list[str]:
    """The terminal text as lines."""
    from workbench.reports.agreement import agreement_document
    from workbench.reports.render import render_text

    return render_text(agreement_document(report, show)).splitlines()
