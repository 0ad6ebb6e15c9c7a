"""The adaptive queue over a judgments store: rebuild the policy's state from what the store
holds (the frames `pool --policy adaptive` stored, the grades that count, the recorded draws),
and save what a walk judged. Shared by `workbench simulate`, coverage (so every command that
reports it), the app and the benchmark, so all of them decide and estimate the same way. Reads
and writes through `AdaptiveStore`, the part of the store protocol it needs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from workbench.core.adaptive.estimate import Draw
from workbench.core.adaptive.frame import (
    CANDIDATE,
    CANDIDATE_DEPTH,
    RESERVE,
    frame_from_entries,
)
from workbench.core.adaptive.policy import AdaptiveSession, PolicyConfig, QueryState
from workbench.core.adaptive.walk import Step, walk
from workbench.core.model import Doc, Judgment, PoolEntry, Query, Role
from workbench.core.tokenize import tokenize


class AdaptiveStore(Protocol):
    """What the adaptive queue reads from and writes to a judgments store."""

    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def pool(self) -> Sequence[PoolEntry]: ...
    def queries(self) -> Sequence[Query]: ...
    def docs(self, doc_ids: Iterable[str]) -> dict[str, Doc]: ...
    def corpus_size(self) -> int: ...
    def current_judgments(self, annotator: str | None = None) -> Sequence[Judgment]: ...
    def draws(self, annotator: str | None = None) -> list[Draw]: ...
    def poolings(self) -> list[dict]: ...


def is_adaptive(store: AdaptiveStore) -> bool:
    """Whether the store was pooled for the adaptive queue."""
    return store.get_meta("policy") == "adaptive"


def session_from_store(
    store: AdaptiveStore,
    config: PolicyConfig | None = None,
    annotator: str | None = None,
    rel_threshold: int = 1,
    *,
    pool: Sequence[PoolEntry] | None = None,
    current: Sequence[Judgment] | None = None,
) -> AdaptiveSession:
    """The policy's state now: frames from the pool, the grades that count (one annotator's
    when named, else the project's resolution rule) in the order they were given, the draws
    (that annotator's when named: another's rest on grades this session does not hold).
    Without `config`, the defaults with the pooling's seed. `pool` and `current` (the store's
    pool and `current_judgments(annotator)`) save reading them again when the caller has."""
    from workbench.core.coverage import grades_counted

    by_query: dict[str, list[PoolEntry]] = {}
    for entry in store.pool() if pool is None else pool:
        if entry.stratum == CANDIDATE or entry.stratum.startswith(RESERVE):
            by_query.setdefault(entry.query_id, []).append(entry)
    queries = [q for q in store.queries() if q.query_id in by_query]
    systems = sorted(
        {p.system for entries in by_query.values() for e in entries for p in e.provenance}
    )
    poolings = store.poolings()
    depth = int(poolings[-1]["depth"] or CANDIDATE_DEPTH) if poolings else CANDIDATE_DEPTH
    frames = [frame_from_entries(q.query_id, by_query[q.query_id], systems, depth) for q in queries]
    wanted = {d for f in frames for d in f.doc_ids}
    docs = store.docs(wanted)
    tokens = {d: tokenize(f"{doc.title} {doc.text}") for d, doc in docs.items()}
    query_tokens = {q.query_id: tokenize(q.text) for q in queries}
    if config is None:
        config = PolicyConfig(seed=int(poolings[-1]["seed"] or 0) if poolings else 0)
    session = AdaptiveSession(frames, tokens, query_tokens, store.corpus_size(), config)
    if current is None:
        current = store.current_judgments(annotator)
    counted = grades_counted(current, annotator)
    done: set[tuple[str, str]] = set()
    for j in current:
        key = (j.query_id, j.doc_id)
        grade = counted.get(j.query_id, {}).get(j.doc_id)
        if grade is None or key in done:
            continue
        done.add(key)
        session.record(j.query_id, j.doc_id, grade >= rel_threshold, refit=False)
    for draw in store.draws(annotator):  # one annotator's grades: that annotator's draws
        session.restore_draw(draw)
    session.refit()
    return session


class WritableStore(AdaptiveStore, Protocol):
    def add_annotator(self, name: str, role: str = ...) -> None: ...
    def add_draws(self, draws: Iterable[Draw], annotator: str = ...) -> int: ...
    def add_judgments(
        self, judgments: Iterable[Judgment], meta: dict[str, str] | None = None
    ) -> int: ...


def walk_and_save(
    store: WritableStore,
    session: AdaptiveSession,
    answer: Callable[[str, str], int],
    annotator: str,
    per_query: int,
    role: Role = Role.ORACLE,
    rel_threshold: int = 1,
    judge_version: str = "",
    budget: int | None = None,
) -> list[Step]:
    """Judge with `answer` by the policy (at most `budget` judgments in all) and save the grades
    (carrying `judge_version`, a recorded one) and the new draws (one commit each), as the app
    would have saved them one by one."""
    restored = {id(q.pending) for q in session.queries.values() if q.pending is not None}
    steps = walk(session, answer, per_query, rel_threshold, budget=budget)
    save_steps(store, steps, annotator, role, judge_version, restored)
    return steps


def save_steps(
    store: WritableStore,
    steps: Sequence[Step],
    annotator: str,
    role: Role = Role.ORACLE,
    judge_version: str = "",
    restored: set[int] | frozenset[int] = frozenset(),
) -> None:
    """Save a walk's grades and its new draws (`restored`: ids of draws the session held from
    the store before the walk, not saved again), as the app would have saved them."""
    import time

    now = time.time()
    store.add_annotator(annotator, role)
    draws: list[Draw] = [
        s.pick.draw for s in steps if s.pick.draw is not None and id(s.pick.draw) not in restored
    ]
    store.add_draws(draws, annotator)
    store.add_judgments(
        Judgment(
            annotator=annotator,
            query_id=s.pick.query_id,
            doc_id=s.pick.doc_id,
            grade=s.grade,
            shown_at=now,
            graded_at=now,
            role=role,
            judge_version=judge_version,
        )
        for s in steps
    )


def states(session: AdaptiveSession, query_ids: Sequence[str] | None = None) -> list[QueryState]:
    """Where every query stands (in the store's order)."""
    return [session.state(q) for q in (query_ids or list(session.queries))]


BATCH = 5
"""Picks the app serves from one query before it looks again at which query narrows the study
most (`policy_chooser`'s `ranked`): an annotator reads a query once for several passages."""


def policy_chooser(
    session: AdaptiveSession,
    query_order: Sequence[str],
    ranked: Callable[[], Sequence[str]] | None = None,
    batch: int = BATCH,
) -> Callable[[str | None, frozenset[str]], tuple[str, str] | None]:
    """The app's order of work under the policy: the current query's next pick, else the next
    query (in the store's order, wrapping) that still has one; queries in `skip` are passed
    over (another annotator holds their pick). With `ranked` (the queries whose judgments
    narrow the study interval most, first: `workbench.core.study.plan`'s allocation), a query
    that has served `batch` picks in a row, its own fair start done, gives way to the first
    query still in its fair start, else to the first of them that has a pick, so judgments go
    where they narrow the study's figure."""
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

    def choose(current: str | None, skip: frozenset[str] = frozenset()) -> tuple[str, str] | None:
        start = place.get(current, 0) if current is not None else 0
        found = None
        if (
            ranked is not None
            and current in session.queries
            and current is not None
            and served.query == current
            and served.picks >= batch
            and not _in_fair_start(session, current)
        ):
            unfair = [q for q in order if q in session.queries and _in_fair_start(session, q)]
            found = first_pick([*unfair, *ranked()], skip | {current})
        for attempt in range(2):
            if found is not None:
                break
            if attempt:  # nothing left: ask again on refitted models before saying so
                session.recheck()
            found = first_pick(order[start:] + order[:start], skip)
        if found is not None and found != served.last:
            served.picks = served.picks + 1 if found[0] == served.query else 1
            served.query, served.last = found[0], found
        return found

    return choose


@dataclass
class _Run:
    """The picks the chooser served from one query in a row (a pick asked for again is one)."""

    query: str | None = None
    picks: int = 0
    last: tuple[str, str] | None = None


def _in_fair_start(session: AdaptiveSession, query_id: str) -> bool:
    """Whether the query's fair start (every system's top few) is not judged yet."""
    q = session.queries[query_id]
    return any(i not in q.grades for i in q.frame.fair_order)
