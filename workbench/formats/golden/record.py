"""The Golden record: what a golden.yaml holds, and the schema's names and keys."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.core.model import DEFAULT_GRADE_SCALE, Qrels, Query, Role

SCHEMA = "workbench-golden"
VERSION = 1
ROLES = tuple(Role)
"""Every role the store writes (see `model.Role`)."""

TOP_KEYS = (
    "schema", "version", "name", "description", "grade_scale", "annotators", "pool",
    "aliases", "coverage", "disagreements", "queries",
)  # fmt: skip
POOL_KEYS = ("systems", "depth", "strategy", "seed", "params")
QUERY_KEYS = ("id", "text", "narrative", "judgments")
JUDGMENT_KEYS = ("doc", "grade", "by", "note")
ANNOTATOR_KEYS = ("name", "role")
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
