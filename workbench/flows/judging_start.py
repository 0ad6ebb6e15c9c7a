"""The app's start as a use case, run on the store thread (`tui.writer.ReadRequest`): the
judging queue as one annotator sees it, with the adaptive queue's session, the study's ranking
and the chooser when the store was pooled for it; the adjudication worklist's context; passages
read ahead of the cursor. The screens only draw what comes back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.collector import gc_paused
from workbench.core.model import Doc, PoolEntry, Query
from workbench.core.pool.queue import JudgingQueue
from workbench.flows.design import sample_first
from workbench.store import JudgmentStore, StoreUnavailable

if TYPE_CHECKING:
    from workbench.core.adaptive import AdaptiveSession
    from workbench.core.study.target import StudyRanking


@dataclass(frozen=True)
class Passages:
    """Passages read for `asked` doc ids; an id absent from `found` is missing from the store,
    or could not be read when `error` says why."""

    asked: tuple[str, ...]
    found: dict[str, Doc]
    error: str = ""


def read_passages(store: JudgmentStore, doc_ids: Sequence[str]) -> Passages:
    """A passage that cannot be read is said in its place; only an unreachable server raises
    (the store thread reads again once it is back: the passage is not unreadable)."""
    try:
        return Passages(tuple(doc_ids), store.docs(doc_ids))
    except StoreUnavailable:
        raise
    except Exception as exc:
        return Passages(tuple(doc_ids), {}, f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Start:
    """What a screen needs before it shows anything: the queries, the grade scale and the
    passages of the first items; `queue` for the judging screen (None when adjudicating)."""

    queries: dict[str, Query]
    scale: dict[int, str]
    passages: Passages
    queue: JudgingQueue | None = None
    session: AdaptiveSession | None = None
    """The adaptive queue's state when the store was pooled for it; None for a static queue."""
    ranking: StudyRanking | None = None
    """The study's ranking of the queries (core.study.target.StudyRanking) the adaptive
    queue's chooser follows; its latest plan is what the status line says of the study."""


@gc_paused(keep=True)
def start_judging(
    store: JudgmentStore,
    annotator: str,
    rel_threshold: int,
    pool: list[PoolEntry] | None,
    follow: Callable[[str, int], None],
    prefetch: int,
) -> Start:
    """The shared queue as this annotator sees it now; `follow` then reports every row written
    after this look (so none is missed, and one seen twice changes nothing). What it builds
    lives as long as the app: built with the collector paused, then frozen (half the time of
    this read at 100,000 x 500, adaptive; the app unfreezes it on closing)."""
    follow(annotator, store.last_judgment_id())
    pool = pool if pool is not None else store.pool()
    pool = sample_first(store, pool)  # the human sample (draw-sample) is judged first
    current = store.current_judgments()
    queue = JudgingQueue.from_judgments(
        pool,
        current,
        rel_threshold,
        annotator=annotator,
        required=store.required_judges(),
        claims=store.claims(),
    )
    session = ranked = None
    from workbench.flows.study_context import is_adaptive

    if is_adaptive(store):
        from workbench.core.adaptive.chooser import policy_chooser
        from workbench.core.adaptive.overlap import OverlapSource
        from workbench.core.study.target import StudyRanking
        from workbench.flows.adaptive import session_from_store, stored_overlap, stored_target

        session = session_from_store(
            store, rel_threshold=rel_threshold, pool=pool, current=current, lazy_vectors=True
        )  # its passages' vectors built once the first passage is shown (JudgingScreen)
        # Computed again while the annotator reads (JudgingScreen._catch_up), not on the path
        # of the grade that makes it due.
        ranked = StudyRanking(session, pool, stored_target(store), lag=REFRESH_LAG)
        share = stored_overlap(store)  # one passage in 1/share another annotator judged
        second = OverlapSource(queue, share) if share else None
        queue.use_policy(policy_chooser(session, queue.query_ids(), ranked, overlap=second))
    return Start(
        {q.query_id: q for q in store.queries()},
        store.grade_scale(),
        read_passages(store, upcoming(queue, prefetch)),
        queue,
        session,
        ranked,
    )


def start_adjudicating(store: JudgmentStore, doc_ids: Sequence[str]) -> Start:
    """The queries, the scale and the passages of the first disagreements."""
    return Start(
        {q.query_id: q for q in store.queries()},
        store.grade_scale(),
        read_passages(store, doc_ids),
    )


REFRESH_LAG = 25
"""Judgments the study's ranking may fall behind before the chooser computes it on a grade's
path (the screen computes it after each `REFRESH`, between grades)."""

SCAN_LIMIT = 32
"""`upcoming` looks at most this many items per passage wanted, so a queue whose open items
are few and far apart costs a bounded scan (a miss is read when shown)."""


def upcoming(queue: JudgingQueue, count: int) -> list[str]:
    """Doc ids the annotator may see next, current first: the visible items on either side (k
    and j), the last graded one (u), then the next `count` open items in queue order (wrapping,
    as `advance` goes)."""
    size = len(queue)
    if not size:
        return []
    cursor, limit = queue.cursor, count * SCAN_LIMIT
    ids = [queue.key_at(cursor)[1]]
    for step in (-1, 1):
        index = cursor + step
        while 0 <= index < size and abs(index - cursor) < limit:
            if queue.is_visible(queue.key_at(index)):
                ids.append(queue.key_at(index)[1])
                break
            index += step
    last = queue.last_graded()  # what u goes back to
    if last is not None:
        ids.append(last[1])
    found = 0
    for offset in range(1, min(size, limit)):
        key = queue.key_at((cursor + offset) % size)
        if queue.is_open(key):
            ids.append(key[1])
            found += 1
            if found == count:
                break
    return list(dict.fromkeys(ids))


def jump_targets(queue: JudgingQueue) -> list[str]:
    """The doc id a jump to each query would show (`JudgingQueue.jump_to_query`: its first open
    item, else its first own one), so the passages are read while the picker is open. One pass;
    a query is looked at no further once its first open item is found."""
    open_first: dict[str, str] = {}
    own_first: dict[str, str] = {}
    for index in range(len(queue)):
        query_id, doc_id = key = queue.key_at(index)
        if query_id in open_first:
            continue
        if queue.is_open(key):
            open_first[query_id] = doc_id
        elif query_id not in own_first and queue.grade_of(key) is not None:
            own_first[query_id] = doc_id
    targets = {**own_first, **open_first}
    return list(dict.fromkeys(targets[q] for q in queue.query_ids() if q in targets))
