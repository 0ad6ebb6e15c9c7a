"""What is checked and read before the judging app opens on a store (`workbench judge`,
`demo`, `serve`): the store holds a pool, the name judges in one role only, and, to
adjudicate, the disputes in pool order. The app itself starts in `workbench.tui`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.model import Role

if TYPE_CHECKING:
    from workbench.core.agreement.adjudication import Dispute
    from workbench.store import JudgmentStore


@dataclass(frozen=True)
class AppEntry:
    """The app may open: on the queue (`disputes` None) or on these disputes."""

    disputes: list[Dispute] | None = None
    settled: int = 0
    """With no dispute left: the pairs already adjudicated."""


def app_entry(
    store: JudgmentStore, db: object, annotator: str, adjudicate: bool = False
) -> AppEntry:
    """The checks before the app opens on the store at `db`, InputError naming the problem (no
    pool, the name holds another role's judgments); the pool itself is read on the app's store
    thread while the app starts (a second at 100,000 x 500, adaptive), not here."""
    from workbench.flows.annotator_roles import check_role

    if not store.has_pool():
        raise InputError([f"{db}: the store has no pool yet (build one with `workbench pool`)"])
    if not adjudicate:
        check_role(store, annotator, Role.HUMAN)
        return AppEntry()
    from workbench.core.agreement.adjudication import disputes as find_disputes

    check_role(store, annotator, Role.ADJUDICATOR)
    order = {(e.query_id, e.doc_id): i for i, e in enumerate(store.pool())}
    history = store.judgments()
    found = find_disputes(history, order)
    settled = 0 if found else len(find_disputes(history, order, include_settled=True))
    return AppEntry(found, settled)
