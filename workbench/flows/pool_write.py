"""A pooling written into the store, in one transaction, by its policy: the static pool (the
top `depth` of each system in `strategy` order, plus a stratified sample) or each query's frame
for the adaptive queue; and what the store holds after, summed up (`PoolSummary`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.agreement.assign import OverlapSummary
from workbench.core.errors import InputError
from workbench.core.model import PoolEntry
from workbench.core.pool.pooling import (
    build_pool,
    interleave_samples,
    pool_members,
    sampling_frame,
    with_all_twins,
)
from workbench.core.progress import ProgressCallback
from workbench.core.store_url import StoreLocation
from workbench.flows.pool_inputs import PoolInputs
from workbench.flows.pool_policy import policy_of, pooling_refusal
from workbench.formats.passages import CorpusStats, PassageRule
from workbench.retrieval.systems import SystemResult

if TYPE_CHECKING:
    from workbench.store.base import JudgmentStore


@dataclass(frozen=True, slots=True)
class SystemStatus:
    """How one system took part in a pooling."""

    status: str
    """"ok" or "skipped"."""
    reason: str | None
    """Why it was skipped (None when ok)."""
    depth: int
    run_path: str | None
    """Its run file: written by the pipeline, or the user's --run (None when skipped)."""


@dataclass(frozen=True, slots=True)
class PoolSummary:
    """What `pool_corpus` did; `to_json` is what `workbench pool --json` prints."""

    queries: int
    systems: Mapping[str, SystemStatus]
    """Every system asked for and every --run, in pooling order."""
    pool_items: int
    """The store's queue size, earlier poolings included."""
    new_items: int
    aliases: int
    """Alias ids in the store (identical passages folded into one item)."""
    sample_per_query: int
    sample_drawn: int
    warnings: tuple[str, ...] = ()
    overlap: OverlapSummary | None = None
    """The overlap marked after pooling (`workbench pool --overlap`), as `assign` reports it."""
    corpus: CorpusStats | None = None
    """What the corpus was read into (a JSONL corpus is one file)."""
    passages: PassageRule | None = None
    """How a text folder was cut into passages (None: a JSONL corpus)."""

    @property
    def runs(self) -> dict[str, str]:
        """Run file of each system that produced a run."""
        return {n: s.run_path for n, s in self.systems.items() if s.run_path is not None}

    @property
    def skipped(self) -> list[str]:
        return [name for name, s in self.systems.items() if s.status != "ok"]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "queries": self.queries,
            "systems": {
                name: {"status": s.status, "reason": s.reason, "depth": s.depth}
                for name, s in self.systems.items()
            },
            "pool_items": self.pool_items,
            "new_items": self.new_items,
            "aliases": self.aliases,
            "runs": self.runs,
        }
        if self.corpus is not None:
            passages = None if self.passages is None else str(self.passages)
            data["corpus"] = {**self.corpus.to_json(), "passage_rule": passages}
        if self.sample_per_query:
            data["sample"] = {"per_query": self.sample_per_query, "drawn": self.sample_drawn}
        if self.overlap is not None:
            data["overlap"] = self.overlap.to_json()
        return data


@dataclass(frozen=True, slots=True)
class Pooled:
    """What the systems produced, ready to be written: the inputs read, every system's result
    (the user's runs included), the identical-passage groups, and how the systems ran."""

    inputs: PoolInputs
    results: list[SystemResult]
    twins: dict[str, tuple[str, ...]]
    settings: Mapping[str, Any]
    corpus: str | os.PathLike[str]
    """The corpus as given (recorded with the pooling)."""

    def rankings(self) -> dict[str, dict[str, list[str]]]:
        """Each system's rankings, by system (those that produced a run)."""
        return {r.name: r.run.rankings() for r in self.results if r.run is not None}

    def summary(self, pool: tuple[int, int, int], depth: int, sample: tuple[int, int] = (0, 0)
                ) -> PoolSummary:  # fmt: skip
        """The summary of this pooling once written: `pool` (new items, pool size, aliases),
        each system's status at `depth`, `sample` (per query asked, drawn)."""
        systems = {
            r.name: SystemStatus(r.status, r.reason, depth, str(r.path) if r.run else None)
            for r in self.results
        }
        new_items, pool_size, aliases = pool
        return PoolSummary(len(self.inputs.queries), systems, pool_size, new_items, aliases,
                           *sample, tuple(self.inputs.warnings), corpus=self.inputs.corpus,
                           passages=self.inputs.passages)  # fmt: skip


def write_static(
    store: JudgmentStore, pooled: Pooled, db: StoreLocation, how: tuple[int, str, int, int],
    progress: ProgressCallback | None = None,
) -> PoolSummary:  # fmt: skip
    """Add the pool (and the sample) to the store (`how`: depth, strategy, seed, sample per
    query); what it holds now, summed up."""
    depth, strategy, seed, sample = how
    inputs, twins = pooled.inputs, pooled.twins
    runs = {r.name: r.run for r in pooled.results if r.run is not None}
    rankings = pooled.rankings()
    scores = {name: run.scores for name, run in runs.items()}

    refusal = pooling_refusal(db, policy_of(store), "static")
    if refusal:
        raise InputError([refusal])
    # an interrupted pooling is replaced, not added to (`PoolTables.add_pooling`)
    before = [] if store.interrupted_pooling() else store.pool()
    entries = build_pool(
        rankings, depth, strategy, seed, scores_by_system=scores, twins=twins,
        keep={e.doc_id for e in before},
    )  # fmt: skip
    canonical = {e.doc_id for e in (*before, *entries)}
    entries = [with_all_twins(e, twins) for e in entries]
    sampled: list[PoolEntry] = []
    if sample:
        sampled = _sample(inputs, rankings, entries, before, twins, canonical, sample, seed,
                          depth)  # fmt: skip
        entries = interleave_samples(entries, sampled)
    written = _add_pooling(
        store, pooled, entries, (depth, strategy, seed), progress,
        {"sample": sample, **pooled.settings},
    )  # fmt: skip
    return pooled.summary(written, depth, (sample, len(sampled)))


def _sample(
    inputs: PoolInputs,
    rankings: dict[str, dict[str, list[str]]],
    entries: list[PoolEntry],
    before: list[PoolEntry],
    twins: dict[str, tuple[str, ...]],
    canonical: set[str],
    sample: int,
    seed: int,
    depth: int,
) -> list[PoolEntry]:
    """`sample` docs per query from outside the pool (earlier pools' members included), each
    group of identical passages one unit."""
    from workbench.core.pool.sampling import sample_outside_pool

    pooled = pool_members(entries)
    for query in inputs.queries:  # a query no system ranked has no pool, yet its sample
        pooled.setdefault(query.query_id, set())
    for e in before:  # earlier samples stay in the frame: the same seed redraws them
        if e.stratum == "pool":
            pooled.setdefault(e.query_id, set()).update((e.doc_id, *e.aliases))
    for members in pooled.values():
        members.update(t for d in list(members) for t in twins.get(d, ()))
    frame = sampling_frame([d.doc_id for d in inputs.docs], twins, canonical)
    sampled = sample_outside_pool(rankings, pooled, frame, sample, seed, depth=depth)
    return [with_all_twins(e, twins) for e in sampled]


def write_adaptive(
    store: JudgmentStore, pooled: Pooled, db: StoreLocation, how: tuple[int, int],
    progress: ProgressCallback | None = None,
) -> PoolSummary:  # fmt: skip
    """Store every query's frame for the adaptive queue (`core.adaptive.frame_entries`), its
    candidates each system's top `depth` (`how`: depth, seed): a new store only, since frames
    are drawn over the whole corpus once."""
    from workbench.core.adaptive import RESERVE_SIZE, build_frame, frame_entries
    from workbench.core.pool.pooling import canonical_ids
    from workbench.core.pool.sampling import CorpusOrder

    depth, seed = how
    inputs, twins = pooled.inputs, pooled.twins
    runs = {r.name: r.run for r in pooled.results if r.run is not None}
    rankings = pooled.rankings()
    canonical = canonical_ids(twins)
    exclude = {d for d, c in canonical.items() if d != c}
    corpus_ids = CorpusOrder([d.doc_id for d in inputs.docs])  # once, for every query's frame
    refusal = pooling_refusal(db, policy_of(store), "adaptive")
    if refusal:
        raise InputError([refusal])
    entries: list[PoolEntry] = []
    for query in inputs.queries:
        frame = build_frame(
            query.query_id,
            {name: r.get(query.query_id, []) for name, r in rankings.items()},
            corpus_ids,
            seed,
            depth=depth,
            exclude=exclude,
            fold={d: canonical[d] for d in exclude},
        )
        scores = {name: run.scores.get(query.query_id, {}) for name, run in runs.items()}
        entries.extend(with_all_twins(e, twins) for e in frame_entries(frame, scores))
    extra = {"policy": "adaptive", "candidate_depth": depth, "reserve": RESERVE_SIZE}
    written = _add_pooling(
        store, pooled, entries, (depth, "adaptive", seed), progress,
        {**extra, **pooled.settings}, {"policy": "adaptive"},
    )  # fmt: skip
    return pooled.summary(written, depth)


def _add_pooling(
    store: JudgmentStore,
    pooled: Pooled,
    entries: list[PoolEntry],
    how: tuple[int, str, int],
    progress: ProgressCallback | None,
    extra: dict[str, Any],
    meta: Mapping[str, str] | None = None,
) -> tuple[int, int, int]:
    """Write one pooling into the store in one transaction (`add_pooling`): the queries, the
    passages shown (aliases too), the pooling's record (`how`: depth, strategy, seed; `extra`
    params), its entries and the meta that makes it whole (corpus_size, and `meta`).
    Returns (new items, pool size, alias count)."""
    from workbench.store.pool import PoolingRecord

    inputs, results = pooled.inputs, pooled.results
    produced = [r for r in results if r.run is not None]
    docs_by_id = {d.doc_id: d for d in inputs.docs}
    if progress:
        progress("store", 0, len(entries))
    shown = {d for e in entries for d in (e.doc_id, *e.aliases)}
    params = {
        "corpus": str(pooled.corpus),
        "passages": None if inputs.passages is None else str(inputs.passages),
        **extra,
        "skipped": {r.name: r.reason for r in results if r.status == "skipped"},
        "runs": {r.name: str(r.path) for r in produced},
    }
    depth, strategy, seed = how
    record = PoolingRecord([r.name for r in produced], depth, strategy, seed, params)
    _, new_items = store.add_pooling(
        inputs.queries, (docs_by_id[d] for d in sorted(shown)), record, entries,
        {"corpus_size": str(len(inputs.docs)), **(meta or {})},
    )  # fmt: skip
    pool_size, alias_count = len(store.pool()), len(store.aliases())
    if progress:
        progress("store", len(entries), len(entries))
    return new_items, pool_size, alias_count
