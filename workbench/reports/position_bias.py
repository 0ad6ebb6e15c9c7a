"""`workbench position-bias`'s report as a `Document`."""

from __future__ import annotations

from workbench.core.judges.position_bias import PositionBiasReport
from workbench.reports.document import Block, Column, Document, Interval, Paragraph, Table

PAIRS_SHOWN = 20


def _more(count: int) -> list[Block]:
    if count <= PAIRS_SHOWN:
        return []
    return [Paragraph(f"... and {count - PAIRS_SHOWN} more (--json lists all)")]


def measures_table(report: PositionBiasReport) -> Table:
    """Consistency, the first-position rate with its interval, and ties."""
    low, high = report.first_position_rate_ci or (None, None)
    measures = Table(
        columns=(Column("measure", align="left"), Column("value"), Column("", align="left")),
        rows=[
            [
                "position consistency",
                report.consistency,
                f"{report.consistent} of {report.both_orders} pairs keep their verdict "
                "when swapped",
            ],
            [
                "inconsistent pairs",
                report.inconsistent,
                f"{report.favouring_first} went to whichever was shown first, "
                f"{report.favouring_second} to whichever was second",
            ],
            [
                "first-position rate",
                Interval(report.first_position_rate, low, high),
                f"of {report.decisive} decisive verdicts (unbiased: 0.5; 95% Wilson interval)",
            ],
            ["tie rate", report.tie_rate, f"of {report.comparisons} comparisons"],
        ],
    )
    return measures


def position_bias_document(report: PositionBiasReport, source: str) -> Document:
    """Consistency, first-position rate and ties, then the pairs that flip and those judged in
    one order only; `source` names the comparisons file."""
    blocks: list[Block] = [
        Paragraph(
            f"{report.comparisons} comparisons, {len(report.per_pair)} pairs, "
            f"{report.both_orders} judged in both orders."
        ),
        measures_table(report),
    ]
    flipped = [p for p in report.per_pair if p.consistent is False]
    if flipped:
        blocks.append(
            Table(
                columns=(
                    Column("query", align="left"),
                    Column("a", align="left"),
                    Column("b", align="left"),
                    Column("score of a"),
                ),
                rows=[[p.query_id, p.a, p.b, p.a_score] for p in flipped[:PAIRS_SHOWN]],
                title="Pairs whose verdict changes with the order (swap-averaged score of a)",
            )
        )
        blocks += _more(len(flipped))
    one = report.one_order_only
    if one:
        blocks.append(
            Table(
                columns=(
                    Column("query", align="left"),
                    Column("first", align="left"),
                    Column("second", align="left"),
                    Column("line"),
                ),
                rows=[[o.query_id, o.first, o.second, o.line] for o in one[:PAIRS_SHOWN]],
                title=f"Judged in one order only: {len(one)} pairs (left out of consistency)",
            )
        )
        blocks += _more(len(one))
    return Document(f"Position bias: {source}", blocks)
