"""`workbench position-bias`'s use case: a pairwise judge's comparisons, each judged in both
orders, read from their file and measured for position consistency
(`workbench.core.judges.position_bias`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.judges.position_bias import PositionBiasReport


def position_bias_of_file(path: str) -> PositionBiasReport:
    """The report of the comparisons in `path`; InputError naming file and line on a bad one."""
    from workbench.core.judges.position_bias import position_bias_report
    from workbench.formats.comparisons import parse_comparisons
    from workbench.formats.textio import read_text

    return position_bias_report(parse_comparisons(read_text(path), path))
