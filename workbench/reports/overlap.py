"""The overlap marked in a pool (`workbench assign`, `pool --overlap`), in one sentence."""

from __future__ import annotations

from workbench.core.agreement.assign import OverlapSummary


def overlap_sentence(summary: OverlapSummary) -> str:
    """One sentence: how many items are marked for overlap, how many now."""
    if summary.adaptive:
        from workbench.core.adaptive.overlap import overlap_every

        if not summary.share:
            return "Overlap: none (the app serves each passage to one annotator)."
        return (
            f"Overlap: one passage in {overlap_every(summary.share)} that the app serves is one "
            "another annotator judged and this one has not (blind), for agreement (`workbench "
            f"agree`); the study counts each passage once (share {summary.share:g})."
        )
    counts = list(summary.per_query.values())
    low, high = (min(counts), max(counts)) if counts else (0, 0)
    spread = f" ({low} per query)" if low == high else f" ({low}-{high} per query)"
    return (
        f"Overlap: {summary.overlap_items} of {summary.pool_items} items are judged by two"
        f" or more annotators{spread}; {summary.added} marked now"
        f" (share {summary.share:g}, seed {summary.seed})."
    )
