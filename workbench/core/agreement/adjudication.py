"""The adjudication worklist: every pair whose human annotators' current grades differ. Pure.

An adjudicator's grade is stored as its own row (role 'adjudicator') and decides the pair in
exports (workbench.core.judgments.resolve). A pair already adjudicated leaves the list, and comes
back only
when a human grade changed after the adjudication (then the adjudicator saw other grades)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from workbench.core.model import Judgment, Role

Key = tuple[str, str]
"""(query_id, doc_id)"""

HUMAN = Role.HUMAN
ADJUDICATOR = Role.ADJUDICATOR


@dataclass(frozen=True, slots=True)
class Opinion:
    """One human annotator's current grade of a pair, with its note ("" when the current row
    has none: a note emptied in the app is removed)."""

    annotator: str
    grade: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class Dispute:
    query_id: str
    doc_id: str
    opinions: tuple[Opinion, ...]
    """Sorted by annotator name."""
    adjudicated: int | None = None
    """The standing adjudicated grade (set only when `include_settled` kept a settled pair)."""

    @property
    def key(self) -> Key:
        return (self.query_id, self.doc_id)

    @property
    def spread(self) -> int:
        grades = [o.grade for o in self.opinions]
        return max(grades) - min(grades)


def disputes(
    history: Iterable[Judgment],
    order: Mapping[Key, int] | None = None,
    include_settled: bool = False,
) -> list[Dispute]:
    """Pairs whose human annotators' current grades differ, from the full row history (oldest
    first, as Store.judgments returns it). Settled pairs (adjudicated, and no human grade
    changed since) are left out unless `include_settled`. Sorted by `order` (queue position;
    pairs missing from it last), then by query and doc id."""
    humans: dict[Key, dict[str, int]] = {}
    notes: dict[Key, dict[str, str]] = {}
    seen_by_adjudicator: dict[Key, dict[str, int] | None] = {}
    adjudicated: dict[Key, int | None] = {}
    for row in history:
        key = (row.query_id, row.doc_id)
        if row.role == HUMAN:
            grades = humans.setdefault(key, {})
            if row.grade is None:
                grades.pop(row.annotator, None)
                notes.get(key, {}).pop(row.annotator, None)
            else:  # the current row's note, as exports take it: an emptied note is removed
                grades[row.annotator] = row.grade
                if row.note:
                    notes.setdefault(key, {})[row.annotator] = row.note
                else:
                    notes.get(key, {}).pop(row.annotator, None)
        elif row.role == ADJUDICATOR:
            adjudicated[key] = row.grade
            seen_by_adjudicator[key] = None if row.grade is None else dict(humans.get(key, {}))
    out: list[Dispute] = []
    for key, grades in humans.items():
        if len(set(grades.values())) < 2:
            continue
        settled = seen_by_adjudicator.get(key) == grades
        if settled and not include_settled:
            continue
        opinions = tuple(
            Opinion(name, grades[name], notes.get(key, {}).get(name, "")) for name in sorted(grades)
        )
        out.append(Dispute(key[0], key[1], opinions, adjudicated.get(key) if settled else None))
    rank = order or {}
    last = len(rank)
    out.sort(key=lambda d: (rank.get(d.key, last), d.query_id, d.doc_id))
    return out
