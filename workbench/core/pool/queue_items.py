"""What a judging queue is made of and reports: an item's key, a policy's chooser of the next
item, and the counts the app's status line shows (`QueueCounts`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Key = tuple[str, str]
"""(query_id, doc_id): one judging item."""
Chooser = Callable[[str | None, frozenset[str], bool], Key | None]
"""A policy's next item given the current query, skipping the queries named (workbench.core.
adaptive.chooser.policy_chooser)."""


@dataclass(frozen=True, slots=True)
class QueueCounts:
    judged: int
    """Items that need nothing more: graded by this annotator, or by enough others."""
    pooled: int
    relevant: int
    """Relevant among this annotator's own grades (others' grades are never shown)."""
    yours: int = -1
    """Items this annotator graded; -1 when not given (then equal to `judged`)."""

    def __post_init__(self) -> None:
        if self.yours < 0:
            object.__setattr__(self, "yours", self.judged)
