"""What a coverage summary (golden.yaml's, or a store's) says about the judged set in use: each
query's estimated |Rel| and completeness, checked against the qrels, and re-decided with a
`complete_at` of the user's. Pure: plain data in, typed rows out (`audit_coverage` gates recall
with them)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.core.coverage.status import coverage_status
from workbench.core.model import Status

if TYPE_CHECKING:
    from workbench.core.study.draws import StudyDraws

COVERAGE_FIGURES = ("est_rel", "est_rel_low", "est_rel_high", "completeness", "completeness_low")
"""The figures a coverage summary gives per query (each None or a finite number >= 0)."""


@dataclass(frozen=True, slots=True)
class QueryCoverage:
    """What a coverage summary says about one query's judged relevant set. `status` is
    complete / incomplete / unmeasured as the summary decided (or re-decided with a
    `complete_at` of the user's), or stale: the summary counts another number of judged
    relevant documents than the qrels in use, so its estimate does not describe them."""

    status: Status
    judged_relevant: int
    """Judged relevant documents counted as the summary counts them (aliases not expanded)."""
    est_rel: float | None = None
    est_rel_low: float | None = None
    est_rel_high: float | None = None
    completeness: float | None = None
    completeness_low: float | None = None
    summary_relevant: int | None = None
    """The summary's own count of judged relevant documents, when it differs ('stale')."""
    in_summary: bool = True
    sampled: int | None = None
    """Its passages sampled outside the pool, as the summary says (None: it does not say)."""
    to_estimate: int | None = None
    """The judgments that would give it an estimate, as the summary says (`QueryFigures`; None:
    none would, or the summary does not say)."""

    @property
    def measured(self) -> bool:
        return self.status in (Status.COMPLETE, Status.INCOMPLETE) and self.est_rel_high is not None


@dataclass(frozen=True, slots=True)
class Coverage:
    """The coverage summary checked against the qrels in use, per query of the qrels."""

    source: str
    complete_at: float | None
    queries: dict[str, QueryCoverage]
    judged: Mapping[str, Mapping[str, int]]
    """The judged grades as the summary counted them: aliases not expanded."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """alias doc id -> canonical doc id: a ranking's alias counts as its canonical doc."""
    thresholds: Mapping[str, object] = field(default_factory=dict)
    method: str | None = None
    study: StudyDraws | None = None
    """The joint draws of every query's unjudged relevant (an adaptive store's): the study
    intervals' source (`workbench.core.study`); None from a golden.yaml or a static pool."""
    policy: str | None = None
    """'adaptive' or 'static': the queue that judged the store (None: the summary does not say,
    e.g. a golden.yaml exported before it did)."""


def _number(value: object, where: str, problems: list[str]) -> float | None:
    """A coverage figure: None, or a finite number >= 0 (counts and shares are never negative;
    a NaN or an infinity would turn every comparison and division on it into nonsense)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{where}: expected a number or null, found {value!r}")
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0:
        problems.append(f"{where}: expected a finite number >= 0 or null, found {number!r}")
        return None
    return number


def coverage_from_summary(
    summary: Mapping[str, object],
    judged: Mapping[str, Mapping[str, int]],
    *,
    source: str,
    rel_threshold: int = 1,
    aliases: Mapping[str, str] | None = None,
    complete_at: float | None = None,
) -> tuple[Coverage, list[str]]:
    """Check a coverage summary (`workbench.flows.coverage.summary_for_store`, or golden.yaml's
    `coverage`) against `judged` (aliases not expanded). Returns the coverage and the
    problems with the summary's shape, each naming its field (`coverage.queries.QID.KEY`).

    With `complete_at`, a measured query's status is re-decided as coverage does it:
    complete when completeness_low >= complete_at. A query the summary lacks is unmeasured."""
    problems: list[str] = []
    rows = summary.get("queries") if isinstance(summary, Mapping) else None
    if not isinstance(rows, Mapping):
        problems.append("coverage.queries: expected a mapping of query id -> figures")
        rows = {}
    thresholds = summary.get("thresholds") if isinstance(summary, Mapping) else None
    thresholds = thresholds if isinstance(thresholds, Mapping) else {}
    method = summary.get("method") if isinstance(summary, Mapping) else None
    policy = summary.get("policy") if isinstance(summary, Mapping) else None
    queries: dict[str, QueryCoverage] = {}
    for qid, grades in judged.items():
        relevant = sum(1 for g in grades.values() if g >= rel_threshold)
        row = rows.get(qid)
        if row is None:
            queries[qid] = QueryCoverage(Status.UNMEASURED, relevant, in_summary=False)
            continue
        info = _query_coverage(f"coverage.queries.{qid}", row, relevant, complete_at, problems)
        if info is not None:
            queries[qid] = info
    gate = complete_at
    if gate is None:
        gate = _number(thresholds.get("complete_at"), "coverage.thresholds.complete_at", problems)
    coverage = Coverage(
        source=source,
        complete_at=gate,
        queries=queries,
        judged=judged,
        aliases=dict(aliases or {}),
        thresholds=dict(thresholds),
        method=method if isinstance(method, str) else None,
        policy=policy if policy in ("adaptive", "static") else None,
    )
    return coverage, problems


def _query_coverage(
    where: str, row: object, relevant: int, complete_at: float | None, problems: list[str]
) -> QueryCoverage | None:
    """One query's summary row checked (None, with its problem, when unusable)."""
    if not isinstance(row, Mapping):
        problems.append(f"{where}: expected a mapping")
        return None
    figures = {key: _number(row.get(key), f"{where}.{key}", problems) for key in COVERAGE_FIGURES}
    status = row.get("status", Status.UNMEASURED)
    if status not in (Status.COMPLETE, Status.INCOMPLETE, Status.UNMEASURED):
        problems.append(f"{where}.status: {status!r} is not complete, incomplete or unmeasured")
        return None
    status = Status(status)
    if status != Status.UNMEASURED and (
        figures["est_rel_low"] is None or figures["est_rel_high"] is None
    ):
        problems.append(f"{where}: status {status} without est_rel_low and est_rel_high")
        return None
    counted = row.get("relevant")
    if isinstance(counted, int) and not isinstance(counted, bool) and counted != relevant:
        return QueryCoverage(Status.STALE, relevant, summary_relevant=counted)
    sampled, to_estimate = (_count(row.get(key), f"{where}.{key}", problems)
                            for key in ("sampled", "to_estimate"))  # fmt: skip
    if status != Status.UNMEASURED and complete_at is not None:
        low = figures["completeness_low"]
        status = coverage_status(low, complete_at)
    return QueryCoverage(
        status,
        relevant,
        est_rel=figures["est_rel"],
        est_rel_low=figures["est_rel_low"],
        est_rel_high=figures["est_rel_high"],
        completeness=figures["completeness"],
        completeness_low=figures["completeness_low"],
        sampled=sampled,
        to_estimate=to_estimate,
    )


def _count(value: object, where: str, problems: list[str]) -> int | None:
    """A count of the summary's: None, or a whole number >= 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"{where}: expected a whole number >= 0 or null, found {value!r}")
        return None
    return value
