"""The Golden record: what a golden.yaml holds, and the schema's names and keys."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.core.judgments.judge_versions import (
    Identities,
    JudgeIdentity,
    JudgeLabel,
    JudgeLabels,
)
from workbench.core.judgments.resolve import judge_labels_of
from workbench.core.model import DEFAULT_GRADE_SCALE, Qrels, Query, Role

SCHEMA = "workbench-golden"
VERSION = 2
"""The newest version. 1: the people's judged set. 2 adds the judges: each non-human judge's
versions (`judges`), the version of an oracle's grade (`versions` in a judgment) and model
judges' labels beside the set (`judge_labels` of a query). A set without them is written as 1,
byte for byte as before; both are read."""
VERSIONS = (1, 2)
ROLES = tuple(Role)
"""Every role the store writes (see `model.Role`)."""

TOP_KEYS = (
    "schema", "version", "name", "description", "grade_scale", "annotators", "judges", "pool",
    "aliases", "coverage", "disagreements", "queries",
)  # fmt: skip
POOL_KEYS = ("systems", "depth", "strategy", "seed", "params")
QUERY_KEYS = ("id", "text", "narrative", "judgments", "judge_labels")
JUDGMENT_KEYS = ("doc", "grade", "by", "note", "versions")
ANNOTATOR_KEYS = ("name", "role")
JUDGE_KEYS = ("name", "version", "kind", "model", "prompt", "scorer")
JUDGE_LABEL_KEYS = ("doc", "grade", "by", "version")
COVERAGE_STATUSES = ("complete", "incomplete", "unmeasured")


@dataclass(slots=True)
class Golden:
    name: str
    description: str = ""
    grade_scale: dict[int, str] = field(default_factory=lambda: dict(DEFAULT_GRADE_SCALE))
    annotators: list[dict] = field(default_factory=list)
    """[{"name": .., "role": one of ROLES}]"""
    pool: dict | None = None
    """{"systems": [..], "depth": int, "strategy": str, "seed"?: int | None, "params"?: {..}}"""
    queries: list[Query] = field(default_factory=list)
    qrels: Qrels = field(default_factory=dict)
    """The judged pairs exactly as recorded (aliases not expanded: see `expanded_qrels`)."""
    judged_by: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    """alias doc id -> canonical doc id: an identical passage that takes the canonical grade."""
    coverage: dict | None = None
    disagreements: list[dict] = field(default_factory=list)
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    judges: dict[str, dict[str, JudgeIdentity]] = field(default_factory=dict)
    """judge name -> version -> identity, for each non-human annotator whose are recorded."""
    label_versions: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    """(query, doc) -> non-human annotator in `judged_by` -> the version of its grade."""
    judge_labels: list[JudgeLabel] = field(default_factory=list)
    """Model judges' labels, beside the set: never in `qrels` (a golden set is the people's)."""

    @property
    def has_judges(self) -> bool:
        """Whether the set records judges (and so is written as version 2)."""
        return bool(self.judges or self.label_versions or self.judge_labels)

    def judge_label_counts(self) -> JudgeLabels:
        """Its non-human labels per judge and version (as `JudgedSet.judges` for a store)."""
        roles = {a["name"]: a.get("role", Role.HUMAN) for a in self.annotators}
        identities: Identities = self.judges
        return judge_labels_of(
            self.judged_by, self.label_versions, self.judge_labels, identities, roles
        )

    def expanded_qrels(self) -> Qrels:
        """`qrels` with each alias given its canonical doc's grade (a direct judgment of the
        alias wins), as the TREC qrels export writes them."""
        return expand_aliases(self.qrels, self.aliases)


def expand_aliases(qrels: Qrels, aliases: dict[str, str]) -> Qrels:
    """A copy of `qrels` where each alias takes its canonical doc's grade, per query."""
    by_canonical: dict[str, list[str]] = {}
    for alias, canonical in aliases.items():
        by_canonical.setdefault(canonical, []).append(alias)
    out: Qrels = {}
    for qid, judged in qrels.items():
        expanded = dict(judged)
        for doc_id, grade in judged.items():
            for alias in by_canonical.get(doc_id, ()):
                expanded.setdefault(alias, grade)
        out[qid] = expanded
    return out
