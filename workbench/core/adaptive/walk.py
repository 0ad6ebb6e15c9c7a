"""Judging a study by the adaptive policy with an answer function (an oracle from qrels, or a
model): the loop `workbench simulate` and the benchmark share with the app's order of work."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.core.adaptive.policy import AdaptiveSession, Pick


@dataclass(frozen=True, slots=True)
class Step:
    """One judgment the walk made: the pick and the grade it got."""

    pick: Pick
    grade: int


def walk(
    session: AdaptiveSession,
    answer: Callable[[str, str], int],
    per_query: int,
    rel_threshold: int = 1,
    query_ids: Sequence[str] | None = None,
    budget: int | None = None,
) -> list[Step]:
    """Judge up to `per_query` passages of each query, one per query in turn (so the shared
    model learns from every query as it goes), until each query is done or `budget` judgments
    are made in all; then ask every query again with the models refitted
    (`AdaptiveSession.recheck`), so that none stops short of certification on models that later
    grades moved."""
    queries = list(query_ids if query_ids is not None else session.queries)
    counts = dict.fromkeys(queries, 0)
    steps: list[Step] = []
    active = list(queries)
    while active:
        for query_id in list(active):
            if budget is not None and len(steps) >= budget:
                return steps
            pick = session.next_pick(query_id) if counts[query_id] < per_query else None
            if pick is None:
                active.remove(query_id)
                continue
            grade = answer(query_id, pick.doc_id)
            session.record(query_id, pick.doc_id, grade >= rel_threshold)
            counts[query_id] += 1
            steps.append(Step(pick, grade))
        if not active:
            session.recheck()
            active = [
                q for q in queries if counts[q] < per_query and session.next_pick(q) is not None
            ]
    return steps
