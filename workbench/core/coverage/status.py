"""When a query's |Rel| is *measured* and when its judged relevant set is *complete*: the two
rules every coverage figure applies (the adaptive estimate, the study's draws, the queue's
forecasts, the static coverage report, a golden set's summary read back), written once.

- Measured: its candidates' missing count has an estimate (every candidate judged, or a Des
  Raj estimate from two judged draws at least, whose variance is then finite: one draw has
  none) and its rest has been seen (a reserve passage of its own judged, or no rest at all:
  with one reserve passage judged in a 12-query npl study the shared model's guess put every
  query's R@10 interval below the truth).
- Complete: the lower end of its completeness interval reaches `complete_at`, so the figure
  users act on is a one-sided bound."""

from __future__ import annotations

import math

from workbench.core.model import Status

__all__ = ["candidates_measured", "coverage_status", "is_complete", "is_measured", "rest_seen"]


def candidates_measured(exact: bool, draws: int, variance: float = 0.0) -> bool:
    """Whether the candidates' missing count has an estimate: all judged (`exact`), or two
    judged draws at least with a finite variance (a forecast that makes no estimate leaves
    `variance` out)."""
    return exact or (draws >= 2 and math.isfinite(variance))


def rest_seen(has_rest: bool, reserve_seen: int) -> bool:
    """Whether the query's rest counts as seen: a reserve passage of its own judged, or no rest."""
    return not has_rest or reserve_seen > 0


def is_measured(exact: bool, draws: int, seen: bool, variance: float = 0.0) -> bool:
    """Whether the query's |Rel| has an estimate: its candidates' (`candidates_measured`) and
    its rest `seen` (`rest_seen`)."""
    return candidates_measured(exact, draws, variance) and seen


def is_complete(completeness_low: float | None, complete_at: float) -> bool:
    """Whether the completeness interval's lower end reaches `complete_at` (None: no estimate)."""
    return completeness_low is not None and completeness_low >= complete_at


def coverage_status(
    completeness_low: float | None, complete_at: float, measured: bool = True
) -> Status:
    """A query's status: unmeasured without an estimate, else complete (`is_complete`) or
    incomplete (a capped query too)."""
    if not measured:
        return Status.UNMEASURED
    return Status.COMPLETE if is_complete(completeness_low, complete_at) else Status.INCOMPLETE
