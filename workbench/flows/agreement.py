"""`workbench agree`'s use case: the judgments to compare, read from a store (every annotator
with their activity, or a `--pair`) or from two label files (no store), and their agreement
(`workbench.core.agreement.agreement`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.model import DEFAULT_GRADE_SCALE

if TYPE_CHECKING:
    from workbench.core.agreement.activity import AnnotatorActivity
    from workbench.core.agreement.agreement import AgreementReport
    from workbench.core.model import Judgment
    from workbench.core.store_url import StoreLocation


@dataclass(frozen=True)
class Agreement:
    report: AgreementReport
    people: tuple[AnnotatorActivity, ...] | None = None
    """Who judged what (a store's annotators); None for two files."""


def store_agreement(
    db: StoreLocation, rel_threshold: int, pair: tuple[str, str] | None = None
) -> Agreement:
    """Agreement among the store's annotators (or of `pair` only), with their activity."""
    from workbench.core.agreement.activity import annotator_activity
    from workbench.core.agreement.agreement import agreement_report
    from workbench.store import open_store

    with open_store(db, read_only=True) as store:
        judgments, scale = store.current_judgments(), sorted(store.grade_scale())
        identities = store.judge_versions()
        people = annotator_activity(store.judgments(), judgments, scale, rel_threshold)
    if pair is not None:
        known = {j.annotator for j in judgments}
        missing = [name for name in pair if name not in known]
        if missing:
            raise InputError([f"--pair: {', '.join(missing)} graded nothing in {db}"])
        if pair[0] == pair[1]:
            raise InputError(["--pair: give two different annotators"])
    report = agreement_report(judgments, scale, rel_threshold, pair, identities)
    return Agreement(report, people)


def files_agreement(paths: list[str], rel_threshold: int) -> Agreement:
    """Agreement between two label files, each an annotator named after its file."""
    from workbench.core.agreement.agreement import agreement_report

    judgments, pair = file_judgments(paths)
    scale: list[int] = sorted(DEFAULT_GRADE_SCALE)
    return Agreement(agreement_report(judgments, scale, rel_threshold, pair, {}))


def file_judgments(paths: list[str]) -> tuple[list[Judgment], tuple[str, str]]:
    """Each file's labels as the judgments of an annotator named after it (its file name; the
    path when both names are the same)."""
    from pathlib import Path

    from workbench.core.model import Judgment, Role
    from workbench.formats.atomic import same_file
    from workbench.formats.labels import read_jsonl_labels, read_qrels_labels, sniff_format

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
