"""Who judged what, and how fast (pure): per person, their current grades, the queries they
touched, the median and 90th percentile of the time per grade the app recorded (`elapsed_ms`,
shown to graded), and their agreement with the other annotators' resolved grade and with the
adjudicated grade. What a team lead asks before reading any kappa table ("alice 35 grades,
median 4.1 s, kappa 0.71 against the others").

Conventions: a person is an annotator whose role is in `HUMAN_ROLES`; a time per grade counts
every grade given (a regrade too, an undo never), and 0 ms (labels imported without a time) is
no time; agreement uses `workbench.core.agreement.kappa.compare` with `MIN_SHARED_ITEMS`, so a
figure on
too few shared items is None with its reason, as in `workbench agree`."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workbench.core.agreement.agreement import MIN_SHARED_ITEMS
from workbench.core.agreement.kappa import PairAgreement, compare
from workbench.core.judgments.resolve import consensus_grades, grades_by_annotator, roles_of
from workbench.core.model import HUMAN_ROLES, Judgment, Role


@dataclass(frozen=True, slots=True)
class AnnotatorActivity:
    annotator: str
    role: str
    grades: int
    """Current grades (an undone item not counted)."""
    queries: int
    """Queries with at least one current grade."""
    timed: int
    """Grades given with a recorded time (regrades included): what the percentiles are of."""
    median_s: float | None
    p90_s: float | None
    vs_others: PairAgreement | None
    """Against the resolved grade of the other people (None: no other person graded)."""
    vs_adjudicated: PairAgreement | None
    """Against the adjudicators' grade (None: nothing adjudicated, or an adjudicator)."""

    def to_json(self) -> dict:
        return {
            "role": self.role,
            "grades": self.grades,
            "queries": self.queries,
            "timed_grades": self.timed,
            "median_s": self.median_s,
            "p90_s": self.p90_s,
            "vs_others": _figures(self.vs_others),
            "vs_adjudicated": _figures(self.vs_adjudicated),
        }


def _figures(figures: PairAgreement | None) -> dict | None:
    """The kappas of one comparison, without its confusion matrix (`workbench agree` has it)."""
    if figures is None:
        return None
    kappas = {name: kappa.kappa for name, kappa in figures.figures().items()}
    return {"n": figures.n, **kappas, "below_bar": list(figures.below_bar)}


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile (None of nothing): a value someone really took."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def annotator_activity(
    history: Iterable[Judgment],
    current: Iterable[Judgment],
    grade_scale: Iterable[int],
    rel_threshold: int = 1,
) -> tuple[AnnotatorActivity, ...]:
    """Each person's activity, by name. `history`: every judgment row (times); `current`: the
    current ones (grades, agreement)."""
    current = list(current)
    scale = sorted(set(grade_scale))
    grades = grades_by_annotator(current)
    roles = roles_of(current)
    times: dict[str, list[float]] = {}
    for j in history:
        if j.grade is not None and j.elapsed_ms > 0 and j.role in HUMAN_ROLES:
            times.setdefault(j.annotator, []).append(j.elapsed_ms / 1000)
    people = sorted(a for a, r in roles.items() if r in HUMAN_ROLES)
    adjudicators = {a: r for a, r in roles.items() if r == Role.ADJUDICATOR}
    adjudicated, _ = consensus_grades(grades, adjudicators)
    out = []
    for name in people:
        mine = grades.get(name, {})
        humans = {a: r for a, r in roles.items() if r == Role.HUMAN and a != name}
        others, _ = consensus_grades(grades, humans)
        is_adjudicator = roles[name] == Role.ADJUDICATOR
        spent = times.get(name, [])
        out.append(
            AnnotatorActivity(
                annotator=name,
                role=str(roles[name]),
                grades=len(mine),
                queries=len({q for q, _ in mine}),
                timed=len(spent),
                median_s=statistics.median(spent) if spent else None,
                p90_s=percentile(spent, 0.9),
                vs_others=(
                    compare(mine, others, scale, rel_threshold, MIN_SHARED_ITEMS)
                    if humans and not is_adjudicator
                    else None
                ),
                vs_adjudicated=(
                    compare(mine, adjudicated, scale, rel_threshold, MIN_SHARED_ITEMS)
                    if adjudicated and not is_adjudicator
                    else None
                ),
            )
        )
    return tuple(out)
