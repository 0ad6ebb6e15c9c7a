"""The app's order of work under the adaptive policy (`policy_chooser`): which query's pick
comes next, and when a query gives way to the one that narrows the study most."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.core.adaptive.overlap import OverlapSource
from workbench.core.adaptive.policy import AdaptiveSession, QueryState
from workbench.core.adaptive.projection import has_estimate, more_to_estimate


def states(session: AdaptiveSession, query_ids: Sequence[str] | None = None) -> list[QueryState]:
    """Where every query stands (in the store's order)."""
    return [session.state(q) for q in (query_ids or list(session.queries))]


BATCH = 5
"""Picks the app serves from one query before it looks again at which query narrows the study
most (`policy_chooser`'s `ranked`): an annotator reads a query once for several passages."""


# long: its rules in the order they apply (a jump, measuring first, the plan, the store's order)
def policy_chooser(
    session: AdaptiveSession,
    query_order: Sequence[str],
    ranked: Callable[[], Sequence[str]] | None = None,
    batch: int = BATCH,
    overlap: OverlapSource | None = None,
) -> Callable[[str | None, frozenset[str], bool], tuple[str, str] | None]:
    """The app's order of work under the policy. A query the annotator goes to (`chosen`: a
    jump) keeps the queue for `batch` picks. Every query measured first: while the current
    query has no estimate it keeps the queue; while another query has none, the one the fewest
    judgments from an estimate comes next (`more_to_estimate`: what the status line forecasts),
    so the study's figure appears as early as the queue can make it. Then the current query's
    next pick, else the next query (in the store's order, wrapping) that still has one; queries
    in `skip` are passed over (another annotator holds their pick). With `ranked` (the queries
    whose judgments narrow the study interval most, first: `workbench.core.study.plan`'s
    allocation), a query that has served `batch` picks in a row gives way to the first of them
    that has a pick, so judgments go where they narrow the study's figure. With `overlap`, one
    item in its `every` is a passage someone else judged, for agreement (`OverlapSource`)."""
    order = list(query_order)
    place = {q: n for n, q in enumerate(order)}
    served = _Run()

    def first_pick(queries: Sequence[str], skip: frozenset[str]) -> tuple[str, str] | None:
        for query_id in queries:
            if query_id not in session.queries or query_id in skip:
                continue
            pick = session.next_pick(query_id)
            if pick is not None:
                return (query_id, pick.doc_id)
        return None

    def choose(
        current: str | None, skip: frozenset[str] = frozenset(), chosen: bool = False
    ) -> tuple[str, str] | None:
        start = place.get(current, 0) if current is not None else 0
        if overlap is not None:
            second = overlap.serve(current, skip, served.count)
            if second is not None:
                return second
        found = None
        if not session.vectors_built and (current is None or not _in_fair_start(session, current)):
            # A pick past a query's fair start waits for every passage to be read and indexed
            # (seconds at 100,000 x 500, in the app's thread): the fair starts come first.
            waiting = [q for q in order[start:] + order[:start] if _in_fair_start(session, q)]
            found = first_pick(waiting, skip)
        if chosen and current in session.queries:
            served.held = current  # the annotator went to this query (`g`): it keeps the queue
        if found is None and current is not None and served.held == current:
            if served.query != current or served.picks < batch:
                found = first_pick([current], skip)
        if found is None:
            found = _unmeasured_first(session, order, current, skip, first_pick)
        if (
            found is None
            and ranked is not None
            and current in session.queries
            and current is not None
            and served.query == current
            and served.picks >= batch
        ):
            found = first_pick(ranked(), skip | {current})
        for attempt in range(2):
            if found is not None:
                break
            if attempt:  # nothing left: ask again on refitted models before saying so
                session.recheck()
            found = first_pick(order[start:] + order[:start], skip)
        if found is not None and found != served.last:
            served.count += 1
            served.picks = served.picks + 1 if found[0] == served.query else 1
            served.query, served.last = found[0], found
            if found[0] != served.held:
                served.held = None
        return found

    return choose


def _unmeasured_first(
    session: AdaptiveSession,
    order: Sequence[str],
    current: str | None,
    skip: frozenset[str],
    first_pick: Callable[[Sequence[str], frozenset[str]], tuple[str, str] | None],
) -> tuple[str, str] | None:
    """The pick that brings the study's first figure nearest: the current query's while it has
    no estimate, else that of the query fewest judgments from one (ties: the store's order);
    None once every query with a pick left has an estimate."""
    if current in session.queries and current is not None and not has_estimate(session, current):
        found = first_pick([current], skip)
        if found is not None:
            return found
    waiting = [q for q in order if q in session.queries and not has_estimate(session, q)]
    if not waiting:
        return None
    place = {q: n for n, q in enumerate(order)}

    def nearest(query_id: str) -> tuple[float, int]:
        more = more_to_estimate(session, query_id, False)
        return (math.inf if more is None else more, place[query_id])

    return first_pick(sorted(waiting, key=nearest), skip)


@dataclass
class _Run:
    """The picks the chooser served from one query in a row (a pick asked for again is one)."""

    query: str | None = None
    picks: int = 0
    count: int = 0
    """The policy's picks served, all queries."""
    last: tuple[str, str] | None = None
    held: str | None = None
    """The query the annotator went to: it keeps the queue for `batch` picks (for as long as it
    has no estimate, by the measuring rule)."""


def needs_vectors(session: AdaptiveSession, query_id: str, doc_id: str) -> bool:
    """Whether the next pick after `doc_id` is graded would wait for the passages' vectors:
    they are not built and no query's fair start (which needs none, and comes first until
    they are: `policy_chooser`) has anything else left."""
    if session.vectors_built or query_id not in session.queries:
        return False
    for q in session.queries.values():
        shown = q.position.get(doc_id) if q.frame.query_id == query_id else None
        if any(i not in q.grades and i != shown for i in q.frame.fair_order):
            return False
    return True


def _in_fair_start(session: AdaptiveSession, query_id: str) -> bool:
    """Whether the query's fair start (every system's top few) is not judged yet."""
    q = session.queries.get(query_id)
    return q is not None and any(i not in q.grades for i in q.frame.fair_order)
