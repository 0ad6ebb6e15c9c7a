"""A model judge's labels as a covariate of the adaptive queue's relevance model (pure).

A judge (`judge-llm`, `judge-model`, `import-labels --role model`) labels passages cheaply; its
label of a passage, and the confidence of its answer where it gives one, become features of the
logistic regression behind the queue (`policy.AdaptiveSession`). The estimator stays
design-based: the model's probabilities enter the Des Raj estimate only through residuals of
randomly drawn passages whose probabilities were recorded when drawn (`estimate`), so a judge
that agrees with people narrows the interval and one that does not widens it, never biases it.

One covariate is one version of one judge (`core.judge_versions`): a judge whose version
changed is another covariate, and its labels are never mixed with the old version's. A
passage the judge did not label (in that version) keeps the features it had without a judge,
with a "judge missing" indicator set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

COLUMNS = ("judge_relevant", "judge_grade", "judge_missing", "judge_confidence")
"""The feature columns a judge adds, in order: its label counts as relevant (1/0), its grade
over the top grade, no label, and its confidence signed by its label (+ relevant, - not; 0
when it gives none)."""
PRIOR = (1.0, 0.0, 0.0, 0.0)
"""Prior weights of the columns (the fit moves them by the human grades: ridge-shrunk toward
these, so a judge no better than chance ends near 0 once people have judged a few hundred
passages). A modest pull toward trusting a relevant label before any fit."""


@dataclass(frozen=True, slots=True)
class JudgeLabel:
    """One label of the covariate judge."""

    grade: int
    confidence: float | None = None
    """In [0, 1]: how sure the judge was of its answer; None when it says nothing."""


@dataclass(frozen=True)
class JudgeCovariate:
    """One version of one model judge's labels, per (query, passage)."""

    name: str
    version: str
    labels: Mapping[tuple[str, str], JudgeLabel] = field(default_factory=dict)
    rel_threshold: int = 1
    top: int = 3
    """The top grade of the scale (the grade feature is grade / top)."""

    def describe(self) -> str:
        shown = self.version or "no recorded version"
        return f"{self.name} (version {shown}, {len(self.labels)} labels)"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "labels": len(self.labels)}

    def columns(self, query_id: str, doc_ids: Iterable[str]) -> Any:
        """Passages x `COLUMNS` for one query's frame."""
        import numpy as np

        rows = []
        top = max(self.top, 1)
        for doc_id in doc_ids:
            label = self.labels.get((query_id, doc_id))
            if label is None:
                rows.append((0.0, 0.0, 1.0, 0.0))
                continue
            relevant = 1.0 if label.grade >= self.rel_threshold else 0.0
            grade = min(max(label.grade, 0), top) / top
            sign = 1.0 if relevant else -1.0
            conf = 0.0 if label.confidence is None else sign * min(max(label.confidence, 0.0), 1.0)
            rows.append((relevant, grade, 0.0, conf))
        return np.array(rows, dtype=float).reshape(-1, len(COLUMNS))


@dataclass(frozen=True, slots=True)
class VersionedLabel:
    """A judge's label as the store keeps it: every row, oldest first."""

    query_id: str
    doc_id: str
    grade: int | None
    """None: an undo (the pair returns to unlabelled for that version)."""
    version: str
    confidence: float | None = None


def labels_of_version(
    rows: Iterable[VersionedLabel], version: str
) -> dict[tuple[str, str], JudgeLabel]:
    """The labels one version gave (each pair's latest row of that version; an undo removes
    it): the covariate of that version alone, whatever later versions said of the same pairs."""
    out: dict[tuple[str, str], JudgeLabel] = {}
    for row in rows:
        if row.version != version:
            continue
        key = (row.query_id, row.doc_id)
        if row.grade is None:
            out.pop(key, None)
        else:
            out[key] = JudgeLabel(row.grade, row.confidence)
    return out


def latest_version(rows: Iterable[VersionedLabel]) -> str | None:
    """The version of the judge's latest labelled row (None: it labelled nothing)."""
    latest = None
    for row in rows:
        if row.grade is not None:
            latest = row.version
    return latest
