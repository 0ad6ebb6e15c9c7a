"""One query's ranking reduced, once, to what every measure needs (`QueryView`), and the
ranking helpers the measures and the audit share. Pure: no files, no printing. The
conventions are written once, in `workbench.core.measures.metrics`."""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import ge

from workbench.core.model import ORDERING_KEY, order_pairs


@dataclass(frozen=True, slots=True)
class JudgedRanking:
    """A ranking known by its length, its first ids and the rank of each doc one qrels judges:
    all the measures and the audit read, computed column-wise for a whole run file
    (`run_table.judged_rankings`) so that no per-doc object is made. Valid only with the
    judgments it was reduced against."""

    depth: int
    top: tuple[str, ...]
    """The first ids by the ordering rule (all of them when the ranking is that short)."""
    ranks: Mapping[str, int]
    """0-based rank of each judged doc the ranking holds (it holds no doc twice)."""

    def __len__(self) -> int:
        return self.depth


RankingLike = Sequence[str] | Mapping[str, float] | JudgedRanking
"""A ranking: doc ids in rank order, or {doc_id: score} ordered by the one ordering rule
(score descending, ties by doc id descending), or a `JudgedRanking`. Scores skip sorting whole
runs."""

GAINS = ("linear", "exponential")
MAX_EXPONENTIAL_GRADE = 1000
"""The largest grade `--gain exponential` takes: 2^1000 - 1 is a float (2^1024 is not), and a
DCG summing millions of such gains still stays finite, so nDCG is a number, never inf/inf."""
MAX_LINEAR_GRADE = 10**300
"""The largest grade linear gain takes: the grade as a float, summed over a ranking, stays
finite."""
MAX_GRADE = {"linear": MAX_LINEAR_GRADE, "exponential": MAX_EXPONENTIAL_GRADE}


def grade_problem(grade: int, gain: str = "linear") -> str | None:
    """Why `grade` cannot be scored under `gain`, or None when it can."""
    top = MAX_GRADE.get(gain, MAX_LINEAR_GRADE)
    if grade <= top:
        return None
    digits = str(grade)
    shown = digits if len(digits) <= 24 else f"{digits[:12]}... ({len(digits)} digits)"
    limit = "10^300" if top == MAX_LINEAR_GRADE else str(top)
    return (
        f"grade {shown} is too large: the largest grade --gain {gain} can take is {limit} "
        "(its gain must stay a finite number)"
    )


@dataclass(frozen=True, slots=True)
class QueryView:
    """One query's ranking reduced to what every measure needs, computed once.

    `hits` lists (rank_index, grade) for the judged docs (grade >= 0) at their FIRST
    occurrence in the ranking, in rank order (rank_index is 0-based)."""

    hits: tuple[tuple[int, int], ...]
    depth: int
    """Ranking length, duplicate slots included."""
    rel_count: int
    nonrel_count: int
    rel_threshold: int
    ideal_gains: tuple[float, ...]
    """Gains of every judged doc, best first: the ideal ranking for nDCG."""
    gain: str = "linear"


def gain_of(grade: int, gain: str = "linear") -> float:
    """Linear gain is the grade; exponential is 2^grade - 1. Non-positive grades gain 0.
    ValueError for a grade above `MAX_GRADE[gain]` (its gain would not be a finite float)."""
    if grade <= 0:
        return 0.0
    if grade > MAX_GRADE.get(gain, MAX_LINEAR_GRADE):
        raise ValueError(grade_problem(grade, gain))
    return float(grade) if gain == "linear" else float(2**grade - 1)


def _hits_from_scores(
    docs: Mapping[str, float], judged: Mapping[str, int]
) -> tuple[tuple[int, int], ...]:
    """(rank_index, grade) of the judged docs in `docs`, ranked by the ordering rule without
    sorting the whole run: a doc's rank index is how many docs outrank it."""
    present = [(d, docs[d], g) for d, g in judged.items() if g >= 0 and d in docs]
    if not present:
        return ()
    present.sort(key=ORDERING_KEY, reverse=True)  # the one ordering rule
    values = sorted(docs.values())
    n = len(values)
    hits: list[tuple[int, int]] = []
    tied_ids: dict[float, list[str]] | None = None
    for doc_id, score, grade in present:
        after = bisect_right(values, score)
        above = n - after
        if after - bisect_left(values, score) > 1:  # tied: higher ids come first
            if tied_ids is None:  # one pass (in C) collects every tie group a judged doc sits in
                wanted = {p[1] for p in present}
                tied_ids = {}
                for other in compress(docs, map(wanted.__contains__, docs.values())):
                    tied_ids.setdefault(docs[other], []).append(other)
            above += sum(1 for other in tied_ids[score] if other > doc_id)
        hits.append((above, grade))
    return tuple(hits)


def judged_any(judged: Mapping[str, int] | None) -> bool:
    """Whether a query carries at least one judgment (a grade >= 0; negative = unjudged)."""
    return judged is not None and any(g >= 0 for g in judged.values())


def top_k(ranking: RankingLike, k: int) -> list[str]:
    """The first k doc ids of a ranking (a list, or scores under the ordering rule)."""
    if isinstance(ranking, JudgedRanking):
        if k > len(ranking.top) and ranking.depth > len(ranking.top):
            raise ValueError(f"top {k} asked of a ranking reduced to its top {len(ranking.top)}")
        return list(ranking.top[:k])
    if not isinstance(ranking, Mapping):
        return list(ranking[:k])
    if len(ranking) <= k:
        return order_pairs(ranking.items())
    kth = heapq.nlargest(k, ranking.values())[-1]
    above = compress(ranking, map(ge, ranking.values(), repeat(kth)))  # a C-level filter
    return order_pairs([(d, ranking[d]) for d in above])[:k]


def query_view(
    ranking: RankingLike,
    judged: Mapping[str, int],
    rel_threshold: int = 1,
    gain: str = "linear",
) -> QueryView:
    """Reduce a ranking against one query's judgments (see the module's conventions)."""
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, not {gain!r}")
    get = judged.get
    if isinstance(ranking, JudgedRanking):
        rank_of = ranking.ranks
        hits = tuple(sorted((rank_of[d], g) for d, g in judged.items() if g >= 0 and d in rank_of))
    elif isinstance(ranking, Mapping):
        hits = _hits_from_scores(ranking, judged)
    elif len(set(ranking)) == len(ranking):
        hits = tuple((i, g) for i, d in enumerate(ranking) if (g := get(d)) is not None and g >= 0)
    else:
        seen: set[str] = set()
        found: list[tuple[int, int]] = []
        for i, d in enumerate(ranking):
            if d in seen:
                continue
            seen.add(d)
            g = get(d)
            if g is not None and g >= 0:
                found.append((i, g))
        hits = tuple(found)
    rel_count = 0
    nonrel_count = 0
    for g in judged.values():
        if g >= rel_threshold:
            rel_count += 1
        elif g >= 0:
            nonrel_count += 1
    ideal = tuple(sorted((gain_of(g, gain) for g in judged.values() if g > 0), reverse=True))
    return QueryView(hits, len(ranking), rel_count, nonrel_count, rel_threshold, ideal, gain)
