"""Top-k selection that obeys the project's ordering rule even at ties on the cut."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.core.model import order_pairs
from workbench.core.progress import LOADING, ProgressCallback

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LOADING", "ProgressCallback", "check_unique_ids", "top_scored"]
"""`ProgressCallback` and `LOADING` live in `core.progress`; retrieval's modules take them here."""


def top_scored(
    doc_ids: Sequence[str], scores: np.ndarray, depth: int, positive_only: bool = False
) -> dict[str, float]:
    """The best `depth` docs as {doc_id: score}, in `order_pairs` order.

    A partial sort finds the depth-th best score; every doc tied with it is kept, ordered by
    `order_pairs` (score desc, doc_id desc), and only then cut, so argsort's arbitrary order
    never decides which tied doc makes it in."""
    import numpy as np

    if depth <= 0 or len(doc_ids) == 0:
        return {}
    candidates = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
    candidates = candidates[~np.isnan(scores[candidates])]
    if len(candidates) > depth:
        cut = np.partition(scores[candidates], len(candidates) - depth)[len(candidates) - depth]
        candidates = candidates[scores[candidates] >= cut]
    pairs = [(doc_ids[i], float(scores[i])) for i in candidates.tolist()]
    by_id = dict(pairs)
    return {doc_id: by_id[doc_id] for doc_id in order_pairs(pairs)[:depth]}


def check_unique_ids(doc_ids: Sequence[str]) -> None:
    """Retrievers index by position: a repeated doc id would merge two passages' scores."""
    if len(set(doc_ids)) != len(doc_ids):
        repeated = sorted(doc_id for doc_id, count in Counter(doc_ids).items() if count > 1)
        raise ValueError(f"duplicate doc ids in the corpus: {', '.join(repeated[:10])}")
