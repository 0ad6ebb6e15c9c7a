"""`workbench import-labels`' use case: a label file (TREC qrels or JSONL) read and written as
one annotator's round, a model judge's (its identity recorded) or a person's. The rules (the
grade scale, unknown queries, labels outside the pool, idempotent re-import) are
`workbench.core.judgments.labels`'; each import is logged in the store's meta table under
"import:NAME"."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.judgments.labels import ROLE, ImportReport, plan_import
from workbench.core.model import Role

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation


@dataclass(frozen=True)
class LabelImport:
    """One file to import under one name (the command's options, parsed)."""

    path: str
    name: str
    format: str | None = None
    """qrels or jsonl; None: by the file's name (`formats.labels.sniff_format`)."""
    role: Role = ROLE
    judge_model: str | None = None
    judge_prompt: str | None = None


def judge_identity(request: LabelImport, digest: str) -> JudgeIdentity:
    """Who gave imported labels: the model and prompt named, else the file itself (its name and
    content: each file is then a version of its own)."""
    if request.judge_model or request.judge_prompt:
        return JudgeIdentity("import-labels", request.judge_model or "", request.judge_prompt or "")
    return JudgeIdentity(
        "import-labels", scorer=f"file {Path(request.path).name}, sha256 {digest[:16]}"
    )


def import_labels(db: StoreLocation, request: LabelImport) -> ImportReport:
    """Read the file, check every label against the store, write what is new; InputError (exit
    2, naming file and line) before anything is written."""
    from workbench.flows.annotator_roles import check_model_name
    from workbench.formats.labels import read_jsonl_labels, read_qrels_labels, sniff_format
    from workbench.store import open_store

    path = request.path
    if request.role != ROLE and (request.judge_model or request.judge_prompt):
        raise InputError(["--judge-model, --judge-prompt: a person's labels have no judge version"])
    fmt = sniff_format(path, request.format)
    ignored: dict[str, int] = {}
    if fmt == "jsonl":
        labels, ignored = read_jsonl_labels(path)
    else:
        labels = read_qrels_labels(path)
    with open_store(db) as store:
        role = Role(request.role)
        check_model_name(store, request.name, "imported labels need a name of their own", role)
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
        current = {(j.query_id, j.doc_id): j for j in store.current_judgments(request.name)}
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        identity = judge_identity(request, digest) if role == ROLE else None
        rows, summary = plan_import(
            labels,
            name=request.name,
            path=path,
            scale=store.grade_scale(),
            known_queries={q.query_id for q in store.queries()},
            pooled=pooled,
            current=current,
            role=role,
            version=identity.version if identity is not None else "",
        )
        report = ImportReport(path, fmt, request.name, summary, ignored, role, identity)
        log = json.loads(store.get_meta(f"import:{request.name}", "[]") or "[]")
        log.append({"at": time.time(), "sha256": digest, **report.to_json()})
        if identity is not None:
            store.record_judge(request.name, identity)
        store.add_judgments(rows, meta={f"import:{request.name}": json.dumps(log)})
    return report
