"""The formulas of the measures a study gives an interval for (P@k, R@k, nDCG@k), written once
and evaluated two ways: on one query's counts by the registry's `compute` (`core.metrics`), and
on arrays of them over a study's draws by its `per_draw` (`core.study.intervals`), so the study
scores a run as eval does, through the registry. The conventions are `core.metrics`'."""

from __future__ import annotations

from typing import Any, Protocol


def precision(found: Any, k: int) -> Any:
    """Relevant in the top k over k (not over the ranking's length, as trec_eval)."""
    return found / k


def recall(found: Any, relevant: Any) -> Any:
    """Relevant in the top k over |Rel| (never min(|Rel|, k))."""
    return found / relevant


def ndcg(dcg: Any, ideal: Any) -> Any:
    """DCG of the top k over the ideal DCG at k."""
    return dcg / ideal


class DrawView(Protocol):
    """One query's figures for a run's top k per draw of a study (arrays over the draws): what a
    measure's `per_draw` reads, as its `compute` reads a `QueryView`. Relevant counts and grades
    are drawn where nobody judged."""

    @property
    def found(self) -> Any:
        """The relevant passages in the top k."""

    @property
    def relevant(self) -> Any:
        """The query's |Rel|."""

    @property
    def dcg(self) -> Any:
        """The top k's DCG."""

    @property
    def ideal(self) -> Any:
        """The ideal DCG at k of the query's relevant passages' grades."""


def precision_per_draw(view: DrawView, k: int) -> Any:
    return precision(view.found, k)


def recall_per_draw(view: DrawView, k: int) -> Any:
    return recall(view.found, view.relevant)


def ndcg_per_draw(view: DrawView, k: int) -> Any:
    """NaN in a draw whose ideal DCG is 0 (`metrics.ndcg_at`'s None)."""
    import numpy as np

    ideal = view.ideal
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ideal > 0, ndcg(view.dcg, ideal), np.nan)
