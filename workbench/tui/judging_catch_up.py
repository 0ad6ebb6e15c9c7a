"""The judging screen's work done while the annotator reads (the adaptive queue only), kept
off the grade key's path: the status line's word on the query brought up to date, the study's
ranking of the queries refreshed when due, then a warm-up that computes, once, each query's
passage vectors and relevance model. Each is a short step on a timer, so a key typed meanwhile
is handled before the next. Its state is its own; the queue's is the session's
(`flows.judging_session.JudgingSession`: the goals, the grades not refitted yet)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.timer import Timer

from workbench.core.adaptive.snapshot import indexed, snapshot
from workbench.core.adaptive.text import text_index
from workbench.core.coverage.to_go import to_go

if TYPE_CHECKING:
    from workbench.core.adaptive import AdaptiveSession
    from workbench.core.study.target import Plan
    from workbench.flows.judging_session import JudgingSession
    from workbench.tui.grading import GradingScreen

    class JudgingHost(GradingScreen):
        """What the catch-up reads of the judging screen (`tui.judging.JudgingScreen`)."""

        session: JudgingSession
        _shown_query: str | None

        def show_status(self) -> None: ...


class CatchUp:
    """The judging screen's catch-up: steps on the screen's timers, figures in its threads."""

    CATCH_UP_S = 0.01
    """The catch-up starts this long after the frame that shows a passage..."""
    STEP_GAP_S = 0.005
    """...and leaves this long between two steps (each a few ms, the word on the query tens):
    a key typed meanwhile is handled before the next step."""
    BUILD_AFTER_S = 0.1
    """The passages' vectors are built in a thread this long after the first passage reached
    the terminal (so that its drawing does not share the CPU with them)."""

    def __init__(self, screen: JudgingHost) -> None:
        self.screen = screen
        self.session = screen.session
        self._warm: Iterator[Callable[[], object]] = iter(())
        """The last steps: each query's passage vectors, a few dozen a step, then its relevance
        model, computed once (built on first use otherwise: on a grade's path)."""
        self._timer: Timer | None = None
        self._figuring = False
        """A thread computes the status line's figures (`_figure_in_thread`)."""
        self._threads = True
        """Whether they are computed in a thread (False once one failed there)."""
        self._indexing = False
        """A thread builds the queries' text indexes (`_build_indexes`)."""
        self._warmed = False
        """Whether the warm-up is done (`_next_step`)."""

    @property
    def adaptive(self) -> AdaptiveSession | None:
        return self.session.adaptive

    def started(self) -> None:
        """The start read is taken in: the warm-up's steps for its queries."""
        if self.adaptive is not None:
            self._warm = warm_up(self.adaptive, self.session.queue.query_ids())

    def after_show(self) -> None:
        """A passage was shown: the next steps after the frame that shows it."""
        if self.adaptive is not None:
            self._pause()
            self.screen.call_after_refresh(self._schedule)

    def _pause(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _schedule(self, delay: float | None = None) -> None:
        """The next step after `delay` (CATCH_UP_S by default), replacing a step waiting."""
        self._pause()
        wait = self.CATCH_UP_S if delay is None else delay
        self._timer = self.screen.set_timer(wait, self._step)

    def _step(self) -> None:
        """One step of the adaptive queue's work kept off the grade key's path, while the
        annotator reads: the status line's word on the query on screen, then the study's
        ranking of the queries when it is due (so the next choice finds it made), then one
        query's relevance model computed once (its similarity index built). Steps go on,
        one per timer, until nothing is left; a grade starts them again."""
        self._timer = None
        if self.adaptive is None or not self.screen.is_mounted:
            return
        step = self._next_step()
        if step is None:
            return
        step()
        self._schedule(self.STEP_GAP_S)

    def build_when_painted(self) -> None:
        """Build the passages' vectors in a thread once the first passage is on the terminal."""
        adaptive = self.adaptive
        if adaptive is None or adaptive.vector_source is None or not self.screen.is_mounted:
            return
        if self.screen._painted():
            build = partial(self._build_indexes, adaptive.vector_source)
            self.screen.set_timer(self.BUILD_AFTER_S, build)
        else:
            self.screen.set_timer(0.02, self.build_when_painted)

    def _build_indexes(self, source: Any) -> None:
        """In a thread: the passages' vectors (read, tokenized, the document frequencies; a
        grade's path that needs them first waits for them), then every query's text index from
        vectors of the thread's own (`VectorSource.fresh`), taken in by `_indexes_built`: the
        first seconds of the queue's work, kept off the launch and the UI thread."""
        assert self.adaptive is not None
        queries = list(self.adaptive.queries.values())
        self._indexing = True
        screen = self.screen

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
                screen.app.call_from_thread(self._indexes_built, indexes)
            except RuntimeError:  # the app closed meanwhile
                pass

        screen.run_worker(build, thread=True, group="vectors", exit_on_error=False)

    def _indexes_built(self, indexes: dict[str, Any] | None) -> None:
        self._indexing = False
        adaptive = self.adaptive
        if not self.screen.is_mounted or adaptive is None:
            return
        if indexes is None:  # the thread failed: the UI thread computes what it needs
            self._threads = False
            self._schedule()
            return
        adaptive.vectors  # noqa: B018 (taken from the source into the session, built)
        for query_id, built in indexes.items():
            record = adaptive.queries[query_id]
            if record.built is None:  # else built meanwhile, for a grade's path
                record.built = built
        # What the queue holds now lives as long as the app: the collector's full passes,
        # tens of ms each over it, would fall on a grade's path.
        gc.freeze()
        self._schedule()

    def _next_step(self, peek: bool = False) -> Callable[[], None] | None:
        """The next step; with `peek`, only those the status line waits for."""
        session, adaptive = self.session, self.adaptive
        assert adaptive is not None
        if not adaptive.vectors_built:
            return None  # each step needs them: `_indexes_built` starts the catch-up
        if session.unfitted >= adaptive.config.refit_every:
            return session.refit
        if self._figuring or self._indexing:  # a thread computes them, or the indexes they
            return _waiting if peek else None  # need (at 500 queries, 100 ms and more here)
        shown = session.shown
        judged = sum(adaptive.judged(q) for q in adaptive.queries)
        goal = None
        if shown is not None and shown.key[0] in adaptive.queries:
            cached = session.goals.get(shown.key[0])
            if cached is None or cached[0] != judged:
                goal = shown.key[0]
        rank = session.ranking is not None and session.ranking.due()
        if (goal is not None or rank) and self._threads and indexed(adaptive):
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
        assert self.adaptive is not None
        twin = snapshot(self.adaptive)
        ranking = self.session.ranking if rank else None
        self._figuring = True
        screen = self.screen

        def figure() -> None:
            words: str | None = None
            plan: tuple[Plan, int] | None = None
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
                screen.app.call_from_thread(self._figured, query_id, judged, words, plan, failed)
            except RuntimeError:  # the app closed meanwhile
                pass

        screen.run_worker(figure, thread=True, group="figures", exit_on_error=False)

    def _figured(
        self,
        query_id: str | None,
        judged: int,
        words: str | None,
        plan: tuple[Plan, int] | None,
        failed: bool,
    ) -> None:
        self._figuring = False
        if failed:
            self._threads = False
        else:
            before = self._said()
            if query_id is not None:
                self.session.goals[query_id] = (judged, words)
            if plan is not None and self.session.ranking is not None:
                self.session.ranking.take(*plan)
            if self._said() != before:
                self.screen.show_status()
        if self.screen.is_mounted:
            self._schedule(self.STEP_GAP_S)

    def _said(self) -> object:
        """What the status line says of the query shown that the catch-up brings up to date."""
        shown = self.screen._shown_query or ""
        return self.session.goals.get(shown), self.session.why(shown).study

    def _update_goal(self, query_id: str, judged: int) -> None:
        assert self.adaptive is not None
        before = self.session.goals.get(query_id)
        words = to_go(self.adaptive.refitted_state(query_id), adaptive=True).words
        self.session.goals[query_id] = (judged, words)
        if before is None or before[1] != words:
            self.screen.show_status()

    def _update_ranking(self) -> None:
        assert self.session.ranking is not None
        before = self._said()
        self.session.ranking.refresh()
        if self._said() != before:
            self.screen.show_status()

    def behind(self) -> bool:
        """Whether the status line waits for a step (the models still to compute once do not
        count)."""
        if self.adaptive is None or not self.screen.loaded:
            return False
        if not self.adaptive.vectors_built:
            return True
        return self._next_step(peek=True) is not None


SWITCH_S = 0.001
"""The interpreter's switch interval while a thread computes the status line's figures (5 ms
by default: a key's handling would wait that long for each turn it takes)."""


def _waiting() -> None:
    """The step `_next_step` names while a thread computes (the status line waits for it)."""


WARM_STEP = 32
"""Passage vectors computed in one step of the warm-up (a few ms)."""


def warm_up(session: AdaptiveSession, query_ids: Sequence[str]) -> Iterator[Callable[[], object]]:
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
