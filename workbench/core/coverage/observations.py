"""What coverage observes of one query: its pool and the strata sampled outside it, with how
many of each were judged and found relevant, and the grades that count."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from workbench.core.model import Judgment, PoolEntry

POOL_STRATUM = "pool"
UNSAMPLED = "unsampled"
"""Documents in no queue entry and no sampled stratum (their own stratum, never sampled)."""


def grades_counted(
    judgments: Iterable[Judgment], annotator: str | None = None
) -> dict[str, dict[str, int]]:
    """query -> doc -> the grade that counts. One annotator's current grades when named (any
    role, models included); else the project's resolution rule (workbench.core.judgments.resolve:
    adjudicator
    decides, agreement, else the low median; model judges left out; 'oracle' rows count)."""
    if annotator is None:
        from workbench.core.judgments.resolve import resolve

        return resolve(judgments)[0]
    grades: dict[str, dict[str, int]] = {}
    for j in judgments:
        if j.annotator == annotator and j.grade is not None:
            grades.setdefault(j.query_id, {})[j.doc_id] = j.grade
    return grades


@dataclass
class StratumObs:
    """One stratum of one query: its population, how many of it were judged, how many relevant."""

    name: str
    population: int
    sampled: int = 0
    judged: int = 0
    relevant: int = 0
    inclusion_prob: float = 1.0

    @property
    def unjudged(self) -> int:
        return max(self.population - self.judged, 0)


@dataclass
class QueryObs:
    """One query's pool counts and its outside-pool strata."""

    query_id: str
    pool_size: int
    pool_judged: int
    pool_relevant: int
    extra_relevant: int = 0
    """Judged relevant docs that are in no queue entry (e.g. imported labels)."""
    partial_relevant: int | None = None
    """Judged relevant pool docs that some system missed (None when the pool has one system)."""
    strata: list[StratumObs] = field(default_factory=list)

    @property
    def judged_relevant(self) -> int:
        return (
            self.pool_relevant
            + self.extra_relevant
            + sum(s.relevant for s in self.strata if s.name != POOL_STRATUM)
        )

    @property
    def sample_judged(self) -> int:
        return sum(s.judged for s in self.strata)


def observe(
    query_id: str,
    entries: Sequence[PoolEntry],
    grades: Mapping[str, int],
    corpus_size: int,
    rel_threshold: int = 1,
) -> QueryObs:
    """Group one query's queue entries into the pool and its sampling strata."""
    pool_docs = [e for e in entries if e.stratum == POOL_STRATUM]
    judged_pool = [e for e in pool_docs if e.doc_id in grades]
    strata = _sampled_strata(entries, grades, rel_threshold)
    known = {e.doc_id for e in entries}
    obs = QueryObs(
        query_id=query_id,
        pool_size=len(pool_docs),
        pool_judged=len(judged_pool),
        pool_relevant=sum(grades[e.doc_id] >= rel_threshold for e in judged_pool),
        extra_relevant=sum(1 for d, g in grades.items() if d not in known and g >= rel_threshold),
        strata=sorted(strata, key=lambda s: stratum_order(s.name)),
    )
    systems = {p.system for e in pool_docs for p in e.provenance}
    if len(systems) > 1:
        obs.partial_relevant = sum(
            1
            for e in judged_pool
            if grades[e.doc_id] >= rel_threshold
            and len({p.system for p in e.provenance}) < len(systems)
        )
    if strata:
        # Documents in no stratum (e.g. allocation gave a stratum nothing) form their own.
        twins = sum(len(e.aliases) for e in pool_docs)
        left = corpus_size - len(pool_docs) - twins - sum(s.population for s in obs.strata)
        if left > 0:
            obs.strata.append(StratumObs(UNSAMPLED, left, inclusion_prob=0.0))
    return obs


def _sampled_strata(
    entries: Sequence[PoolEntry], grades: Mapping[str, int], rel_threshold: int
) -> list[StratumObs]:
    """The outside-pool strata, each with its population recovered from its inclusion prob."""
    strata: dict[str, StratumObs] = {}
    for e in entries:
        if e.stratum == POOL_STRATUM:
            continue
        s = strata.setdefault(e.stratum, StratumObs(e.stratum, 0, inclusion_prob=e.inclusion_prob))
        s.sampled += 1
        if e.doc_id in grades:
            s.judged += 1
            s.relevant += grades[e.doc_id] >= rel_threshold
    for s in strata.values():
        s.population = max(int(round(s.sampled / s.inclusion_prob)), s.sampled)
    return list(strata.values())


def stratum_order(name: str) -> tuple[int, str]:
    """Sort key: rank bands by their first rank, then every other stratum by name."""
    if name.startswith("rank:"):
        try:
            return (int(name[5:].split("-")[0]), name)
        except ValueError:
            pass
    return (10**9, name)


def band_of(name: str) -> tuple[int, int] | None:
    """(first, last) rank of a 'rank:LO-HI' stratum; None for any other stratum."""
    if not name.startswith("rank:"):
        return None
    try:
        low, high = (int(part) for part in name[5:].split("-"))
    except ValueError:
        return None
    return (low, high) if 0 < low <= high else None


def query_covariate(obs: QueryObs) -> float:
    """What the pool says about what it missed: the log count of relevant pool docs that some
    system did not retrieve (systems that disagree leave more unfound, as in capture-recapture);
    with a single system, the empirical logit of the pool's relevance rate."""
    if obs.partial_relevant is not None:
        return math.log(obs.partial_relevant + 0.5)
    relevant, judged = obs.pool_relevant, obs.pool_judged
    return math.log((relevant + 0.5) / (judged - relevant + 0.5))
