"""The judging screen's work done while the annotator reads (the adaptive queue only), kept
off the grade key's path: the status line's word on the query brought up to date, the study's
ranking of the queries refreshed when due, then a warm-up that computes, once, each query's
passage vectors and relevance model. Each is a short step on a timer, so a key typed meanwhile
is handled before the next. A part of `judging.JudgingScreen`, whose state it reads."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from workbench.core.adaptive.snapshot import indexed, snapshot
from workbench.core.adaptive.text import text_index
from workbench.core.coverage.to_go import to_go

PENDING_GOAL = "…"
"""The adaptive queue's word on a query before it is first worked out."""


class JudgingCatchUp:
    """The judging screen's catch-up (mixed into `judging.JudgingScreen`)."""

    def _query_goal(self, query_id: str) -> str | None:
        """The adaptive queue's word on the query (None for a static queue), as last computed:
        its refitted state takes tens of ms, so it is brought up to date by `_catch_up`, after
        the next passage is on screen."""
        if self.session is None or query_id not in self.session.queries:
            return None
        cached = self._goals.get(query_id)
        # not worked out yet (at 100,000 x 500 its indexes take seconds to build): the adaptive
        # line says so, rather than falling back to the static queue's frame totals (1/199764)
        return cached[1] if cached is not None else PENDING_GOAL

    def _fresh_goal(self, query_id: str) -> str | None:
        return to_go(self.session.refitted_state(query_id), adaptive=True).words

    def _record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        """A grade that counts, into the queue's state; the refit it makes due (every
        `refit_every` grades) waits for the catch-up, after the next passage is drawn (its
        pick, and the draw probabilities recorded with it, are of the model before it)."""
        self.session.record(query_id, doc_id, relevant, refit=False)
        self._unfitted += 1

    def _refit(self) -> None:
        self._unfitted = 0
        self.session.refit()

    # -- work done while the annotator reads --------------------------------------------------

    CATCH_UP_S = 0.01
    """The catch-up starts this long after the frame that shows a passage..."""
    STEP_GAP_S = 0.005
    """...and leaves this long between two steps (each a few ms, the word on the query tens):
    a key typed meanwhile is handled before the next step."""

    def _pause_catch_up(self) -> None:
        if self._catching_up is not None:
            self._catching_up.stop()
            self._catching_up = None

    def _schedule_catch_up(self, delay: float | None = None) -> None:
        """The next catch-up step after `delay` (CATCH_UP_S by default), replacing a step
        already waiting."""
        self._pause_catch_up()
        wait = self.CATCH_UP_S if delay is None else delay
        self._catching_up = self.set_timer(wait, self._catch_up)

    def _catch_up(self) -> None:
        """One step of the adaptive queue's work kept off the grade key's path, while the
        annotator reads: the status line's word on the query on screen, then the study's
        ranking of the queries when it is due (so the next choice finds it made), then one
        query's relevance model computed once (its similarity index built). Steps go on,
        one per timer, until nothing is left; a grade starts them again."""
        self._catching_up = None
        if self.session is None or not self.is_mounted:
            return
        step = self._next_step()
        if step is None:
            return
        step()
        self._schedule_catch_up(self.STEP_GAP_S)

    BUILD_AFTER_S = 0.1
    """The passages' vectors are built in a thread this long after the first passage reached
    the terminal (so that its drawing does not share the CPU with them)."""

    def _build_when_painted(self) -> None:
        if not self.is_mounted:
            return
        if self._painted():
            build = partial(self._build_indexes, self.session.vector_source)
            self.set_timer(self.BUILD_AFTER_S, build)
        else:
            self.set_timer(0.02, self._build_when_painted)

    def _build_indexes(self, source: Any) -> None:
        """In a thread: the passages' vectors (read, tokenized, the document frequencies; a
        grade's path that needs them first waits for them), then every query's text index from
        vectors of the thread's own (`VectorSource.fresh`), taken in by `_indexes_built`: the
        first seconds of the queue's work, kept off the launch and the UI thread."""
        queries = list(self.session.queries.values())
        self._indexing = True

        def build() -> None:
            interval = sys.getswitchinterval()
            sys.setswitchinterval(min(interval, SWITCH_S))  # the UI thread gets a turn soon
            # Its objects all live on: the collector's passes over them (hundreds of ms each
            # at 100,000 passages) would only slow it, and the UI thread. Frozen once built.
            collecting = gc.isenabled()
            gc.disable()
            indexes: dict[str, Any] | None = None
            try:
                source()
                own = source.fresh()
                indexes = {
                    q.frame.query_id: text_index(q.frame.doc_ids, q.words, own)
                    for q in queries
                    if q.built is None
                }
            except Exception:  # built on first use then, on the UI thread (the old way)
                pass
            finally:
                sys.setswitchinterval(interval)
                if collecting:
                    gc.freeze()  # before the collector's first pass over them
                    gc.enable()
            try:
                self.app.call_from_thread(self._indexes_built, indexes)
            except RuntimeError:  # the app closed meanwhile
                pass

        self.run_worker(build, thread=True, group="vectors", exit_on_error=False)

    def _indexes_built(self, indexes: dict[str, Any] | None) -> None:
        self._indexing = False
        if not self.is_mounted:
            return
        if indexes is None:  # the thread failed: the UI thread computes what it needs
            self._threads = False
            self._schedule_catch_up()
            return
        self.session.vectors  # noqa: B018 (taken from the source into the session, built)
        for query_id, built in indexes.items():
            record = self.session.queries[query_id]
            if record.built is None:  # else built meanwhile, for a grade's path
                record.built = built
        # What the queue holds now lives as long as the app: the collector's full passes,
        # tens of ms each over it, would fall on a grade's path.
        gc.freeze()
        self._schedule_catch_up()

    def _next_step(self, peek: bool = False) -> Callable[[], None] | None:
        """The catch-up's next step; with `peek`, only those the status line waits for."""
        session = self.session
        if not session.vectors_built:
            return None  # each step needs them: `_indexes_built` starts the catch-up
        if self._unfitted >= session.config.refit_every:
            return self._refit
        if self._figuring or self._indexing:  # a thread computes them, or the indexes they
            return _waiting if peek else None  # need (at 500 queries, 100 ms and more here)
        key = self._shown_key
        judged = sum(session.judged(q) for q in session.queries)
        goal = None
        if key is not None and key[0] in session.queries:
            cached = self._goals.get(key[0])
            if cached is None or cached[0] != judged:
                goal = key[0]
        rank = self.ranking is not None and self.ranking.due()
        if (goal is not None or rank) and self._threads and indexed(session):
            return partial(self._figure_in_thread, goal, judged, rank)
        if goal is not None:
            return partial(self._update_goal, goal, judged)
        if rank and not self._threads:
            return self._update_ranking
        if peek:  # a ranking due waits for the warm-up (built in one step, a second or more)
            return _waiting if rank else None
        step = next(self._warm, None)
        if step is None and not self._warmed:
            self._warmed = True
            gc.freeze()  # as in `_indexes_built`: the warm-up's vectors and indexes
        return step

    def _figure_in_thread(self, query_id: str | None, judged: int, rank: bool) -> None:
        """The word on the query and the study's ranking (tens to hundreds of ms at 500
        queries) computed in a thread, on a snapshot of the queue's state taken now, so a key
        typed meanwhile is handled at once; `_figured` takes them in."""
        twin = snapshot(self.session)
        ranking = self.ranking if rank else None
        self._figuring = True

        def figure() -> None:
            words: str | None = None
            plan: Any = None
            failed = False
            interval = sys.getswitchinterval()
            sys.setswitchinterval(min(interval, SWITCH_S))  # the UI thread gets a turn soon
            try:
                if query_id is not None:
                    words = to_go(twin.refitted_state(query_id), adaptive=True).words
                if ranking is not None:
                    plan = ranking.compute(twin)
            except Exception:  # computed on the UI thread from now on (the old way)
                failed = True
            finally:
                sys.setswitchinterval(interval)
            try:
                self.app.call_from_thread(self._figured, query_id, judged, words, plan, failed)
            except RuntimeError:  # the app closed meanwhile
                pass

        self.run_worker(figure, thread=True, group="figures", exit_on_error=False)

    def _figured(
        self, query_id: str | None, judged: int, words: str | None, plan: Any, failed: bool
    ) -> None:
        self._figuring = False
        if failed:
            self._threads = False
        else:
            shown = self._shown_query or ""
            before = (self._goals.get(shown), self.ranking.words(shown) if self.ranking else None)
            if query_id is not None:
                self._goals[query_id] = (judged, words)
            if plan is not None:
                self.ranking.take(*plan)
            after = (self._goals.get(shown), self.ranking.words(shown) if self.ranking else None)
            if before != after:
                self._redraw_status()
        if self.is_mounted:
            self._schedule_catch_up(self.STEP_GAP_S)

    def _update_goal(self, query_id: str, judged: int) -> None:
        before = self._goals.get(query_id)
        words = self._fresh_goal(query_id)
        self._goals[query_id] = (judged, words)
        if before is None or before[1] != words:
            self._redraw_status()

    def _update_ranking(self) -> None:
        assert self.ranking is not None
        before = self.ranking.words(self._shown_query or "")
        self.ranking.refresh()
        if self.ranking.words(self._shown_query or "") != before:
            self._redraw_status()

    def _redraw_status(self) -> None:
        key = self._shown_key
        if key is not None and self.judging.current is not None:
            self._show_status(key, self.judging.grade_of(key))

    def _status_behind(self) -> bool:
        if self.session is None or not self.loaded:
            return False
        if not self.session.vectors_built:
            return True
        step = self._next_step(peek=True)
        return step is not None


SWITCH_S = 0.001
"""The interpreter's switch interval while a thread computes the status line's figures (5 ms
by default: a key's handling would wait that long for each turn it takes)."""


def _waiting() -> None:
    """The step `_next_step` names while a thread computes (the status line waits for it)."""


WARM_STEP = 32
"""Passage vectors computed in one step of the warm-up (a few ms)."""


def warm_up(session: Any, query_ids: Sequence[str]) -> Iterator[Callable[[], object]]:
    """Steps that compute, once, what the adaptive queue otherwise computes on first use: each
    query's passage vectors, then its relevance model (the frame's similarity index)."""
    for query_id in query_ids:
        if query_id not in session.queries:
            continue
        record = session.queries[query_id]
        doc_ids = list(record.frame.doc_ids)
        for start in range(0, len(doc_ids), WARM_STEP):
            if record.built is not None:  # asked as each step is (a thread may have built it)
                break
            chunk = doc_ids[start : start + WARM_STEP]
            yield partial(_vectors, session.vectors, chunk)
        yield partial(session.probabilities, query_id)


def _vectors(vectors: Any, doc_ids: list[str]) -> None:
    for doc_id in doc_ids:
        vectors.of(doc_id)
