"""Judging toward the study's target: the adaptive policy's picks, spent on the queries whose
judgments narrow the study interval most (`target.plan`'s allocation), until the target is
reached, the budget is spent or no query has a pick left. `workbench simulate --target` and
the benchmark walk this way."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from workbench.core.adaptive.policy import AdaptiveSession
from workbench.core.adaptive.walk import Step
from workbench.core.model import PoolEntry
from workbench.core.study.draws import STUDY_DRAWS
from workbench.core.study.target import Plan, Target, study_plan

CHECK_SHARE = 0.05
"""Judgments between two looks at the plan: this share of those made so far (at least one per
query), so the plan is recomputed about sixty times over a walk, whatever its length."""


def walk_to_target(
    session: AdaptiveSession,
    answer: Callable[[str, str], int],
    grades: dict[str, dict[str, int]],
    pool: Sequence[PoolEntry],
    target: Target,
    rel_threshold: int = 1,
    per_query: int | None = None,
    budget: int | None = None,
    count: int = STUDY_DRAWS,
) -> tuple[list[Step], Plan]:
    """Judge with `answer` until the plan says the target is reached; `grades` (query -> doc ->
    grade, the store's so far) is kept up to date. Returns the steps and the last plan. Each
    look at the plan is on a relevance model fitted to every grade so far, as `coverage`
    rebuilds it from the store, so both read the same interval."""
    steps: list[Step] = []
    counts = {q: session.judged(q) for q in session.queries}
    while True:
        session.refit()
        plan = study_plan(session, grades, pool, target, rel_threshold, count)
        if plan.reached:
            return steps, plan
        made = sum(counts.values())
        chunk = max(len(session.queries), int(made * CHECK_SHARE))
        if budget is not None:
            chunk = min(chunk, budget - len(steps))
        taken = 0
        for query_id, share in _order(plan, session) + _everyone(session):
            if share == 0 and taken:
                break  # the allocation took its judgments: look at the plan again
            for _ in range(max(1, round(chunk * share))):
                if taken >= chunk or (per_query is not None and counts[query_id] >= per_query):
                    break
                pick = session.next_pick(query_id)
                if pick is None:
                    break
                grade = answer(query_id, pick.doc_id)
                session.record(query_id, pick.doc_id, grade >= rel_threshold)
                grades.setdefault(query_id, {})[pick.doc_id] = grade
                counts[query_id] += 1
                steps.append(Step(pick, grade))
                taken += 1
        if taken == 0:
            return steps, plan


def walk_in_app_order(
    session: AdaptiveSession,
    answer: Callable[[str, str], int],
    pool: Sequence[PoolEntry],
    target: Target,
    rel_threshold: int = 1,
    budget: int | None = None,
) -> list[Step]:
    """Judge with `answer` in the order the app serves (`policy_chooser` with the study's
    ranking: every query measured first, then where the study narrows most), one grade at a
    time, until nothing is left to serve or `budget` judgments are made."""
    from workbench.core.adaptive.chooser import policy_chooser
    from workbench.core.study.target import StudyRanking

    choose = policy_chooser(session, list(session.queries), StudyRanking(session, pool, target))
    steps: list[Step] = []
    current: str | None = None
    while budget is None or len(steps) < budget:
        found = choose(current, frozenset(), False)
        if found is None:
            break
        current = found[0]
        pick = session.next_pick(current)  # the pick just chosen, with its draw's record
        assert pick is not None and pick.doc_id == found[1]
        grade = answer(current, pick.doc_id)
        session.record(current, pick.doc_id, grade >= rel_threshold)
        steps.append(Step(pick, grade))
    return steps


def _order(plan: Plan, session: AdaptiveSession) -> list[tuple[str, float]]:
    """Where the next judgments go, with each query's share: queries without an estimate yet
    first (an estimate needs their draws), else the plan's allocation toward the target, else
    (out of reach) every query alike."""
    if plan.unmeasured:
        return [(q, 1 / len(plan.unmeasured)) for q in plan.unmeasured]
    if plan.allocation:
        total = sum(plan.allocation.values())
        return [(q, n / total) for q, n in plan.allocation.items()]
    queries = list(session.queries)
    return [(q, 1 / len(queries)) for q in queries]


def _everyone(session: AdaptiveSession) -> list[tuple[str, float]]:
    """Every query once (share 0), tried when the allocation's queries had no pick left."""
    return [(q, 0.0) for q in session.queries]


def judged_grades(
    session: AdaptiveSession, grades: Mapping[str, Mapping[str, int]]
) -> dict[str, dict[str, int]]:
    """A mutable copy of the grades that count, for `walk_to_target`."""
    return {q: dict(grades.get(q, {})) for q in session.queries}
