"""The compact, rounded coverage summary that golden.yaml records (`summary_of` a coverage
report), and the rounding rule its figures follow."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.coverage.results import CoverageReport


SUMMARY_KEYS = (
    "est_rel",
    "est_rel_low",
    "est_rel_high",
    "completeness",
    "completeness_low",
    "status",
)
"""A query's figures in the summary, after its pool, judged and relevant counts (then its
sampled passages and its judgments to an estimate, for the gate's word on an unmeasured one)."""
SUMMARY_DIGITS = {
    "est_rel": (1, "nearest"),
    "est_rel_low": (1, "down"),
    "est_rel_high": (1, "up"),
    "completeness": (3, "nearest"),
    "completeness_low": (3, "down"),
}
"""How the summary's figures, meant for people (golden.yaml), are rounded: |Rel| estimates to
1 decimal, completeness to 3; each bound outwards (low down, high up), so the rounded interval
holds the computed one, and a status read again from completeness_low (`eval --complete-at`)
can never turn complete on rounding alone."""
SUMMARY_MEAN_DIGITS = 3
"""Shares and means in the summary's `summary` block (mean completeness, judged@k, ...)."""
METHOD = "stratified sample outside the pool; empirical-Bayes relevance-vs-rank model"


def round_figure(value: float | None, digits: int, direction: str = "nearest") -> float | None:
    """`value` to `digits` decimals: to the nearest, or down/up (a hair of float noise, 1e-9,
    is forgiven so 0.29 stays 0.29). None and whole numbers (int) stay as they are."""
    if value is None or isinstance(value, int) or not math.isfinite(value):
        return value
    if direction == "nearest":
        return round(value, digits)
    scale = 10**digits
    if direction == "down":
        return round(math.floor(value * scale + 1e-9) / scale, digits)
    return round(math.ceil(value * scale - 1e-9) / scale, digits)


def _rounded_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key == "systems":
            out[key] = {
                name: {
                    k: round_figure(v, SUMMARY_MEAN_DIGITS) if isinstance(v, float) else v
                    for k, v in figures.items()
                }
                for name, figures in value.items()
            }
        elif key == "est_rel":
            out[key] = round_figure(value, 1)
        elif isinstance(value, float):
            out[key] = round_figure(value, SUMMARY_MEAN_DIGITS)
        else:
            out[key] = value
    return out


def summary_of(coverage: CoverageReport) -> dict[str, Any]:
    """`summary_for_store` of a report already computed (the fit is the costly part)."""
    report = coverage.to_json()
    queries: dict[str, dict[str, Any]] = {}
    for qid, row in report["queries"].items():
        slot = {key: row[key] for key in ("pool", "judged", "relevant", *SUMMARY_KEYS)}
        slot["sampled"], slot["to_estimate"] = row["sampled"], row["to_estimate"]
        for key, (digits, direction) in SUMMARY_DIGITS.items():
            slot[key] = round_figure(slot[key], digits, direction)
        queries[qid] = slot
    return {
        "queries": queries,
        "summary": _rounded_summary(report["summary"]),
        "thresholds": report["thresholds"],
        "method": METHOD,
        "policy": coverage.policy,
    }
