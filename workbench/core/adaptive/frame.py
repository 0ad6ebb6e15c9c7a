"""What the adaptive policy may judge for one query (`QueryFrame`): the candidates, every
system's top `CANDIDATE_DEPTH`, and a reserve, a simple random sample of the rest of the corpus
drawn once, each reserve passage standing for N_rest / M passages."""

from __future__ import annotations

import random
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CANDIDATE_DEPTH = 100
"""How deep into each system's ranking the policy looks for candidates."""
RESERVE_SIZE = 300
"""Passages drawn at random, once, from outside the candidates, per query."""
FAIR_DEPTH = 5
"""Every system's top FAIR_DEPTH is judged first (no system starved)."""


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

    @property
    def reserve_size(self) -> int:
        return len(self.doc_ids) - self.candidates

    def index(self) -> dict[str, int]:
        return {d: i for i, d in enumerate(self.doc_ids)}


def _rng(seed: int, query_id: str) -> random.Random:
    return random.Random(seed * 1_000_003 + zlib.crc32(query_id.encode("utf-8")))


def build_frame(
    query_id: str,
    rankings: Mapping[str, Sequence[str]],
    corpus_ids: Sequence[str],
    seed: int,
    *,
    depth: int = CANDIDATE_DEPTH,
    reserve: int = RESERVE_SIZE,
    exclude: frozenset[str] | set[str] = frozenset(),
) -> QueryFrame:
    """The frame of one query from each system's ranking (system -> doc ids in rank order).

    `exclude`: ids never judged on their own (identical twins of a canonical passage)."""
    import numpy as np

    systems = sorted(rankings)
    best: dict[str, dict[str, int]] = {}
    for system in systems:
        for rank, doc_id in enumerate(rankings[system][:depth], start=1):
            if doc_id not in exclude:
                best.setdefault(doc_id, {}).setdefault(system, rank)
    fused = {d: sum(1.0 / (60 + r) for r in ranks.values()) for d, ranks in best.items()}
    candidates = sorted(best, key=lambda d: (-fused[d], d))
    taken = set(candidates)
    rest = [d for d in dict.fromkeys(corpus_ids) if d not in taken and d not in exclude]
    drawn = _rng(seed, query_id).sample(rest, min(reserve, len(rest)))
    doc_ids = candidates + drawn
    ranks = np.zeros((len(doc_ids), len(systems)))
    for i, doc_id in enumerate(candidates):
        for s, system in enumerate(systems):
            ranks[i, s] = best[doc_id].get(system, 0)
    weight = np.ones(len(doc_ids))
    if drawn:
        weight[len(candidates) :] = len(rest) / len(drawn)
    position = {d: i for i, d in enumerate(candidates)}
    fair: list[int] = []
    for rank in range(FAIR_DEPTH):
        for system in systems:
            ranking = [d for d in rankings[system][:depth] if d not in exclude]
            if rank < len(ranking) and position[ranking[rank]] not in fair:
                fair.append(position[ranking[rank]])
    return QueryFrame(query_id, doc_ids, systems, ranks, weight, len(candidates), len(rest), fair)
