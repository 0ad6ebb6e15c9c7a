"""Pooling: the depth-k union of several systems' rankings as one judging queue per query.

Pure and deterministic given its inputs and seed: no files, no database, no printing. Each
pooled item keeps its provenance (which system put it at which rank, with which score) and its
fused RRF score; identical passages under different ids become one item whose grade applies to
every id (`PoolEntry.aliases`); the queue order within a query is a named strategy."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from workbench.core.model import ORDERING_KEY, PoolEntry, Provenance
from workbench.core.random_streams import pool_random

RRF_K = 60
"""The RRF constant of Cormack, Clarke & Büttcher (2009): fused = sum of 1 / (60 + rank)."""

SystemRankings = Mapping[str, Mapping[str, list[str]]]
"""system -> query_id -> doc ids in rank order (already ordered by `model.order_pairs`)."""

SystemScores = Mapping[str, Mapping[str, Mapping[str, float]]]
"""system -> query_id -> doc_id -> score."""


@dataclass(slots=True)
class PoolItem:
    """One judging item while the pool is built: a canonical doc id and what retrieved it."""

    doc_id: str
    ranks: dict[str, tuple[int, float]] = field(default_factory=dict)
    """system -> (1-based rank, score); the best rank when aliases merged in."""
    aliases: list[str] = field(default_factory=list)

    @property
    def fused_score(self) -> float:
        return sum(1.0 / (RRF_K + rank) for rank, _ in self.ranks.values())

    def provenance(self) -> tuple[Provenance, ...]:
        return tuple(
            Provenance(system, rank, score) for system, (rank, score) in sorted(self.ranks.items())
        )

    def merge(self, other: PoolItem) -> None:
        """Take in a twin's provenance: per system the better (smaller) rank wins."""
        for system, (rank, score) in other.ranks.items():
            if system not in self.ranks or rank < self.ranks[system][0]:
                self.ranks[system] = (rank, score)


Strategy = Callable[[str, list[PoolItem], int], list[PoolItem]]
"""(query_id, items, seed) -> items in judging order."""


def _by_fused_score(query_id: str, items: list[PoolItem], seed: int) -> list[PoolItem]:
    """Fused RRF score descending, ties by the one ordering rule (doc id descending)."""
    return sorted(
        items, key=lambda item: ORDERING_KEY((item.doc_id, item.fused_score)), reverse=True
    )


def _round_robin(query_id: str, items: list[PoolItem], seed: int) -> list[PoolItem]:
    """Rank 1 of each system (systems by name), then rank 2, ...: each item sits where it first
    appears in that walk, i.e. at its smallest (rank, system)."""
    return sorted(items, key=lambda item: min((r, s) for s, (r, _) in item.ranks.items()))


def _random(query_id: str, items: list[PoolItem], seed: int) -> list[PoolItem]:
    """A shuffle seeded per query with a string seed, so it is the same in every Python run."""
    shuffled = sorted(items, key=lambda item: item.doc_id)
    pool_random(seed, query_id).shuffle(shuffled)
    return shuffled


def _by_doc_id(query_id: str, items: list[PoolItem], seed: int) -> list[PoolItem]:
    """Doc id ascending: hides every system's opinion from the annotator."""
    return sorted(items, key=lambda item: item.doc_id)


STRATEGIES: dict[str, Strategy] = {
    "rrf": _by_fused_score,
    "round-robin": _round_robin,
    "random": _random,
    "docid": _by_doc_id,
}
"""Judging-queue orders by name; adding one is adding an entry."""


def pool_items(
    rankings_by_system: SystemRankings,
    depth: int = 20,
    scores_by_system: SystemScores | None = None,
) -> dict[str, dict[str, PoolItem]]:
    """query_id -> doc_id -> item: the union of each system's top `depth`, no content dedup."""
    if depth < 1:
        raise ValueError(f"pool depth must be at least 1, not {depth}")
    scores_by_system = scores_by_system or {}
    pooled: dict[str, dict[str, PoolItem]] = {}
    for system in sorted(rankings_by_system):
        system_scores = scores_by_system.get(system, {})
        for query_id, ranking in rankings_by_system[system].items():
            query_scores = system_scores.get(query_id, {})
            items = pooled.setdefault(query_id, {})
            seen: set[str] = set()
            for doc_id in ranking:
                if doc_id in seen:  # a duplicate in one ranking: its first (best) rank counts
                    continue
                seen.add(doc_id)
                rank = len(seen)
                if rank > depth:
                    break
                item = items.setdefault(doc_id, PoolItem(doc_id))
                item.ranks[system] = (rank, float(query_scores.get(doc_id, 0.0)))
    return pooled


def _merge_twins(items: dict[str, PoolItem], canonical_of: Mapping[str, str]) -> list[PoolItem]:
    """Fold items whose passages are identical into one item under their group's canonical id
    (`canonical_ids`: the same id in every query), taking in the twins' provenance."""
    merged: dict[str, PoolItem] = {}
    for item in items.values():
        canonical = canonical_of.get(item.doc_id, item.doc_id)
        target = merged.get(canonical)
        if target is None:
            target = merged[canonical] = PoolItem(canonical)
        target.merge(item)
        if item.doc_id != canonical:
            target.aliases.append(item.doc_id)
    for item in merged.values():
        item.aliases.sort()
    return list(merged.values())


def canonical_ids(
    twins: Mapping[str, tuple[str, ...]],
    keep: Collection[str] = (),
    preference: Mapping[str, tuple[float, str]] | None = None,
) -> dict[str, str]:
    """doc id -> the one id its group of identical passages is judged under, in every query and
    every pooling (so an alias never points one way in one place and back in another): an id
    already queued (`keep`), else the most preferred (`preference`: best fused score
    anywhere, ties by the ordering rule), else the group's first id in corpus order."""
    preference = preference or {}
    chosen: dict[str, str] = {}
    for doc_id, group in twins.items():
        if doc_id in chosen:
            continue
        kept = [d for d in group if d in keep]
        if kept:
            canonical = max(kept, key=lambda d: (preference.get(d, (0.0, d)), d))
        elif any(d in preference for d in group):
            canonical = max(group, key=lambda d: preference.get(d, (-1.0, d)))
        else:
            canonical = group[0]
        chosen.update((d, canonical) for d in group)
    return chosen


def build_pool(
    rankings_by_system: SystemRankings,
    depth: int = 20,
    strategy: str = "rrf",
    seed: int = 0,
    scores_by_system: SystemScores | None = None,
    twins: Mapping[str, tuple[str, ...]] | None = None,
    keep: Collection[str] = (),
) -> list[PoolEntry]:
    """The judging queue: per query, the union of each system's top `depth` with provenance,
    identical passages folded into one item, ordered by `strategy`. Queries come in sorted
    order; positions are 0-based within a query.

    Identical passages are `twins` (see `twin_groups`); each group is judged under one id
    everywhere (`canonical_ids`), and ids already queued (`keep`) stay canonical."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown pooling strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    order = STRATEGIES[strategy]
    pooled = pool_items(rankings_by_system, depth, scores_by_system)

    canonical_of: dict[str, str] = {}
    if twins:
        preference: dict[str, tuple[float, str]] = {}
        for items in pooled.values():
            for doc_id, item in items.items():
                best = max(preference.get(doc_id, (0.0, doc_id))[0], item.fused_score)
                preference[doc_id] = (best, doc_id)
        canonical_of = canonical_ids(twins, keep, preference)

    entries: list[PoolEntry] = []
    for query_id in sorted(pooled):
        queue = _merge_twins(pooled[query_id], canonical_of)
        for position, item in enumerate(order(query_id, queue, seed)):
            entries.append(
                PoolEntry(
                    query_id=query_id,
                    doc_id=item.doc_id,
                    position=position,
                    fused_score=item.fused_score,
                    provenance=item.provenance(),
                    aliases=tuple(item.aliases),
                )
            )
    return entries


def twin_groups(keys: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """doc id -> every doc id (itself included, in the order of `keys`) with the same identity
    key (`model.passage_key`), for docs that have a twin; an empty key has none."""
    by_key: dict[str, list[str]] = {}
    for doc_id, key in keys.items():
        if key:
            by_key.setdefault(key, []).append(doc_id)
    return {d: tuple(group) for group in by_key.values() if len(group) > 1 for d in group}


def with_all_twins(entry: PoolEntry, twins: Mapping[str, tuple[str, ...]]) -> PoolEntry:
    """The grade of a judging item applies to every identical passage of the corpus, not only
    to the twins that some system happened to retrieve."""
    others = [d for d in twins.get(entry.doc_id, ()) if d != entry.doc_id]
    missing = [d for d in others if d not in entry.aliases]
    return replace(entry, aliases=(*entry.aliases, *missing)) if missing else entry


def sampling_frame(
    corpus_ids: Sequence[str], twins: Mapping[str, tuple[str, ...]], canonical: Collection[str]
) -> list[str]:
    """One id per distinct passage, so a twin group is one unit of the sample (as it is one
    judging item): its queued id if it has one, else its first id in corpus order."""
    frame: list[str] = []
    for doc_id in corpus_ids:
        group = twins.get(doc_id)
        if group is None:
            frame.append(doc_id)
            continue
        chosen = next((d for d in group if d in canonical), group[0])
        if doc_id == chosen:
            frame.append(doc_id)
    return frame


def pool_members(entries: list[PoolEntry]) -> dict[str, set[str]]:
    """query_id -> every doc id the pool covers (canonical ids and their aliases)."""
    members: dict[str, set[str]] = {}
    for e in entries:
        members.setdefault(e.query_id, set()).update((e.doc_id, *e.aliases))
    return members


def flat_aliases(aliases: Mapping[str, str], queued: Collection[str] = ()) -> dict[str, str]:
    """Alias edges (alias -> canonical) flattened so that no canonical id is itself an alias:
    each connected group of ids gets one canonical, a queued id (`queued`) that no edge calls
    an alias if there is one, else the smallest id. Stores pooled before one canonical per
    group was the rule may hold chains or cycles; golden.yaml allows neither."""
    parent: dict[str, str] = {}

    def root(doc_id: str) -> str:
        while parent.setdefault(doc_id, doc_id) != doc_id:
            parent[doc_id] = parent[parent[doc_id]]
            doc_id = parent[doc_id]
        return doc_id

    for alias, canonical in aliases.items():
        parent[root(alias)] = root(canonical)
    groups: dict[str, list[str]] = {}
    for doc_id in parent:
        groups.setdefault(root(doc_id), []).append(doc_id)
    flat: dict[str, str] = {}
    for members in groups.values():
        heads = sorted(d for d in members if d not in aliases)
        queued_heads = [d for d in heads if d in queued]
        canonical = (queued_heads or heads or sorted(members))[0]
        flat.update((d, canonical) for d in members if d != canonical)
    return flat


def interleave_samples(pool: list[PoolEntry], sampled: list[PoolEntry]) -> list[PoolEntry]:
    """Pool and sampled items per query in queue order: samples at their positions, pool items
    filling the rest in their own order (the store appends new items in the order given)."""
    by_query: dict[str, tuple[list[PoolEntry], dict[int, PoolEntry]]] = {}
    for e in pool:
        by_query.setdefault(e.query_id, ([], {}))[0].append(e)
    for e in sampled:
        by_query.setdefault(e.query_id, ([], {}))[1][e.position] = e
    merged: list[PoolEntry] = []
    for query_id in sorted(by_query):
        pooled, samples = by_query[query_id]
        waiting = [samples[p] for p in sorted(samples)]
        queue: list[PoolEntry] = []
        next_pooled = 0
        while next_pooled < len(pooled) or waiting:
            due = waiting and (waiting[0].position <= len(queue) or next_pooled == len(pooled))
            if due:
                queue.append(waiting.pop(0))
            else:
                queue.append(pooled[next_pooled])
                next_pooled += 1
        merged.extend(queue)
    return merged
