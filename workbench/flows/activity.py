"""Who judged what in a store, and how fast (`workbench.core.agreement.activity` over its rows)."""

from __future__ import annotations

from workbench.core.agreement.activity import AnnotatorActivity, annotator_activity
from workbench.store import JudgmentStore


def store_activity(store: JudgmentStore, rel_threshold: int = 1) -> tuple[AnnotatorActivity, ...]:
    """Each person's grades, queries, time per grade and agreement in `store`."""
    return annotator_activity(
        store.judgments(), store.current_judgments(), store.grade_scale(), rel_threshold
    )
