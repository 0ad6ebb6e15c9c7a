"""`workbench assign`'s use case (and `pool --overlap`'s last step): mark a share of the pool to
be judged by two or more annotators, blind, for agreement (`workbench agree`). The choice is
`workbench.core.agreement.assign`'s; an adaptive study keeps the share and serves it as it goes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.agreement.assign import OverlapSummary
from workbench.core.errors import InputError

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation
    from workbench.store import JudgmentStore


def check_overlap(share: float, judges: int) -> None:
    """InputError naming `--overlap` or `--judges` when out of range (before any work)."""
    problems = []
    if not 0.0 <= share <= 1.0:
        problems.append(f"--overlap: {share} is not a share between 0 and 1")
    if judges < 2:
        problems.append(f"--judges: {judges}; overlap needs 2 or more")
    if problems:
        raise InputError(problems)


def mark_overlap(
    store: JudgmentStore, share: float, seed: int = 0, judges: int = 2
) -> OverlapSummary:
    """Mark the store's pool (adds only; see workbench.core.agreement.assign) and say what it holds
    now."""
    from workbench.core.agreement.assign import choose_overlap, overlap_per_query

    check_overlap(share, judges)
    from workbench.flows.study_context import is_adaptive

    if is_adaptive(store):
        from workbench.flows.adaptive import OVERLAP_META

        if judges != 2:
            raise InputError([f"--judges {judges}: on an adaptive study a passage served for "
                              "overlap goes to one more annotator (2 judges)"])  # fmt: skip
        store.set_meta(OVERLAP_META, repr(float(share)))
        return OverlapSummary(share, seed, len(store.pool()), 0, {}, adaptive=True)
    pool = store.pool()
    existing = store.required_judges()
    chosen = choose_overlap(pool, share, seed, existing, judges)
    added = store.set_required_judges(chosen) if chosen else 0
    per_query = overlap_per_query(pool, {**existing, **chosen})
    return OverlapSummary(share, seed, len(pool), added, per_query)


def assign_overlap(
    db: StoreLocation, share: float, seed: int = 0, judges: int = 2
) -> OverlapSummary:
    """`workbench assign`: mark the pool of the store at `db`; InputError when it has none."""
    from workbench.store import open_store

    check_overlap(share, judges)
    with open_store(db) as store:
        if not store.pool():
            raise InputError([f"{db}: the store has no pool yet (build one with `workbench pool`)"])
        return mark_overlap(store, share, seed, judges)
