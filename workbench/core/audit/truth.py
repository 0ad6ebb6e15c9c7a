"""How a coverage estimate compares with a truth judged far more deeply (an oracle's qrels):
the figures `workbench simulate` prints and `bench/coverage_sim.py` tabulates, computed once."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.model import Qrels

if TYPE_CHECKING:
    from workbench.core.adaptive.policy import QueryState
    from workbench.core.coverage.results import CoverageReport


@dataclass(frozen=True, slots=True)
class TruthRow:
    """One query: its true |Rel|, the relevant found, the estimate's interval and completeness
    (None: unmeasured), whether it was certified, and the first-half yield."""

    true_rel: int
    found: int
    low: float | None
    high: float | None
    completeness: float | None
    certified: bool
    first_half: float | None = None

    @property
    def measured(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def inside(self) -> bool:
        return self.measured and self.low <= self.true_rel <= self.high  # type: ignore[operator]

    @property
    def width(self) -> float | None:
        if not self.measured:
            return None
        return (self.high - self.low) / self.true_rel  # type: ignore[operator]

    @property
    def error(self) -> float:
        """Estimated minus true completeness (an unmeasured query counts as estimated 1)."""
        estimate = self.completeness if self.completeness is not None else 1.0
        return estimate - self.found / self.true_rel


def first_half_share(relevant_in_order: Sequence[bool]) -> float | None:
    """Share of the relevant found by a sequence of judgments that its first half found."""
    found = sum(relevant_in_order)
    if not found:
        return None
    return sum(relevant_in_order[: len(relevant_in_order) // 2]) / found


def _mean(values: Any) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


@dataclass(frozen=True, slots=True)
class TruthSummary:
    """Over queries (with |Rel| >= 1): found = sum found / sum |Rel|; cover = share of measured
    queries whose |Rel| is inside the interval; width = median width / |Rel|; mae and signed:
    completeness errors; certified = share certified, certified_ok = of them truly >= 0.8."""

    queries: int
    found: float | None
    cover: float | None
    width: float | None
    mae: float | None
    signed: float | None
    certified: float | None
    certified_ok: float | None
    first_half: float | None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def summarize_rows(rows: Sequence[TruthRow], target: float = 0.8) -> TruthSummary:
    measured = [r for r in rows if r.measured]
    certified = [r for r in rows if r.certified]
    total = sum(r.true_rel for r in rows)
    widths = [r.width for r in measured if r.width is not None]
    return TruthSummary(
        queries=len(rows),
        found=sum(r.found for r in rows) / total if total else None,
        cover=_mean(r.inside for r in measured),
        width=statistics.median(widths) if widths else None,
        mae=_mean(abs(r.error) for r in rows),
        signed=_mean(r.error for r in rows),
        certified=len(certified) / len(rows) if rows else None,
        certified_ok=_mean(r.found / r.true_rel >= target for r in certified),
        first_half=_mean(r.first_half for r in rows),
    )


def relevant_in(truth: Qrels, query_id: str, rel_threshold: int = 1) -> set[str]:
    """The query's relevant documents in the truth."""
    return {d for d, g in truth.get(query_id, {}).items() if g >= rel_threshold}


def rows_from_report(report: CoverageReport, truth: Qrels) -> dict[str, TruthRow]:
    """A coverage report's queries (those with a relevant document in the truth) as rows."""
    return {
        qid: TruthRow(len(rel), row.relevant, row.est_rel_low, row.est_rel_high,
                      row.completeness, row.status == "complete")
        for qid, row in report.queries.items()
        if (rel := relevant_in(truth, qid))
    }  # fmt: skip


def rows_from_states(states: Mapping[str, QueryState], truth: Qrels) -> dict[str, TruthRow]:
    """The adaptive queue's query states (those with a relevant document in the truth) as
    rows."""
    return {
        qid: TruthRow(len(rel), state.total.found, state.total.low, state.total.high,
                      state.total.completeness, state.status == "complete")
        for qid, state in states.items()
        if (rel := relevant_in(truth, qid))
    }  # fmt: skip
