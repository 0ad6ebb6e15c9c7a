"""Recall under the estimated |Rel|, and the gate: a coverage summary (how complete each
query's judged relevant set is) checked against the qrels in use, the range recall@k takes
when |Rel| lies anywhere in the estimate's interval, and the problems that fail
`eval --strict` on an incomplete judged set or a denominator not measured. Pure: plain data
in, typed rows out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.core.audit.audit import Problem
from workbench.core.audit.judged_coverage import Coverage, QueryCoverage
from workbench.core.measures.measure_view import RankingLike, top_k
from workbench.core.model import Level, Status

NOT_MEASURED = "coverage_not_measured"
"""The judgments as a whole carry no completeness measure (TREC qrels, in-memory grades, a
golden.yaml without its coverage summary)."""
GATE_CODES = frozenset(
    {"incomplete_judgments", "unmeasured_coverage", "coverage_mismatch", NOT_MEASURED}
)
"""The gate's problems: warnings, and errors under --strict (and wherever a gate is asked for:
`--fail-under`, `assert_eval`): a denominator measured incomplete, or not measured at all."""


def judged_hits(
    ranking: RankingLike,
    judged: Mapping[str, int],
    k: int,
    rel_threshold: int = 1,
    aliases: Mapping[str, str] | None = None,
) -> int:
    """Distinct judged relevant documents in the top k, an alias counting as its canonical
    document (unless judged itself): the numerator of recall in the coverage summary's units."""
    aliases = aliases or {}
    found: set[str] = set()
    for doc_id in top_k(ranking, k):
        key = doc_id if doc_id in judged else aliases.get(doc_id, doc_id)
        if judged.get(key, -1) >= rel_threshold:
            found.add(key)
    return len(found)


def recall_interval(
    hits: int, judged_relevant: int, est_rel_low: float, est_rel_high: float
) -> tuple[float, float] | None:
    """[hits / est_rel_high, hits / est_rel_low]: the range of recall@k when |Rel| lies in the
    estimate's interval. |Rel| is never below the judged relevant count, so the high end never
    exceeds recall against the judged set. `hits` counts judged relevant documents only.

    None when the interval admits |Rel| = 0 (nothing relevant judged and an estimate whose low
    end is 0): recall@k is undefined at that end, so no interval is given; None too for an
    estimate that is not a finite number >= 0 (never a figure built on it)."""
    if not all(math.isfinite(v) and v >= 0 for v in (est_rel_low, est_rel_high)):
        return None
    low_denominator = max(est_rel_low, float(judged_relevant), float(hits))
    high_denominator = max(est_rel_high, low_denominator)
    if low_denominator <= 0:
        return None
    return hits / high_denominator, min(1.0, hits / low_denominator)


def no_relevant_coverage_note(info: QueryCoverage, k: int) -> str | None:
    """What the coverage estimate adds to a query with no judged relevant document: whether
    |Rel| may be 0 (then R@k stays undefined under the estimate too) or relevant documents
    surely exist that nobody judged. None when the query's coverage is not measured."""
    if not info.measured or info.judged_relevant:
        return None
    estimate = (
        f"the coverage estimate puts |Rel| at {_opt(info.est_rel, 1)} "
        f"[{_opt(info.est_rel_low, 1)}, {_opt(info.est_rel_high, 1)}]"
    )
    if recall_interval(0, 0, info.est_rel_low or 0.0, info.est_rel_high or 0.0) is None:
        return f"{estimate}: |Rel| may be 0, so R@{k} is undefined under the estimated |Rel| too"
    return (
        f"{estimate}: relevant documents exist that nobody judged yet (judge more: under the "
        f"estimated |Rel| R@{k} is 0 until one is found)"
    )


# --- the gate ---------------------------------------------------------------------------------


def unmeasured_judgments(
    coverage: Coverage | None, strict: bool, assume_complete: bool
) -> list[Problem]:
    """The whole judged set's gate: `not_measured_problem` where a gate is asked for (`strict`)
    on judgments without coverage, unless `assume_complete` states them complete; the
    assumption beside a coverage of their own is refused (InputError)."""
    if assume_complete and coverage is not None:
        from workbench.core.errors import InputError

        raise InputError([
            f"--assume-complete: {coverage.source} carries its own completeness measure; the "
            "assumption is for judgments that carry none (TREC qrels)"
        ])  # fmt: skip
    if coverage is None and strict and not assume_complete:
        return [not_measured_problem()]
    return []


def not_measured_problem() -> Problem:
    """The gate's word on judgments that carry no completeness measure, where a gate is asked
    for (--strict, --fail-under, the Python API): an error saying what would measure them and
    how to state the assumption instead. Without a gate nothing is said (the output of plain
    qrels stays as it always was)."""
    message = (
        "these judgments carry no completeness measure (TREC qrels, grades given in memory, or "
        "a golden.yaml exported without its coverage summary): how far recall against them "
        "overstates recall (relevant documents nobody judged lower it) is unknown, so a gate "
        "cannot pass on them; score the judgments store they came from (--qrels study.db) or "
        "its golden.yaml (`workbench export --golden`), which carry the coverage estimate, or "
        "state the assumption with --assume-complete (assume_complete=True in Python) for a "
        "collection judged to completion"
    )
    return Problem(None, Level.ERROR, NOT_MEASURED, message)


@dataclass(frozen=True, slots=True)
class RecallRange:
    """R@k under the estimated |Rel|: `low`-`high` as |Rel| spans the estimate's interval,
    `estimate` at its point estimate; None where undefined (unmeasured, or |Rel| may be 0)."""

    low: float | None = None
    estimate: float | None = None
    high: float | None = None


@dataclass(frozen=True, slots=True)
class GateRow:
    """One query's coverage and its recall range at each k."""

    coverage: QueryCoverage
    recall: dict[int, RecallRange]


@dataclass(frozen=True, slots=True)
class GateMean:
    """Means over the scored queries that are measured, and how many scored queries have each
    status."""

    recall: dict[int, RecallRange]
    completeness: float | None
    completeness_low: float | None
    statuses: dict[Status, int]

    @property
    def measured(self) -> int:
        return self.statuses[Status.COMPLETE] + self.statuses[Status.INCOMPLETE]

    @property
    def unmeasured(self) -> int:
        """Scored queries whose denominator is not measured (unmeasured, or a stale summary):
        the means above leave them out, so a floor cannot vouch for them."""
        return self.statuses[Status.UNMEASURED] + self.statuses[Status.STALE]


@dataclass(frozen=True, slots=True)
class Gate:
    rows: dict[str, GateRow]
    mean: GateMean
    problems: list[Problem]


def coverage_gate(
    coverage: Coverage,
    rankings: Mapping[str, RankingLike],
    ks: Sequence[int],
    scored: Sequence[str],
    rel_threshold: int = 1,
    strict: bool = False,
) -> Gate:
    """Per query of `coverage`: the recall range at each k under the estimated |Rel|; their
    mean over the `scored` queries (those in the run's means) that are measured; and the
    problems: `incomplete_judgments` per scored incomplete query (an error when `strict`: the
    gate), `unmeasured_coverage` per scored query without an estimate and `coverage_mismatch`
    per scored query whose summary counts other judgments (errors when `strict` too: a gate never
    passes with less evidence than one that fails; each says what would measure it)."""
    empty: list[str] = []
    rows: dict[str, GateRow] = {}
    for qid, info in coverage.queries.items():
        judged = coverage.judged.get(qid, {})
        ranking = rankings.get(qid, empty)
        recall = {
            k: _recall_range(info, ranking, judged, k, rel_threshold, coverage.aliases) for k in ks
        }
        rows[qid] = GateRow(info, recall)
    problems = [
        problem
        for qid in scored
        if qid in rows
        for problem in _gate_problems(qid, rows[qid], coverage, ks[0], rel_threshold, strict)
    ]
    return Gate(rows, _gate_mean(rows, ks, scored), problems)


def _recall_range(
    info: QueryCoverage,
    ranking: RankingLike,
    judged: Mapping[str, int],
    k: int,
    rel_threshold: int,
    aliases: Mapping[str, str],
) -> RecallRange:
    if not info.measured or info.est_rel_low is None or info.est_rel_high is None:
        return RecallRange()
    hits = judged_hits(ranking, judged, k, rel_threshold, aliases)
    interval = recall_interval(hits, info.judged_relevant, info.est_rel_low, info.est_rel_high)
    if interval is None:
        return RecallRange()
    est = info.est_rel if info.est_rel is not None and math.isfinite(info.est_rel) else 0.0
    point = max(est, float(info.judged_relevant), float(hits))
    return RecallRange(interval[0], hits / point if point > 0 else None, interval[1])


def _average(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _gate_mean(rows: Mapping[str, GateRow], ks: Sequence[int], scored: Sequence[str]) -> GateMean:
    measured = [rows[q] for q in scored if q in rows and rows[q].coverage.measured]
    recall = {
        k: RecallRange(
            _average([r.recall[k].low for r in measured]),
            _average([r.recall[k].estimate for r in measured]),
            _average([r.recall[k].high for r in measured]),
        )
        for k in ks
    }
    statuses = {
        status: sum(1 for q in scored if q in rows and rows[q].coverage.status == status)
        for status in Status
    }
    return GateMean(
        recall,
        _average([r.coverage.completeness for r in measured]),
        _average([r.coverage.completeness_low for r in measured]),
        statuses,
    )


def _gate_problems(
    qid: str, row: GateRow, coverage: Coverage, k: int, rel_threshold: int, strict: bool
) -> list[Problem]:
    """The gate's word on one scored query: incomplete, unmeasured, or a stale summary; each an
    error when `strict`."""
    info = row.coverage
    if info.status == Status.INCOMPLETE:
        gate = f"{coverage.complete_at:g}" if coverage.complete_at is not None else "the threshold"
        message = (
            f"judged relevant set incomplete: completeness {_opt(info.completeness)} "
            f"(95% lower bound {_opt(info.completeness_low)} < {gate}), est. |Rel| "
            f"{_opt(info.est_rel, 1)} [{_opt(info.est_rel_low, 1)}, {_opt(info.est_rel_high, 1)}]"
            f" vs {info.judged_relevant} judged relevant; R@{k} against the judged set leaves "
            f"out the relevant documents the pool missed (it is an upper bound when its top {k} "
            f"is fully judged); under the estimated |Rel| it is {_opt(row.recall[k].low)}-"
            f"{_opt(row.recall[k].high)} (unjudged documents in the top {k} counted as "
            "non-relevant); "
            + ("--strict fails on it (judge more, or pool deeper)" if strict
               else "an error under --strict")
        )  # fmt: skip
        level = Level.ERROR if strict else Level.WARNING
        return [Problem(qid, level, "incomplete_judgments", message)]
    if info.status == Status.UNMEASURED:
        message = (
            f"{_unmeasured_why(info, coverage)}: how far R@{k} against the judged set overstates "
            "recall (relevant documents nobody judged lower it) is unknown; "
            + (f"--strict fails on it ({_what_measures(qid, info, coverage)})" if strict
               else f"an error under --strict ({_what_measures(qid, info, coverage)})")
        )  # fmt: skip
        level = Level.ERROR if strict else Level.WARNING
        return [Problem(qid, level, "unmeasured_coverage", message)]
    if info.status == Status.STALE:
        message = (
            f"the coverage summary ({coverage.source}) counts {info.summary_relevant} judged "
            f"relevant, these qrels {info.judged_relevant} at grade >= {rel_threshold} (another "
            "--rel-threshold, or judgments changed since): its estimate is not used, so the "
            f"denominator of R@{k} is unmeasured; "
            + ("--strict fails on it (export the golden.yaml again at this --rel-threshold, or "
               "eval against the store)" if strict else "an error under --strict")
        )  # fmt: skip
        level = Level.ERROR if strict else Level.WARNING
        return [Problem(qid, level, "coverage_mismatch", message)]
    return []


def _unmeasured_why(info: QueryCoverage, coverage: Coverage) -> str:
    if not info.in_summary:
        return f"not in the coverage summary ({coverage.source})"
    if coverage.policy == "adaptive":
        return "completeness unmeasured (no estimate yet)"
    if coverage.policy == "static" and not info.sampled:
        return "completeness unmeasured (a static pool without a sample outside it)"
    return "completeness unmeasured (no judged random sample yet)"


def _what_measures(qid: str, info: QueryCoverage, coverage: Coverage) -> str:
    """What would give the query an estimate, as the summary knows it."""
    if not info.in_summary:
        return "export the golden.yaml again from the store, or eval against the store"
    sample = (
        "pool with --sample N: `workbench pool` again on the store with `--sample N` adds N "
        "random passages per query from outside the pool to its queue; then judge them"
    )
    if info.to_estimate:
        how = (
            "the adaptive queue's random draws give it an estimate"
            if coverage.policy == "adaptive"
            else "its queue reaches its sampled passages"
        )
        return f"judge ≈ {info.to_estimate} more of {qid}: {how}"
    if coverage.policy == "static":
        return sample
    if coverage.policy == "adaptive":
        return f"nothing left in the frame of {qid} would give it one"
    return (
        f"judge more of {qid}: the adaptive queue draws its own random sample; a static pool "
        f"needs one ({sample})"
    )


def _opt(value: float | None, digits: int = 3) -> str:
    """A figure inside a problem's message: '-' for None."""
    return "-" if value is None else f"{value:.{digits}f}"
