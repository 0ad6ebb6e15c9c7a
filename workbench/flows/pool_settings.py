"""What `workbench pool` stores with the study once the pool is built: the relevance threshold
every later command reads, the adaptive study's target, the share marked for overlap; one store
opening for all three."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation
    from workbench.flows.pool import PoolSummary


@dataclasses.dataclass(frozen=True)
class OverlapAsk:
    """`--overlap SHARE --judges N --seed S`, checked (`flows.overlap.check_overlap`)."""

    share: float
    seed: int = 0
    judges: int = 2


def settle_study(
    db: StoreLocation,
    summary: PoolSummary,
    rel_threshold: int,
    target: str | None = None,
    overlap: OverlapAsk | None = None,
) -> tuple[PoolSummary, str]:
    """Store the study's settings (`rel_threshold`: the lowest grade counted relevant); the
    summary with the overlap marked, and the grades the threshold counts, in words."""
    from workbench.core.display import relevant_wording
    from workbench.flows.adaptive import TARGET_KEY
    from workbench.flows.overlap import mark_overlap
    from workbench.flows.study_context import REL_THRESHOLD_KEY
    from workbench.store import open_store

    with open_store(db) as store:
        store.set_meta(REL_THRESHOLD_KEY, str(rel_threshold))
        relevant = relevant_wording(store.grade_scale(), rel_threshold)
        if target is not None:
            store.set_meta(TARGET_KEY, target)
        if overlap is not None:
            marked = mark_overlap(store, overlap.share, overlap.seed, overlap.judges)
            summary = dataclasses.replace(summary, overlap=marked)
    return summary, relevant
