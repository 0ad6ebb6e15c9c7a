"""The study's ranking of the queries in a few words, for the judging screen's status line: the
core keeps the plan's numbers (`core.study.target.StudyRanking`), the words are said here."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.study.target import StudyRanking


def ranking_words(ranking: StudyRanking, query_id: str) -> str | None:
    """The study in a few words for the status line (None before its first plan): the widest
    run's interval and what is left to the target, and why this query is served when it is the
    plan's first."""
    plan = ranking.latest
    if plan is None:
        return None
    key = plan.target.key
    if plan.reached:
        return f"study {key}: target {plan.target.width:g} reached"
    if plan.unmeasured:
        if plan.to_first is not None:  # each judgment since, one nearer (measured first)
            left = max(plan.to_first - ranking.behind(), 1)
            return f"study {key}: first figure in ≈ {left:,}"
        count = len(plan.unmeasured)
        return f"study {key}: {count} quer{'y' if count == 1 else 'ies'} without an estimate"
    widest = max((i.width or 0.0 for i in plan.runs.values()), default=0.0)
    left = "out of the frames' reach" if plan.to_target is None else f"≈ {plan.to_target:,} to go"
    why = ""
    if plan.allocation and next(iter(plan.allocation)) == query_id:
        why = "; here: widest share"
    return f"study {key} width {widest:.3f} (target {plan.target.width:g}), {left}{why}"
