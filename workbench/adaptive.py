"""The adaptive queue over a judgments store: rebuild the policy's state from what the store
holds (the frames `pool --policy adaptive` stored, the grades that count, the recorded draws),
and save what a walk judged. Shared by `workbench simulate`, `workbench coverage`, the app
and the benchmark, so all of them decide and estimate the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workbench.core.adaptive import (
    CANDIDATE,
    RESERVE,
    AdaptiveSession,
    Draw,
    PolicyConfig,
    QueryState,
    Step,
    frame_from_entries,
    walk,
)
from workbench.core.model import Judgment, PoolEntry, Role
from workbench.core.tokenize import tokenize
from workbench.store.base import JudgmentStore


def is_adaptive(store: JudgmentStore) -> bool:
    """Whether the store was pooled for the adaptive queue."""
    return store.get_meta("policy") == "adaptive"


def session_from_store(
    store: JudgmentStore,
    config: PolicyConfig | None = None,
    annotator: str | None = None,
    rel_threshold: int = 1,
) -> AdaptiveSession:
    """The policy's state now: frames from the pool, the grades that count (one annotator's
    when named, else the project's resolution rule) in the order they were given, the draws."""
    from workbench.core.coverage import grades_counted

    by_query: dict[str, list[PoolEntry]] = {}
    for entry in store.pool():
        if entry.stratum in (CANDIDATE, RESERVE):
            by_query.setdefault(entry.query_id, []).append(entry)
    queries = [q for q in store.queries() if q.query_id in by_query]
    frames = [frame_from_entries(q.query_id, by_query[q.query_id]) for q in queries]
    wanted = {d for f in frames for d in f.doc_ids}
    docs = store.docs(wanted)
    tokens = {d: tokenize(f"{doc.title} {doc.text}") for d, doc in docs.items()}
    query_tokens = {q.query_id: tokenize(q.text) for q in queries}
    session = AdaptiveSession(
        frames, tokens, query_tokens, store.corpus_size(), config or PolicyConfig()
    )
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
    for draw in store.draws():
        session.restore_draw(draw)
    session.refit()
    return session


def walk_and_save(
    store: JudgmentStore,
    session: AdaptiveSession,
    answer: Callable[[str, str], int],
    annotator: str,
    per_query: int,
    role: Role = Role.ORACLE,
    rel_threshold: int = 1,
) -> list[Step]:
    """Judge with `answer` by the policy and save the grades and the new draws (one commit
    each), as the app would have saved them one by one."""
    import time

    restored = {id(q.pending) for q in session.queries.values() if q.pending is not None}
    steps = walk(session, answer, per_query, rel_threshold)
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
        )
        for s in steps
    )
    return steps


def states(session: AdaptiveSession, query_ids: Sequence[str] | None = None) -> list[QueryState]:
    """Where every query stands (in the store's order)."""
    return [session.state(q) for q in (query_ids or list(session.queries))]
