"""`workbench eval --qrels STORE --judge NAME`'s use case: each run's P@k, R@k and nDCG@k from a
model judge's labels, corrected by the human labels (prediction-powered; `workbench.core.ppi`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.audit import Problem
    from workbench.core.ppi import CorrectedMetric


@dataclass(frozen=True)
class CorrectedRuns:
    """The corrected rows (run x cutoff x measure) and the warnings about the judge's labels
    (versions mixed)."""

    rows: list[CorrectedMetric]
    warnings: list[Problem]


def judge_corrected_runs(
    store_path: str,
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    judge_name: str,
    ks: list[int],
    rel_threshold: int = 1,
    target_width: float | None = None,
) -> CorrectedRuns:
    """The corrected figures of `runs` from the store's judge `judge_name` (a model judge) and
    its human labels. Raises InputError when `judge_name` is not a model judge of the store."""
    from workbench.core.display import visible
    from workbench.core.errors import InputError
    from workbench.core.judge_versions import JudgeLabels, mixing_problems
    from workbench.core.model import Role, order_pairs
    from workbench.core.ppi import corrected_by_queries, corrected_precision
    from workbench.flows.judged import judged_set
    from workbench.store import open_store

    with open_store(store_path, read_only=True) as store:
        roles = store.annotators()
        if roles.get(judge_name) != Role.MODEL:
            said = "graded nothing" if judge_name not in roles else f"is {roles[judge_name]}"
            raise InputError([f"--judge {visible(judge_name)}: {said} (a model judge is needed)"])
        current = store.current_judgments(judge_name)
        judge_grades = {(j.query_id, j.doc_id): j.grade or 0 for j in current}
        labels = [(j.annotator, j.role, j.judge_version) for j in current]
        warnings = mixing_problems(JudgeLabels.of(labels, store.judge_versions()))
        judge = {key: grade >= rel_threshold for key, grade in judge_grades.items()}
        human_grades = judged_set(store).qrels
        pooled: dict[str, list[str]] = {}
        for entry in store.pool():
            pooled.setdefault(entry.query_id, []).append(entry.doc_id)
    human = {
        (q, d): g >= rel_threshold for q, docs in human_grades.items() for d, g in docs.items()
    }
    queries = sorted({q for q, _ in human} | {q for q, _ in judge})
    judge_qrels: dict[str, dict[str, int]] = {}
    for (q, d), grade in judge_grades.items():
        judge_qrels.setdefault(q, {})[d] = grade
    labeled = [q for q in queries if pooled.get(q) and all((q, d) in human for d in pooled[q])]
    rows = []
    for name, scores in runs.items():
        rankings = {q: order_pairs(docs.items()) for q, docs in scores.items()}
        for k in ks:
            rows.append(corrected_precision(name, rankings, k, judge, human, queries, target_width))
            for measure in ("R", "nDCG"):
                rows.append(
                    corrected_by_queries(name, rankings, k, measure, judge_qrels, human_grades,
                                         labeled, queries, rel_threshold, target_width)
                )  # fmt: skip
    return CorrectedRuns(rows, warnings)
