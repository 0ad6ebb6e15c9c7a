"""What the adaptive policy may judge for one query (`QueryFrame`): the candidates, every
system's top `CANDIDATE_DEPTH`, and a reserve, a simple random sample of the rest of the corpus
drawn once, each reserve passage standing for N_rest / M passages."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from workbench.core.model import PoolEntry, Provenance
from workbench.core.random_streams import frame_random

if TYPE_CHECKING:
    from workbench.core.pool.sampling import CorpusOrder, RepeatedSum, Without

CANDIDATE_DEPTH = 100
"""How deep into each system's ranking the policy looks for candidates, by default
(`pool --candidate-depth`)."""
RESERVE_SIZE = 300
"""Passages drawn at random, once, from outside the candidates, per query."""
FAIR_DEPTH = 10
"""Every system's top FAIR_DEPTH is judged first: no system starved, and the scored runs' top k
judged, so a study figure's numerator (the relevant a run put in its top k) is earned, never
imputed from the relevance model (`fair_depth`: the study's target cutoff, at least `FAIR_MIN`)."""
FAIR_MIN = 5
"""The shallowest fair start, whatever the target's cutoff (every system's top 5)."""


def fair_depth(k: int | None) -> int:
    """The fair start's depth for a study scored at cutoff `k` (its target's): every system's top
    k, at least `FAIR_MIN` (None: `FAIR_DEPTH`)."""
    return FAIR_DEPTH if k is None else max(FAIR_MIN, int(k))


CANDIDATE = "candidate"
RESERVE = "reserve:"
"""The pool strata of an adaptive pooling: the candidates, and the reserve's bands
('reserve:rank:101-300', 'reserve:rank:301-1000', 'reserve:rest')."""


@dataclass(frozen=True)
class Band:
    """One stratum of the rest: `size` passages, of which `members` (frame indices) are its
    simple random sample in the reserve; `prior`: a guess of its relevance rate (1/rank)."""

    name: str
    size: int
    members: tuple[int, ...]
    prior: float

    @property
    def weight(self) -> float:
        return self.size / len(self.members) if self.members else 0.0


@dataclass
class QueryFrame:
    """One query's judgeable passages: candidates first (fused order), then the reserve.

    `weight[i]` is how many corpus passages passage i stands for: 1 for a candidate,
    `rest_size / reserve_size` for a reserve passage. `ranks[i, s]` is the passage's rank in
    system s (0: not in its top CANDIDATE_DEPTH)."""

    query_id: str
    doc_ids: list[str]
    systems: list[str]
    ranks: Any
    weight: Any
    candidates: int
    rest_size: int
    fair_order: list[int]
    bands: list[Band] = field(default_factory=list)
    """The rest of the corpus by best rank over the systems' deeper results: each band's size,
    its reserve passages (frame indices) and its prior relevance rate."""
    depth: int = CANDIDATE_DEPTH
    """How deep into each system's ranking the candidates go."""

    @property
    def reserve_size(self) -> int:
        return len(self.doc_ids) - self.candidates

    @cached_property
    def candidate_depth(self) -> Any:
        """Per candidate, its best rank over the systems / the candidate depth (at most 1): how
        deep in the rankings it was found (fixed with the frame, so computed once)."""
        import numpy as np

        ranks = self.ranks[: self.candidates]
        best = np.where(ranks > 0, ranks, np.inf).min(axis=1, initial=np.inf)
        return np.minimum(best, self.depth) / self.depth

    def index(self) -> dict[str, int]:
        return {d: i for i, d in enumerate(self.doc_ids)}


def build_frame(
    query_id: str,
    rankings: Mapping[str, Sequence[str]],
    corpus_ids: Sequence[str],
    seed: int,
    *,
    depth: int = CANDIDATE_DEPTH,
    reserve: int = RESERVE_SIZE,
    exclude: frozenset[str] | set[str] = frozenset(),
    fold: Mapping[str, str] | None = None,
    fair: int = FAIR_DEPTH,
) -> QueryFrame:
    """The frame of one query from each system's ranking (system -> doc ids in rank order).
    `fair`: the fair start's depth (`fair_depth`).

    `exclude`: ids never judged on their own (identical twins of a canonical passage); `fold`:
    each of them -> its canonical, which then takes the best rank of its twins, as eval folds
    a run (a twin at rank 8 puts the canonical at rank 8, not at its own 10).
    `corpus_ids` as a `sampling.CorpusOrder` (built once for all queries) keeps the work per
    query in the ranked passages, not the corpus."""
    import numpy as np

    from workbench.core.pool.sampling import CorpusOrder, Without

    systems = sorted(rankings)
    best: dict[str, dict[str, int]] = {}
    for system in systems:
        for rank, doc_id in enumerate(rankings[system][:depth], start=1):
            doc_id = fold.get(doc_id, doc_id) if fold else doc_id
            if doc_id not in exclude:
                best.setdefault(doc_id, {}).setdefault(system, rank)
    fused = {d: sum(1.0 / (60 + r) for r in ranks.values()) for d, ranks in best.items()}
    candidates = sorted(best, key=lambda d: (-fused[d], d))
    taken = set(candidates)
    order = CorpusOrder.of(corpus_ids)
    position = order.position
    rest = Without(order.ids, (position[d] for d in taken | set(exclude) if d in position))
    bands, drawn = _reserve(query_id, rankings, order, rest, depth, reserve, seed)
    doc_ids = candidates + drawn
    ranks = np.zeros((len(doc_ids), len(systems)))
    for i, doc_id in enumerate(candidates):
        for s, system in enumerate(systems):
            ranks[i, s] = best[doc_id].get(system, 0)
    weight = np.ones(len(doc_ids))
    for band in bands:
        for i in band.members:
            weight[len(candidates) + i] = band.weight
    bands = [
        Band(b.name, b.size, tuple(len(candidates) + i for i in b.members), b.prior) for b in bands
    ]
    fair_start = fair_order(ranks, fair)
    return QueryFrame(
        query_id, doc_ids, systems, ranks, weight, len(candidates), len(rest), fair_start, bands,
        depth,
    )  # fmt: skip


def _reserve(
    query_id: str,
    rankings: Mapping[str, Sequence[str]],
    order: CorpusOrder,
    rest: Without,
    depth: int,
    size: int,
    seed: int,
) -> tuple[list[Band], list[str]]:
    """The reserve: the rest split into bands by best rank over the systems' rankings (as the
    static sample's strata: 'rank:101-300', 'rank:301-1000', then 'rest'), `size` passages
    allocated over them Neyman-like (N_h * sqrt(prior rate), a floor each) and drawn at random
    inside each. Members are indices into the returned passages. The ranked passages of the
    rest are walked in corpus order; the unranked ones are `rest` without them, drawn from by
    index (the same draws as from a list)."""
    from workbench.core.pool.sampling import REST, Without, allocate, best_ranks, stratum_bands

    best = best_ranks({s: {query_id: r} for s, r in rankings.items()}, query_id)
    deepest = max((len(r) for r in rankings.values()), default=0)
    limits = stratum_bands(depth, max(deepest, depth + 1))
    members: dict[str, Sequence[str]] = {name: [] for name, _, _ in limits}
    prior: dict[str, float] = dict.fromkeys([*members, REST], 0.0)
    skipped = set(rest.skipped)
    ranked = sorted(
        (order.position[d], d, rank)
        for d, rank in best.items()
        if d in order.position and order.position[d] not in skipped
    )
    banded: list[int] = []
    for at, doc_id, rank in ranked:
        name = next((b for b, _, last in limits if rank <= last), REST)
        if name == REST:
            continue
        members[name].append(doc_id)  # type: ignore[attr-defined]
        banded.append(at)
        prior[name] += 1.0 / rank
    members[REST] = Without(order.ids, [*rest.skipped, *banded])
    prior[REST] = _rest_sum(2 * max(deepest, 1))(len(members[REST]))
    names = [n for n in members if members[n]]
    sizes = [len(members[n]) for n in names]
    weights = [len(members[n]) * math.sqrt(prior[n] / len(members[n])) for n in names]
    counts = allocate(sizes, weights, min(size, len(rest)))
    rng = frame_random(seed, query_id)
    bands, drawn = [], []
    for name, count in zip(names, counts, strict=True):
        picked = rng.sample(members[name], count)
        start = len(drawn)
        drawn.extend(picked)
        bands.append(Band(name, len(members[name]), tuple(range(start, len(drawn))), _prior(name)))
    return bands, drawn


@cache
def _rest_sum(prior_rank: int) -> RepeatedSum:
    """The unranked rest's prior: 1 / `prior_rank` added once per passage (one per depth)."""
    from workbench.core.pool.sampling import RepeatedSum

    return RepeatedSum(1.0 / prior_rank)


def fair_order(ranks: Any, depth: int = FAIR_DEPTH) -> list[int]:
    """Every system's `depth` best candidates, round-robin by rank (rank 1 of each system, then
    rank 2, ...), each once."""
    order: list[int] = []
    best = [
        [int(i) for i in sorted(range(len(ranks)), key=lambda i: ranks[i, s]) if ranks[i, s] > 0]
        for s in range(ranks.shape[1] if len(ranks) else 0)
    ]
    for rank in range(depth):
        for system_best in best:
            if rank < len(system_best) and system_best[rank] not in order:
                order.append(system_best[rank])
    return order


def frame_entries(
    frame: QueryFrame, scores: Mapping[str, Mapping[str, float]] | None = None
) -> list[PoolEntry]:
    """The frame as pool entries: candidates (stratum 'candidate', with each system's rank and
    score) in fused order, then the reserve (stratum 'reserve', with its inclusion probability
    M / N_rest), so the store alone can rebuild it (`frame_from_entries`)."""
    entries = []
    band_of = {i: b for b in frame.bands for i in b.members}
    for i, doc_id in enumerate(frame.doc_ids):
        if i < frame.candidates:
            provenance = tuple(
                Provenance(system, int(frame.ranks[i, s]),
                           float((scores or {}).get(system, {}).get(doc_id, 0.0)))
                for s, system in enumerate(frame.systems)
                if frame.ranks[i, s] > 0
            )  # fmt: skip
            fused = sum(1.0 / (60 + p.rank) for p in provenance)
            entries.append(
                PoolEntry(frame.query_id, doc_id, i, fused, provenance, stratum=CANDIDATE)
            )
        else:
            band = band_of[i]
            prob = len(band.members) / band.size
            entries.append(
                PoolEntry(frame.query_id, doc_id, i, stratum=RESERVE + band.name,
                          inclusion_prob=prob)
            )  # fmt: skip
    return entries


def frame_from_entries(
    query_id: str,
    entries: Sequence[PoolEntry],
    systems: Sequence[str] | None = None,
    depth: int = CANDIDATE_DEPTH,
    fair: int = FAIR_DEPTH,
) -> QueryFrame:
    """The frame a pooling stored (`frame_entries`), from the query's pool entries.
    `systems`: the study's systems, the columns of every query's ranks (a query that some
    system ranked nothing for still has its column, so the model's rank features mean the
    same in every query); by default those ranking this query's candidates. `depth`: the
    candidate depth the pooling recorded; `fair`: the fair start's depth (`fair_depth`)."""
    import numpy as np

    candidates = [e for e in entries if e.stratum == CANDIDATE]
    reserve = [e for e in entries if e.stratum.startswith(RESERVE)]
    if systems is None:
        systems = sorted({p.system for e in candidates for p in e.provenance})
    systems = list(systems)
    column = {system: s for s, system in enumerate(systems)}
    ranks = np.zeros((len(candidates) + len(reserve), len(systems)))
    for i, e in enumerate(candidates):
        for p in e.provenance:
            ranks[i, column[p.system]] = p.rank
    by_band: dict[str, list[int]] = {}
    for i, e in enumerate(reserve, start=len(candidates)):
        by_band.setdefault(e.stratum[len(RESERVE) :], []).append(i)
    bands = []
    weight = np.ones(len(candidates) + len(reserve))
    for name, members in by_band.items():
        prob = reserve[members[0] - len(candidates)].inclusion_prob
        band = Band(name, round(len(members) / prob), tuple(members), _prior(name))
        bands.append(band)
        weight[list(members)] = band.weight
    doc_ids = [e.doc_id for e in candidates] + [e.doc_id for e in reserve]
    return QueryFrame(
        query_id, doc_ids, systems, ranks, weight, len(candidates),
        sum(b.size for b in bands), fair_order(ranks[: len(candidates)], fair), bands, depth,
    )  # fmt: skip


def _prior(name: str) -> float:
    """The prior rate of a band read back from its name (1 / its middle rank; the rest: 1 /
    twice the deepest rank known, 1000)."""
    from workbench.core.coverage.observations import band_of

    limits = band_of(name)
    return 1.0 / ((limits[0] + limits[1]) / 2) if limits else 1.0 / 2000
