"""What the store already holds decides what a pooling may do: its policy (an adaptive store
takes no second pooling; a static one takes more systems, statically), how a text folder was
cut, and an interrupted pooling the next one replaces. Read before any system runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from workbench.core.errors import InputError
from workbench.core.store_url import StoreLocation
from workbench.formats.passages import PassageRule

if TYPE_CHECKING:
    from workbench.store.base import JudgmentStore

T = TypeVar("T")

POLICIES = ("adaptive", "static")
"""How the queue is served: `adaptive` (workbench.core.adaptive: the queue learns from every
grade, draws recorded samples, stops a certified query) or `static` (the depth-k pool in its
order plus a fixed stratified sample)."""
CANDIDATE_DEPTHS = (10, 1000)  # at most SAMPLE_RANK_DEPTH, which an adaptive pool searches
"""The adaptive frame's candidates go at least 10 deep (its fair start alone takes each
system's top 5) and at most 1,000 (the deepest rank band of the reserve; deeper, every system
would search and write its run that deep, and the rest would hold nothing ranked)."""


def candidate_depth_problems(policy: str, candidate_depth: int | None) -> list[str]:
    """What is wrong with `--candidate-depth` for this policy (said before any input is read)."""
    if candidate_depth is None:
        return []
    if policy == "static":
        return ["--candidate-depth: the adaptive queue's; a static pool has --depth"]
    low, high = CANDIDATE_DEPTHS
    if not low <= candidate_depth <= high:
        return [f"--candidate-depth: must be from {low} to {high}, not {candidate_depth}"]
    return []


def replacing_note(store: JudgmentStore, db_path: StoreLocation) -> list[str]:
    """Said when the store holds a pooling an earlier version left interrupted, which the
    pooling about to be written replaces (`PoolTables.add_pooling`)."""
    interrupted = store.interrupted_pooling()
    if interrupted is None:
        return []
    from workbench.store.claim import local_time

    when = local_time(interrupted["created_at"])
    return [f"{db_path}: its pooling of {when} had been interrupted before it was complete: "
            "this pooling replaces it"]  # fmt: skip


def pooled_policy(db: str | os.PathLike[str]) -> str | None:
    """The policy of the pool the store at `db` already holds; None when there is no store
    there yet, or no pool in it. A store that cannot be opened (unreachable, not a store) is
    an error now, before any system runs."""
    return _read_existing(db, policy_of)


def corpus_passages(
    db: StoreLocation, corpus: str | os.PathLike[str], asked: PassageRule | None
) -> PassageRule | None:
    """How to cut the text folder `corpus` into passages (`formats.passages.chosen_rule`): as
    the store's earlier poolings did, else `asked`, else the default; None for a JSONL corpus."""
    from workbench.formats.passages import chosen_rule, recorded_rule

    def recorded(store: JudgmentStore) -> PassageRule | None:
        return recorded_rule(store.poolings(), str(store.location))

    folder = Path(corpus).is_dir()
    return chosen_rule(corpus, asked, _read_existing(db, recorded) if folder else None, db)


def _read_existing(db: str | os.PathLike[str], read: Callable[[JudgmentStore], T]) -> T | None:
    """`read` of the store at `db`; None when there is no store there yet. A store that cannot
    be opened (unreachable, not a store) is an error now, before any system runs."""
    location = StoreLocation(db)
    if not location.is_url and not Path(location).exists():
        return None
    from workbench.store import open_store

    try:
        store = open_store(location, pooling=True)
    except InputError as exc:
        from workbench.store.postgres import NoStore

        if isinstance(exc, NoStore):  # an empty database: pool creates the store in it
            return None
        raise
    with store:
        return read(store)


def policy_of(store: JudgmentStore) -> str | None:
    """The policy of the pool the store holds (stores from before policies were recorded are
    static); None when it holds none, or only an interrupted pooling, which the next pooling
    replaces."""
    if not store.poolings() or store.interrupted_pooling() is not None:
        return None
    from workbench.flows.study_context import POLICY_KEY

    return store.get_meta(POLICY_KEY) or "static"


def pooling_refusal(db: object, existing: str | None, policy: str) -> str | None:
    """Why a pooling by `policy` cannot go into a store whose pool is `existing` (None: it can).
    An adaptive store's frames are drawn once over every system; a static pool takes more
    systems, but by the static policy only."""
    if existing == "adaptive":
        return (
            f"{db}: already pooled for the adaptive queue, whose frames are drawn once over every "
            "system: pool into a new store, giving every system at once (--systems and repeated "
            "--run), or with --policy static to add systems to it later"
        )
    if existing == "static" and policy == "adaptive":
        return (
            f"{db}: already holds a static pool; the adaptive policy pools into a new store "
            "(leave out --policy to add systems to this one)"
        )
    return None
