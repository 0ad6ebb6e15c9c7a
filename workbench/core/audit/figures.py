"""One wording per figure a user reads, so that no two screens give one concept two figures:
`coverage` (text, Markdown, HTML), `report`, the app's overview, `eval` and `compare` all word
the estimated |Rel| and its sum, the mean completeness, which queries a mean covers, the
ceiling and the count of problems (errors, warnings, errors under --strict) from here.

A figure over a subset of the queries names its subset: "est |Rel| 24" beside "relevant 77"
read as the estimate of all 12 queries while it summed the 2 measured ones."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workbench.core.audit.audit import Problem
from workbench.core.audit.audit_coverage import GATE_CODES
from workbench.core.coverage.results import CoverageSummary
from workbench.core.measures.metrics import CEILING_WORDS
from workbench.core.model import Level


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def over_measured(summary: CoverageSummary) -> str:
    """'' when every query has an estimate, else ' over the N measured queries' (of all)."""
    if summary.measured == summary.queries:
        return ""
    plural = "y" if summary.measured == 1 else "ies"
    return f" over the {summary.measured} measured quer{plural}"


def est_rel_words(summary: CoverageSummary) -> str:
    """The estimated |Rel| summed over the queries that have an estimate, naming them (with the
    relevant found there) when they are not all: 'est |Rel| 24 over the 2 measured queries
    (relevant found there: 20)'."""
    if summary.measured == 0:
        return "est |Rel| - (no query has an estimate yet)"
    figure = f"est |Rel| {_number(summary.est_rel, 0)}"
    subset = over_measured(summary)
    if not subset:
        return figure
    return f"{figure}{subset} (relevant found there: {summary.relevant_measured})"


def completeness_words(summary: CoverageSummary, digits: int = 2) -> str:
    """The mean completeness and the mean of its lower bounds, over the measured queries,
    naming them when they are not all."""
    if summary.measured == 0:
        return "mean completeness -"
    return (
        f"mean completeness {_number(summary.mean_completeness, digits)} (mean lower bound "
        f"{_number(summary.mean_completeness_low, digits)}){over_measured(summary)}"
    )


def mean_label(queries: int) -> str:
    """The mean line's first cell: the queries every measure's mean covers."""
    return f"mean ({queries} q)"


def subset_mark(measured: int, queries: int) -> str:
    """After a mean over fewer queries than the mean line's: ' (N q)'; else ''."""
    return "" if measured == queries else f" ({measured} q)"


def mean_words(queries: int, measured: int | None = None) -> str:
    """What the mean line covers, for a legend: the measures' means every scored query; the
    coverage columns' (recall under the estimated |Rel|, completeness) the measured ones."""
    plural = "y" if queries == 1 else "ies"
    words = (
        f"The mean line ({mean_label(queries)}) averages each measure over the {queries} "
        f"scored quer{plural}"
    )
    if measured is None:
        return words + "."
    if measured == queries:
        return words + ", all of them measured."
    return (
        f"{words}; R@k (est. |Rel|) and compl. there average the {measured} measured ones "
        f"({measured} q): the others have no estimate of |Rel|."
    )


def ceiling_help(estimated: bool) -> str:
    """The ceiling's legend, naming which |Rel| it divides by: eval's the judged relevant
    count, coverage's the estimate (they differ while judging is incomplete)."""
    if estimated:
        return f"{CEILING_WORDS}, with the estimated |Rel| (eval's ceil@k uses the judged |Rel|)"
    return f"{CEILING_WORDS}, with the judged |Rel| (coverage's ceiling uses the estimated |Rel|)"


@dataclass(frozen=True, slots=True)
class ProblemCount:
    """The audit's problems as counted everywhere: errors, warnings, and how many of all would
    be errors under --strict (the gate's codes)."""

    errors: int
    warnings: int
    strict_errors: int

    @property
    def words(self) -> str:
        """'0 error(s), 24 warning(s) (12 of them errors under --strict)'."""
        text = f"{self.errors} error(s), {self.warnings} warning(s)"
        extra = self.strict_errors - self.errors
        if extra > 0:
            text += f" ({extra} of them errors under --strict)"
        return text


def problem_count(problems: Iterable[Problem]) -> ProblemCount:
    """The count of `problems` (one classification: eval's and compare's)."""
    errors = warnings = strict = 0
    for problem in problems:
        error = problem.level == Level.ERROR
        errors += error
        warnings += not error
        strict += error or problem.code in GATE_CODES
    return ProblemCount(errors, warnings, strict)
