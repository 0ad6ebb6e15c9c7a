"""A copy of an adaptive session to read in another thread (`snapshot`): the status line's
heavier figures (a refitted state, the study's ranking) are computed on it while the session
itself goes on taking grades on the UI thread."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from workbench.core.adaptive.policy import AdaptiveSession
from workbench.core.adaptive.records import QueryRecord


def snapshot(session: AdaptiveSession) -> AdaptiveSession:
    """The session as it stands now, with judgments, draws and caches of its own (what the copy
    computes stays in it). Shared, as fixed once built: the frames, the judge's columns, the
    passage vectors and each query's text index; so each query's index must be built
    (`built`) before the copy is read in another thread, else both would build into the shared
    vectors at once."""
    twin = copy.copy(session)
    twin.queries = {query_id: _record(q) for query_id, q in session.queries.items()}
    return twin


def indexed(session: AdaptiveSession) -> bool:
    """Whether every query's text index is built (a snapshot then only reads what it shares)."""
    return session.vectors_built and all(q.built is not None for q in session.queries.values())


def _record(q: QueryRecord) -> QueryRecord:
    return replace(
        q,
        grades=dict(q.grades),
        order=list(q.order),
        rel_sims=[_copy(s) for s in q.rel_sims],
        rel_cols=dict(q.rel_cols),
        non_sims=[_copy(s) for s in q.non_sims],
        non_cols=dict(q.non_cols),
        draws=list(q.draws),
        rests=dict(q.rests),
        kinds=dict(q.kinds),
    )


def _copy(similarities: Any) -> Any:
    """A judged passage's cosines, or what stands for them until the vectors are built (a
    passage's index or None: `AdaptiveSession.record`)."""
    if similarities is None or isinstance(similarities, int):
        return similarities
    return similarities.copy()
