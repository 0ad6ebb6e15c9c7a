"""What a judge covariate saved: the human judgments the same study would need without the
judge for the interval it has now (pure).

Per query, the variance of its |Rel| now (the candidates' Des Raj variance, the unjudged
candidates' Bernoulli part and the rest's posterior spread) is set beside the variance the
no-judge model gives on the same judgments and draws (each draw's residual and the unjudged
candidates' expected relevant taken from the no-judge model; the draws' probabilities stay as
recorded, so it is still a valid estimate). A variance falls about as 1 / judgments, so the
no-judge design needs about n x (variance without / variance with) judgments for today's width:
the difference is what the judge saved (negative: a judge worse than none cost judgments). An
approximation: the rest's part and the unjudged candidates' Bernoulli part do not fall as
1 / n, and neither design's future picks are replayed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from workbench.core.adaptive.estimate import candidate_total

if TYPE_CHECKING:
    from workbench.core.adaptive.policy import AdaptiveSession


@dataclass(frozen=True, slots=True)
class Saving:
    """The study's human judgments and the no-judge design's estimate of what it would need for
    the same per-query widths (over the queries measured in both)."""

    judged: int
    without: int
    queries: int

    @property
    def saved(self) -> int:
        return self.without - self.judged

    def to_json(self) -> dict[str, Any]:
        return {"judged": self.judged, "without_judge": self.without, "saved": self.saved,
                "queries": self.queries}  # fmt: skip


@dataclass(frozen=True, slots=True)
class JudgeSaving:
    """The judge stored with the study (its name and version) and what it saved (`saving`;
    None when it could not be measured)."""

    name: str
    version: str
    saving: Saving | None

    def to_json(self) -> dict[str, Any]:
        saving = None if self.saving is None else self.saving.to_json()
        return {"name": self.name, "version": self.version, "saving": saving}


def query_variances(
    session: AdaptiveSession, plain: AdaptiveSession, query_id: str
) -> tuple[float, float] | None:
    """(variance with the judge, variance without) of the query's |Rel|; None while either is
    unmeasured."""
    total = session.total(query_id)
    cand = session.candidates_total(query_id)
    if total.est is None or cand.exact or not math.isfinite(cand.variance):
        return None
    with_judge = cand.variance + total.rest_spread
    q = plain.queries[query_id]
    frame = q.frame
    p0 = plain.probabilities(query_id)[: frame.candidates]
    index = {d: i for i, d in enumerate(frame.doc_ids[: frame.candidates])}
    redone = []
    for draw in session.queries[query_id].draws:
        if draw.reserve or draw.doc_id not in index:
            redone.append(draw)
            continue
        excluded = {index[d] for d in draw.excluded if d in index}
        predicted = float(sum(p0[i] for i in range(frame.candidates) if i not in excluded))
        redone.append(replace(draw, predicted=predicted, p=float(p0[index[draw.doc_id]])))
    relevant = {frame.doc_ids[i]: r for i, r in q.grades.items() if i < frame.candidates}
    unjudged = [i for i in range(frame.candidates) if i not in q.grades]
    spread = float(sum(p0[i] * (1 - p0[i]) for i in unjudged))
    without = candidate_total(redone, relevant, spread, float(sum(p0[i] for i in unjudged)))
    if not math.isfinite(without.variance):
        return None
    return with_judge, without.variance + total.rest_spread


def judge_saving(
    session: AdaptiveSession, plain: AdaptiveSession, query_ids: Sequence[str] | None = None
) -> Saving:
    """`session` with the judge, `plain` the same study without it (same store, same
    judgments)."""
    judged = without = queries = 0
    for query_id in query_ids if query_ids is not None else list(session.queries):
        found = query_variances(session, plain, query_id)
        if found is None:
            continue
        n = session.judged(query_id)
        var_with, var_without = found
        judged += n
        without += round(n * var_without / var_with) if var_with > 0 else n
        queries += 1
    return Saving(judged, without, queries)
