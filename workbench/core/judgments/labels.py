"""Labels from a non-human judge (imported qrels or JSONL, or `judge-model`'s grades) as
judgments of role 'model' (pure: the readers are in the command).

Rules: a grade outside the store's scale is an error (every one listed, nothing written); a label
naming a query the store does not know is skipped and counted; a label for a document outside
the pool is kept, its note starting with "outside pool". Re-importing is idempotent: a label
equal to the annotator's current one (grade, note and judge version) is not written again, a
changed one is a new row that supersedes the old (history kept), and earlier labels missing from
the new file stay. A label from another version of the judge is written again even when its
grade is the same, so every current label names the version that gave it."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.core.errors import ProblemCollector
from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.model import Judgment, Role

OUTSIDE_POOL = "outside pool"
ROLE = Role.MODEL
EXAMPLES = 5
"""Unknown query ids named in a summary."""


@dataclass(frozen=True, slots=True)
class Label:
    query_id: str
    doc_id: str
    grade: int
    note: str
    line: int
    """Line in the labels file (0: none)."""


def is_outside_pool(judgment: Judgment) -> bool:
    """True for an imported label whose document was not in the pool when it was imported."""
    return judgment.note == OUTSIDE_POOL or judgment.note.startswith(OUTSIDE_POOL + ";")


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What an import wrote and why the rest was not."""

    labels: int
    new: int
    changed: int
    unchanged: int
    outside_pool: int
    """Kept, with the note `OUTSIDE_POOL`."""
    unknown_queries: tuple[str, ...]
    """Query ids the store does not know, sorted."""
    skipped_labels: int
    """Labels naming an unknown query."""
    kept_from_before: int
    """Earlier labels of the annotator absent from this import."""
    new_version: int = 0
    """Labels whose grade and note are unchanged but come from another version of the judge:
    written again, so the current label names its version."""

    @property
    def written(self) -> int:
        return self.new + self.changed + self.new_version

    def to_json(self) -> dict:
        return {
            "new": self.new,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "outside_pool": self.outside_pool,
            "labels": self.labels,
            "written": self.written,
            "unknown_queries": len(self.unknown_queries),
            "unknown_query_examples": list(self.unknown_queries[:EXAMPLES]),
            "skipped_labels": self.skipped_labels,
            "kept_from_before": self.kept_from_before,
            "new_version": self.new_version,
        }


@dataclass(frozen=True, slots=True)
class ImportReport:
    """`workbench import-labels`: one file imported under one name."""

    file: str
    format: str
    annotator: str
    summary: ImportSummary
    ignored_fields: Mapping[str, int]
    """JSONL field -> lines that carried it (not read)."""
    role: Role = ROLE
    judge: JudgeIdentity | None = None
    """The judge's identity (a model judge's labels; None for a person's)."""

    def to_json(self) -> dict:
        judge = self.judge
        return self.summary.to_json() | {
            "file": self.file,
            "format": self.format,
            "annotator": self.annotator,
            "role": str(self.role),
            "ignored_fields": dict(self.ignored_fields),
            "judge": None if judge is None else {"version": judge.version, **judge.to_json()},
        }


# long: every label's checks, then what is written, in the order the summary reports
def plan_import(
    labels: Sequence[Label],
    *,
    name: str,
    path: str,
    scale: Mapping[int, str],
    known_queries: set[str],
    pooled: set[tuple[str, str]],
    current: Mapping[tuple[str, str], Judgment],
    role: Role = ROLE,
    version: str = "",
) -> tuple[list[Judgment], ImportSummary]:
    """Validate every label, then decide what to write. Raises InputError (every bad grade as
    path:line) before anything is decided; returns the rows to append (carrying the judge's
    `version`) and a summary."""
    problems = ProblemCollector(path)
    for label in labels:
        if label.grade not in scale:
            problems.add(
                label.line or None,
                f"grade {label.grade} (query {label.query_id!r} doc {label.doc_id!r}) is outside "
                f"the store's grade scale {sorted(scale)}",
            )
    problems.raise_if_any()
    known = [label for label in labels if label.query_id in known_queries]
    now = time.time()
    rows: list[Judgment] = []
    new = unchanged = outside = new_version = 0
    for label in known:
        pair = (label.query_id, label.doc_id)
        note = label.note
        if pair not in pooled:
            outside += 1
            note = OUTSIDE_POOL + (f"; {label.note}" if label.note else "")
        before = current.get(pair)
        same = before is not None and before.grade == label.grade and before.note == note
        if same and before is not None and before.judge_version == version:
            unchanged += 1
            continue
        new += before is None
        new_version += same
        rows.append(
            Judgment(
                annotator=name,
                query_id=label.query_id,
                doc_id=label.doc_id,
                grade=label.grade,
                note=note,
                graded_at=now,
                role=role,
                judge_version=version,
            )
        )
    seen = {(label.query_id, label.doc_id) for label in known}
    return rows, ImportSummary(
        labels=len(labels),
        new=new,
        changed=len(rows) - new - new_version,
        unchanged=unchanged,
        outside_pool=outside,
        unknown_queries=tuple(sorted({lb.query_id for lb in labels} - known_queries)),
        skipped_labels=len(labels) - len(known),
        kept_from_before=len(set(current) - seen),
        new_version=new_version,
    )
