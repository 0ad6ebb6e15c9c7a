"""The adaptive queue (`AdaptiveSession`): after every grade it decides what is most worth
judging next for a query, and when the query is done. One code path for the app,
`workbench simulate` and the benchmark.

Per query: first every system's top k (the study's cutoff: `frame.fair_depth`), round-robin by
rank (no system starved, the scored runs' top k judged); then while the query has no estimate,
the draws it needs for one (`picking.estimate_need`); then
picks mix three kinds in fixed shares: relevance feedback (the unjudged candidate the model finds
likeliest relevant), draws among the unjudged candidates with recorded probabilities, Neyman-
optimal for the total under the model (q proportional to sqrt(p), mixed with a defensive uniform
share so none is zero), and draws from the reserve (the rest of the corpus by rank band), each
at random inside the band furthest behind its Neyman share.
See `estimate` for why the interval stays honest under this adaptivity."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.core.adaptive.estimate import (
    CandidateTotal,
    Draw,
    SampledTotal,
    candidate_total,
    certify,
    combine,
)
from workbench.core.adaptive.features import frame_features
from workbench.core.adaptive.frame import QueryFrame
from workbench.core.adaptive.judge import JudgeCovariate
from workbench.core.adaptive.learner import covariance, fit_logistic, predict
from workbench.core.adaptive.picking import candidate_draw, estimate_need, kind_behind, rest_draw
from workbench.core.adaptive.projection import frame_left, more_to_certify, more_to_estimate
from workbench.core.adaptive.records import (
    PRIOR,
    REST_DRAWS,
    Pick,
    PolicyConfig,
    QueryRecord,
    QueryState,
)
from workbench.core.adaptive.rest import RestModel, RestSample, rest_draws
from workbench.core.adaptive.text import FrameIndex, Vectors, text_index
from workbench.core.adaptive.twophase import band_sample, fit_rest_model, reserve_positives
from workbench.core.coverage.status import rest_seen
from workbench.core.model import Status
from workbench.core.random_streams import queue_stream


class AdaptiveSession:
    """The policy's state over a study: every query's frame and judgments, the shared model."""

    def __init__(
        self,
        frames: Sequence[QueryFrame],
        tokens: Mapping[str, Sequence[str]],
        query_tokens: Mapping[str, Sequence[str]],
        corpus_size: int,
        config: PolicyConfig = PolicyConfig(),
        judge: JudgeCovariate | None = None,
        vectors: Callable[[], Vectors] | None = None,
    ):
        """`judge`: a model judge's labels (one version) as features of the relevance model;
        without one, rank and text alone. `vectors`: the passages' tf-idf vectors, built on first
        use by this call instead of from `tokens` now (the app: off its UI thread)."""
        from workbench.core.adaptive.text import document_frequencies

        self.config = config
        self.judge = judge
        self.corpus_size = corpus_size
        self._vectors: Vectors | None = None
        self.vector_source = vectors
        """What builds the vectors on first use (None: built from `tokens` at once)."""
        if vectors is None:
            self._vectors = Vectors(tokens, document_frequencies(tokens), corpus_size)
        self.queries: dict[str, QueryRecord] = {
            frame.query_id: QueryRecord(frame, query_tokens.get(frame.query_id, ()), frame.index())
            for frame in frames
        }
        systems = frames[0].systems if frames else []
        if any(list(f.systems) != list(systems) for f in frames):
            raise ValueError("every frame of a session must rank by the same systems")
        self.prior = self._prior(len(systems))
        self.weights = self.prior.copy()
        self.weights_cov: Any = None
        """The weights' covariance at the last refit (Laplace: `learner.covariance`)."""
        self.model_version = 0
        """Bumped by every refit: what was computed from the model before is stale."""
        self._since_fit = 0
        self._refit_due = False
        """A refit waits for the model's first use (`refit`'s `deferred`)."""
        self._rest: tuple[Any, RestModel] | None = None
        """The rest's model and the judgments it was fitted on (`rest_model`)."""
        self._checked: tuple[int, ...] | None = None
        """The judgments (every query's version) the last `recheck` saw."""

    def _prior(self, systems: int) -> Any:
        import numpy as np

        from workbench.core.adaptive.judge import PRIOR as JUDGE_PRIOR

        extra = list(JUDGE_PRIOR) if self.judge is not None else []
        return np.array([PRIOR[0]] + [2.0] * systems + list(PRIOR[1:]) + extra)

    @property
    def vectors(self) -> Vectors:
        """The passages' tf-idf vectors (built now by the session's `vectors` call if not yet)."""
        if self._vectors is None:
            assert self.vector_source is not None
            self._vectors = self.vector_source()
        return self._vectors

    @property
    def vectors_built(self) -> bool:
        return self._vectors is not None

    # -- what was judged --------------------------------------------------------------------

    def record(self, query_id: str, doc_id: str, relevant: bool, refit: bool = True) -> None:
        """A grade that counts reached the store (a regrade replaces the earlier one); the model
        is refitted every `refit_every` grades unless `refit` is False."""
        q = self.queries.get(query_id)
        if q is None or doc_id not in q.position:
            return
        i = q.position[doc_id]
        if i in q.grades:
            q.order.remove(i)
            q.drop_column(i)
        else:
            q.reserve_seen += i >= q.frame.candidates
        q.grades[i] = relevant
        q.version += 1
        q.order.append(i)
        cols, sims = (q.rel_cols, q.rel_sims) if relevant else (q.non_cols, q.non_sims)
        cols[i] = len(sims)
        # Until the vectors are built (in the app's thread), its index (`QueryRecord.fill_columns`)
        lazy = q.built is None and not self.vectors_built
        sims.append(i if lazy else self._index(q)[0].similarities(i))
        if q.pending is not None and q.pending.doc_id == doc_id:
            q.draws.append(q.pending)
            q.pending = None
        q.next, q.next_ready = None, False
        self._since_fit += 1
        if refit and self._since_fit >= self.config.refit_every:
            self.refit()

    def forget(self, query_id: str, doc_id: str) -> None:
        """A grade undone: the passage is unjudged again (a draw of it is served again first)."""
        q = self.queries.get(query_id)
        if q is None or doc_id not in q.position or q.position[doc_id] not in q.grades:
            return
        i = q.position[doc_id]
        del q.grades[i]
        q.reserve_seen -= i >= q.frame.candidates
        q.version += 1
        q.order.remove(i)
        q.drop_column(i)
        undone = [d for d in q.draws if d.doc_id == doc_id]
        if undone:
            q.draws = [d for d in q.draws if d.doc_id != doc_id]
            q.pending = undone[-1]
        q.next, q.next_ready = None, False

    def recheck(self) -> None:
        """Refit, then ask again of every query found done (its cached None): certification
        rests on models every query's grades move, so one certified earlier may no longer be
        when the others are done. Nothing new judged since the last recheck: nothing to do."""
        seen = tuple(q.version for q in self.queries.values())
        if seen == self._checked:
            return
        self._checked = seen
        self.refit()
        for q in self.queries.values():
            if q.next_ready and q.next is None and q.pending is None:
                q.next_ready = False

    def restore_draw(self, draw: Draw) -> None:
        """A draw read back from the store: judged ones count, an unjudged one is served next.
        A passage drawn again (by a second oracle's walk, another annotator's session) is one
        draw, the first: judging it twice is no new evidence."""
        q = self.queries.get(draw.query_id)
        if q is None or draw.doc_id not in q.position:
            return
        if any(d.doc_id == draw.doc_id for d in q.draws):
            return
        if q.position[draw.doc_id] in q.grades:
            q.draws.append(draw)
        else:
            q.pending = draw

    # -- the model ---------------------------------------------------------------------------

    def features(self, q: QueryRecord, leave_out: bool = False) -> Any:
        index = self._index(q)
        q.fill_columns(index[0])
        return frame_features(q, index[1], self.judge, leave_out)

    def _index(self, q: QueryRecord) -> tuple[FrameIndex, Any]:
        if q.built is None:
            q.built = text_index(q.frame.doc_ids, q.words, self.vectors)
        return q.built

    def refit(self, deferred: bool = False) -> None:
        """Fit the relevance model to every judged passage of every query; `deferred`: on the
        model's first use instead while the passages' vectors (the features') are not built."""
        import numpy as np

        if deferred and not self.vectors_built:
            self._refit_due = True
            return
        self._refit_due = False
        self._since_fit = 0
        rows, labels = [], []
        for q in self.queries.values():
            if q.grades:
                idx = np.fromiter(q.grades, dtype=np.intp)
                rows.append(self.features(q, leave_out=True)[idx])
                labels.append(np.array([q.grades[i] for i in idx], dtype=float))
        if not rows:
            return
        x, y = np.vstack(rows), np.concatenate(labels)
        self.weights = fit_logistic(x, y, self.prior)
        self.weights_cov = covariance(x, self.weights)
        self.model_version += 1

    def probabilities(self, query_id: str) -> Any:
        """The model's relevance probability of every passage of the query's frame (the same
        array until the query's judgments or the model change: do not modify it)."""
        if self._refit_due:
            self.refit()
        q = self.queries[query_id]
        key = (q.version, self.model_version)
        if q.probs is None or q.probs[0] != key:
            q.probs = (key, predict(self.features(q), self.weights))
        return q.probs[1]

    # -- what next ---------------------------------------------------------------------------

    def next_pick(self, query_id: str) -> Pick | None:
        """The next passage to judge for this query (the same until it is judged); None when
        the query is done (certified, at its cap, or nothing left)."""
        q = self.queries[query_id]
        cap = self.config.max_per_query
        if cap is not None and len(q.grades) >= cap:
            return None  # even a pending draw: one never judged says nothing, and is left out
        if q.pending is not None:
            return Pick(query_id, q.pending.doc_id, "draw", q.pending)
        if not q.next_ready:
            q.next, q.next_ready = self._pick(query_id), True
        return q.next

    def _pick(self, query_id: str) -> Pick | None:
        q = self.queries[query_id]
        frame = q.frame
        candidates = [i for i in range(frame.candidates) if i not in q.grades]
        reserve = [i for i in range(frame.candidates, len(frame.doc_ids)) if i not in q.grades]
        if not candidates and not reserve:
            return None
        for i in frame.fair_order:
            if i not in q.grades:
                return Pick(query_id, frame.doc_ids[i], "fair")
        if self.config.stop_when_certified and self.state(query_id).status == Status.COMPLETE:
            return None
        left = (bool(candidates), bool(reserve))
        need = estimate_need(self.config, q.candidate_draws, *left, q.reserve_seen > 0)
        kind = need or kind_behind(self.config, q.kinds, *left)
        q.kinds[kind] = q.kinds.get(kind, 0) + 1
        if kind == "rest":
            return self._rest_draw(q, reserve)
        p = self.probabilities(query_id)
        if kind == "draw":
            return candidate_draw(self.config, q, candidates, p)
        best = max(candidates, key=lambda i: (p[i], -i))
        return Pick(query_id, frame.doc_ids[best], "feedback")

    def _rest_draw(self, q: QueryRecord, reserve: list[int]) -> Pick:
        scale = self.rest_sample(q.frame.query_id, for_fit=True).scale
        return rest_draw(self.config, q, reserve, self.rest_model(), scale, self._positives(q))

    def _positives(self, q: QueryRecord) -> frozenset[int] | None:
        """The reserve passages the judge labelled relevant: its strata (`twophase`)."""
        return reserve_positives(q, self.judge if self.config.two_phase else None)

    # -- where a query stands ----------------------------------------------------------------

    def candidates_total(self, query_id: str) -> CandidateTotal:
        """The candidates' relevant total (Des Raj), cached until the query's judgments, its
        draws or the model change."""
        q = self.queries[query_id]
        key = (q.version, len(q.draws), self.model_version)
        if q.cached is None or q.cached[0] != key:
            frame = q.frame
            relevant = {frame.doc_ids[i]: r for i, r in q.grades.items() if i < frame.candidates}
            p = self.probabilities(query_id)[: frame.candidates]
            unjudged = [i for i in range(frame.candidates) if i not in q.grades]
            if not unjudged and (frame.candidates or q.grades):
                # Every candidate judged: known exactly, however they were chosen. (A query no
                # system ranked anything for waits for a judged reserve passage: its rest alone,
                # from nothing judged, would be the prior's interval.)
                found = sum(1 for r in relevant.values() if r)
                total = CandidateTotal(found, len(q.draws), float(found), 0.0, exact=True)
            else:
                spread = float((p[unjudged] * (1 - p[unjudged])).sum())
                expected = float(p[unjudged].sum())
                total = candidate_total(q.draws, relevant, spread, expected)
            q.cached = (key, total)
        return q.cached[1]

    def rest_sample(self, query_id: str, for_fit: bool = False) -> RestSample:
        """The query's judged reserve by band, and its candidates' estimated relevant (its
        scale). `for_fit`: a query with nothing judged in its reserve (no exposure) skips the
        candidates' estimate."""
        q = self.queries[query_id]
        key = (q.version, self.model_version)
        cached = q.rests.get(for_fit)
        if cached is not None and cached[0] == key:
            return cached[1]
        frame = q.frame
        positives = self._positives(q)
        bands = tuple(band_sample(b, q.grades, positives) for b in frame.bands)
        if for_fit and not any(b.judged for b in bands):
            sample = RestSample(bands, 0.0)
        else:
            sample = RestSample(bands, *self._relevant_candidates(q))
        q.rests[for_fit] = (key, sample)
        return sample

    def _relevant_candidates(self, q: QueryRecord) -> tuple[float, float]:
        """The query's relevant candidates (judged ones by their grade, the others by the
        model's probability), weighted by best rank / candidate depth, and plainly. Deep ones say
        the rankings run on past the candidates: as the scale of the query's rest it predicts its
        relevant far better than the plain count (bench/rest_bound.py: the oracle's interval for
        the rest at 100 judgments, 1.17 -> 1.00 |Rel| on cranfield, 1.43 -> 1.13 on cisi)."""
        import numpy as np

        key = (q.version, self.model_version)
        if q.weighted is not None and q.weighted[0] == key:
            return q.weighted[1]
        frame = q.frame
        n = frame.candidates
        relevant = np.array(self.probabilities(frame.query_id)[:n], dtype=float)
        for i, r in q.grades.items():
            if i < n:
                relevant[i] = float(r)
        weighted = float((frame.candidate_depth * relevant).sum())
        q.weighted = (key, (weighted, float(relevant.sum())))
        return q.weighted[1]

    def rest_model(self) -> RestModel:
        """The rest's model fitted over every query, refitted only when some query's judgments
        or the relevance model changed (the end-of-queue recheck asks every query in turn:
        fitting it again for each made that pass grow with the square of the queries)."""
        key = (tuple(q.version for q in self.queries.values()), self.model_version)
        if self._rest is None or self._rest[0] != key:
            samples = [self.rest_sample(other, for_fit=True) for other in self.queries]
            self._rest = (key, fit_rest_model(samples))
        return self._rest[1]

    def total(self, query_id: str) -> SampledTotal:
        """The query's |Rel|: found, estimate and 95% interval (see `estimate`)."""

        q = self.queries[query_id]
        sample = self.rest_sample(query_id)
        model = self.rest_model()
        rng = queue_stream(self.config.seed, query_id, len(q.grades))
        rest = rest_draws(model, sample, REST_DRAWS, rng)
        seen = rest_seen(bool(sample.bands), q.reserve_seen)
        return combine(self.candidates_total(query_id), rest, sample.hits, rng, seen)

    def judged(self, query_id: str) -> int:
        """The query's judgments that count toward its estimate (every annotator's)."""
        return len(self.queries[query_id].grades)

    def state(self, query_id: str) -> QueryState:
        """Where the query stands now."""
        q = self.queries[query_id]
        total = self.total(query_id)
        status = certify(total, self.config.target)
        cap = self.config.max_per_query
        capped = cap is not None and len(q.grades) >= cap
        more = None
        if status == Status.INCOMPLETE and not capped:
            more = more_to_certify(self, query_id, total)
        estimate = more_to_estimate(self, query_id, status != Status.UNMEASURED)
        left = frame_left(self, query_id)
        return QueryState(query_id, len(q.grades), total, status, more, capped, estimate, left)

    def refitted_state(self, query_id: str) -> QueryState:
        """`state` on a relevance model fitted to every grade so far, as a session rebuilt from
        the store has it (coverage, the app's overview): both say one figure. The queue's own
        model is left as it was (its picks do not change)."""
        kept = self.weights, self.weights_cov, self._since_fit, self._refit_due
        self.refit()
        try:
            return self.state(query_id)
        finally:
            self.weights, self.weights_cov, self._since_fit, self._refit_due = kept
            self.model_version += 1  # a version of its own: nothing cached on the refit holds
