"""A coverage estimate set against an oracle's qrels taken as the truth (`workbench simulate`,
bench/coverage_sim.py), in one line."""

from __future__ import annotations

from workbench.core.audit.truth import TruthSummary


def against_oracle(summary: TruthSummary) -> str:
    """The estimate against the oracle's qrels, taken as the truth (bench/coverage_sim.py)."""

    def f(value: float | None, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    # with no interval yet, the error is that of taking every query as complete (core.truth)
    naive = ""
    if summary.cover is None:
        naive = "; no query has an estimate yet: each counts as complete"
    return (
        f"against the oracle ({summary.queries} queries with a relevant document): found "
        f"{f(summary.found)} of the relevant; the 95% interval held |Rel| for {f(summary.cover)} "
        f"of queries, median width {f(summary.width, 2)} x |Rel|; completeness error "
        f"{f(summary.mae)} (signed {f(summary.signed)}{naive}); certified {f(summary.certified)}"
    )
