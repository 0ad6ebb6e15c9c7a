"""`workbench import-labels`: external labels (TREC qrels or JSONL) as a non-human annotator.

The rules (the grade scale, unknown queries, labels outside the pool, idempotent re-import) are
`workbench.core.labels`; this module reads the files and writes the store. Each import is logged
in the store's meta table under "import:NAME"."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.commands import add_output_options, add_store_option, output_format
from workbench.core.errors import InputError, ProblemCollector
from workbench.core.exit_codes import ExitCode
from workbench.core.judge_versions import JudgeIdentity
from workbench.core.labels import ROLE, Label, plan_import
from workbench.core.model import Role
from workbench.core.names import annotator_name, judge_text

if TYPE_CHECKING:
    from workbench.store import JudgmentStore


def read_jsonl_labels(path: str | os.PathLike[str]) -> tuple[list[Label], dict[str, int]]:
    """Strict JSONL reader: one object per line with "qid", "docid" (non-empty strings), "grade"
    (an integer) and optional "note" (a string). Other fields are ignored and counted (returned
    as field -> lines) so the caller can say so. Every problem is collected as path:line."""
    from workbench.formats.textio import json_objects, read_text

    problems = ProblemCollector(str(path))
    labels: list[Label] = []
    ignored: dict[str, int] = {}
    first_line: dict[tuple[str, str], int] = {}
    for lineno, record in json_objects(read_text(path), problems, '"qid", "docid", "grade"'):
        ok = True
        for key in ("qid", "docid"):
            value = record.get(key)
            if not isinstance(value, str) or not value.strip():
                problems.add(lineno, f'"{key}" must be a non-empty string, found {value!r}')
                ok = False
        grade = record.get("grade")
        if isinstance(grade, bool) or not isinstance(grade, int):
            problems.add(lineno, f'"grade" must be an integer, found {grade!r}')
            ok = False
        note = record.get("note", "")
        if not isinstance(note, str):
            problems.add(lineno, f'"note" must be a string, found {note!r}')
            ok = False
        for key in record:
            if key not in ("qid", "docid", "grade", "note"):
                ignored[key] = ignored.get(key, 0) + 1
        if not ok or not isinstance(grade, int):
            continue
        pair = (record["qid"], record["docid"])
        if pair in first_line:
            problems.add(
                lineno,
                f"query {pair[0]!r} doc {pair[1]!r} labelled twice (first on line "
                f"{first_line[pair]})",
            )
            continue
        first_line[pair] = lineno
        labels.append(Label(pair[0], pair[1], grade, note, lineno))
    if not labels and not problems.count:
        problems.add(None, 'no labels (expected JSON lines with "qid", "docid", "grade")')
    problems.raise_if_any()
    return labels, ignored


def read_qrels_labels(path: str | os.PathLike[str]) -> list[Label]:
    """TREC qrels through the strict shared reader, each label keeping its line number."""
    from workbench.formats.textio import read_text
    from workbench.formats.trec import read_qrels

    qrels = read_qrels(path)
    line_of: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(read_text(path).split("\n"), 1):
        parts = line.split()
        if len(parts) == 4 and not parts[0].startswith("#"):
            line_of.setdefault((parts[0], parts[2]), lineno)
    return [
        Label(qid, doc_id, grade, "", line_of.get((qid, doc_id), 0))
        for qid, docs in qrels.items()
        for doc_id, grade in docs.items()
    ]


def check_model_name(store: JudgmentStore, name: str, needs: str, role: str = ROLE) -> None:
    """Refuse a name that an annotator of another role already uses: grades written under it
    would mix into theirs (a model's into a person's, or the reverse)."""
    known = store.annotators().get(name)
    if known is not None and known != role:
        raise InputError(
            [f"--as {name}: already an annotator with role {known!r}; {needs} (role '{role}')"]
        )


def sniff_format(path: str, given: str | None) -> str:
    if given:
        return given
    return "jsonl" if path.lower().endswith((".jsonl", ".ndjson")) else "qrels"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labels", metavar="LABELS", help="TREC qrels or JSONL {qid, docid, grade}")
    add_store_option(parser, required=True)
    parser.add_argument(
        "--annotator",
        "--as",
        dest="name",
        required=True,
        type=annotator_name,
        help="annotator name for the labels (--as: its older spelling)",
    )
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


def judge_identity(args: argparse.Namespace, path: str, digest: str) -> JudgeIdentity:
    """Who gave imported labels: the model and prompt named, else the file itself (its name and
    content: each file is then a version of its own)."""
    if args.judge_model or args.judge_prompt:
        return JudgeIdentity("import-labels", args.judge_model or "", args.judge_prompt or "")
    return JudgeIdentity("import-labels", scorer=f"file {Path(path).name}, sha256 {digest[:16]}")


def run(args: argparse.Namespace) -> int:
    from workbench.core.labels import ImportReport
    from workbench.reports.labels import import_document
    from workbench.reports.render import render_text
    from workbench.store import open_store

    path = str(args.labels)
    if args.role != ROLE and (args.judge_model or args.judge_prompt):
        raise InputError(["--judge-model, --judge-prompt: a person's labels have no judge version"])
    fmt = sniff_format(path, args.format)
    ignored: dict[str, int] = {}
    if fmt == "jsonl":
        labels, ignored = read_jsonl_labels(path)
    else:
        labels = read_qrels_labels(path)
    with open_store(args.db) as store:
        role = Role(args.role)
        check_model_name(store, args.name, "imported labels need a name of their own", role)
        aliases = store.aliases()
        pooled = {(e.query_id, e.doc_id) for e in store.pool()}
        queries_of: dict[str, list[str]] = {}
        for qid, doc_id in pooled:
            queries_of.setdefault(doc_id, []).append(qid)
        pooled |= {
            (qid, alias)
            for alias, canonical in aliases.items()
            for qid in queries_of.get(canonical, ())
        }
        current = {(j.query_id, j.doc_id): j for j in store.current_judgments(args.name)}
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        identity = judge_identity(args, path, digest) if role == ROLE else None
        rows, summary = plan_import(
            labels,
            name=args.name,
            path=path,
            scale=store.grade_scale(),
            known_queries={q.query_id for q in store.queries()},
            pooled=pooled,
            current=current,
            role=role,
            version=identity.version if identity is not None else "",
        )
        report = ImportReport(path, fmt, args.name, summary, ignored, role, identity)
        log = json.loads(store.get_meta(f"import:{args.name}", "[]") or "[]")
        log.append({"at": time.time(), "sha256": digest, **report.to_json()})
        if identity is not None:
            store.record_judge(args.name, identity)
        store.add_judgments(rows, meta={f"import:{args.name}": json.dumps(log)})
    if output_format(args) == "json":
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        print(render_text(import_document(report)), end="")
    return ExitCode.OK
