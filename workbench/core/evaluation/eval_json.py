"""The `workbench eval --json` edge's parts: each typed record of an `EvalReport` as plain
JSON data (`EvalReport.to_json` assembles them), in the contract's key order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.audit.audit import Problem, QueryAudit
    from workbench.core.audit.audit_coverage import GateMean, GateRow
    from workbench.core.audit.audit_stages import StageMean, StageRow

PLAIN_NAMES = ("ceiling", "pct_of_ceiling")
"""Measures the JSON also gives without a cutoff, meaning the first k's (the contract's names)."""


def _plain(value: object) -> object:
    """Tuples as lists, enums as their text: what JSON holds."""
    if type(value) in _JSON_SCALARS:
        return value  # the common case, first: thousands of rows go through here
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def record(row: Problem | QueryAudit | StageRow | StageMean | Any) -> dict[str, object]:
    """A record's fields in declaration order, the order the JSON keeps (any dataclass:
    eval_report's `MeanCovers` too, not named here since that module imports this one)."""
    return {name: _plain(getattr(row, name)) for name in _field_names(type(row))}


@cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _figures(values: Mapping[str, float | None], k: int) -> dict[str, object]:
    return {name: values[f"{name}@{k}"] for name in PLAIN_NAMES if f"{name}@{k}" in values}


def run_json(run: Any, ks: Sequence[int]) -> dict[str, object]:
    """One `eval_report.RunResult` (typed `Any`: that module imports this one)."""
    per_query: dict[str, object] = {}
    for qid, scores in run.per_query.items():
        row = {**scores.values, "rel": scores.rel, **_figures(scores.values, ks[0])}
        if run.gate is not None and qid in run.gate.rows:
            row.update(_gate_row_json(run.gate.rows[qid], ks))
        per_query[qid] = row
    mean: dict[str, object] = {
        **run.mean.values,
        "rel": run.mean.rel,
        **_figures(run.mean.values, ks[0]),
        "queries": run.mean.queries,
    }
    if run.gate is not None:
        mean.update(_gate_mean_json(run.gate.mean, ks))
    out: dict[str, object] = {
        "per_query": per_query,
        "mean": mean,
        "mean_covers": record(run.mean_covers),
        "audit": {qid: record(row) for qid, row in run.audit.items()},
    }
    if run.study is not None:
        out["study"] = {key: interval.to_json() for key, interval in run.study.intervals.items()}
    return out


def _gate_row_json(row: GateRow, ks: Sequence[int]) -> dict[str, object]:
    info = row.coverage
    out: dict[str, object] = {
        "coverage_status": str(info.status),
        "est_rel": info.est_rel,
        "est_rel_low": info.est_rel_low,
        "est_rel_high": info.est_rel_high,
        "completeness": info.completeness,
        "completeness_low": info.completeness_low,
    }
    for k in ks:
        recall = row.recall[k]
        out.update({f"R@{k}_low": recall.low, f"R@{k}_est": recall.estimate,
                    f"R@{k}_high": recall.high})  # fmt: skip
    return out


def _gate_mean_json(mean: GateMean, ks: Sequence[int]) -> dict[str, object]:
    out: dict[str, object] = {}
    for k in ks:
        recall = mean.recall[k]
        out.update({f"R@{k}_low": recall.low, f"R@{k}_est": recall.estimate,
                    f"R@{k}_high": recall.high})  # fmt: skip
    out["completeness"] = mean.completeness
    out["completeness_low"] = mean.completeness_low
    out.update({f"coverage_{status}": n for status, n in mean.statuses.items()})
    return out
