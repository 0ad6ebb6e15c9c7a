"""Joint posterior draws of every query's relevant passages not yet found, from an adaptive
session: the raw material of the study intervals (`workbench.core.study.intervals`).

Per draw s and query q, the relevant not yet found split as the estimator splits them:

- **among the candidates**: each query's posterior given its Des Raj estimate (its standard
  error widened by Student's t for the few draws it rests on), under a prior the study's
  queries give together (`candidates`: empirical Bayes; why not a gamma or the normal alone is
  said there); a query whose candidates are all judged has none missing. Mixing in the
  relevance model's own view (Poisson with its expected count) narrowed the early intervals
  and missed more (cacm at 30 per query: 4 of 6 means held, not 6 of 6), and a study-wide
  calibration of the model by every query's draws missed cacm's deltas at 60 per query: neither
  is done. The queries' candidate estimates come from their own random draws, so across queries
  their errors are independent.
- **in the rest of the corpus**: `rest.rest_draws` with the *shared* parameters (the rate's fall
  gamma, the tails' spread alpha, the shallowest band's rate kappa) drawn once per s for every
  query (`rest.shared_draws`): an error in them moves every query's rest the same way, and the
  study interval keeps that correlation instead of averaging it away.

With each query's unjudged passages' relevance probabilities (the relevance model's for
candidates; the rest's rate per passage, per draw, elsewhere), `intervals` draws which unjudged
passages in a run's top k are relevant, consistent with the missing counts. Pure: plain data in,
arrays out (numpy, imported lazily)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.coverage.status import candidates_measured, is_measured, rest_seen
from workbench.core.random_streams import study_query_stream, study_stream

if TYPE_CHECKING:
    from workbench.core.adaptive.policy import AdaptiveSession
    from workbench.core.study.candidates import Evidence

STUDY_DRAWS = 2000
"""Joint draws per study: the 2.5% and 97.5% quantiles of a mean rest on 50 draws each."""


@dataclass(frozen=True)
class QueryDraws:
    """One query's part of the joint draws. `candidates_missing` and `rest_missing` are arrays
    of `STUDY_DRAWS` counts (None: the query has no estimate yet); `p` the relevance model's
    probability of each unjudged candidate; `rest_rate` per draw, the chance that one unjudged
    passage outside the candidates is relevant."""

    query_id: str
    found: int
    judged: int
    candidates_missing: Any | None
    rest_missing: Any | None
    p: Mapping[str, float]
    rest_rate: Any | None
    drawn: frozenset[str] = frozenset()
    """The passages judged by a random draw (among the candidates or the reserve): their grades
    are a fair sample of the relevant passages' grades, the feedback picks' are not (the
    model seeks the clearest relevant first)."""
    features: Mapping[str, Any] = field(default_factory=dict)
    """The relevance model's features of each unjudged candidate: with `StudyDraws.weights`,
    its probability per draw."""

    @property
    def measured(self) -> bool:
        return self.candidates_missing is not None and self.rest_missing is not None


@dataclass(frozen=True)
class StudyDraws:
    """Every query's draws, `count` of them, taken together (shared parameters drawn once)."""

    count: int
    queries: Mapping[str, QueryDraws]
    seed: int = 0
    weights: Any = None
    """The relevance model's weights per draw (count x features), from the fit's posterior
    (`learner.covariance`); None: its point estimate for every draw."""
    models: Any = None
    """Per draw, which estimator drew the candidates' missing counts (`candidates`); a study
    interval is the hull of each one's (None: one for all draws)."""

    def probabilities(self, query_id: str, doc_id: str) -> Any:
        """An unjudged candidate's relevance probability per draw: the model's under each
        draw's weights, so a figure resting on it carries the fit's uncertainty (a point where
        no weights were drawn)."""
        import numpy as np

        qd = self.queries[query_id]
        x = qd.features.get(doc_id)
        if self.weights is None or x is None:
            return np.full(self.count, qd.p[doc_id])
        return 1.0 / (1.0 + np.exp(-np.clip(self.weights @ x, -30, 30)))

    def unmeasured(self, query_ids: list[str]) -> list[str]:
        """The queries among `query_ids` without an estimate yet (no draws)."""
        return [q for q in query_ids if q in self.queries and not self.queries[q].measured]


def study_draws(
    session: AdaptiveSession, count: int = STUDY_DRAWS, seed: int | None = None
) -> StudyDraws:
    """The joint draws of the session's queries (seeded by the study's seed and its
    judgments, so the same store gives the same interval)."""
    import numpy as np

    from workbench.core.adaptive.rest import rest_draws, shared_draws
    from workbench.core.study.candidates import missing_draws

    judged = sum(len(q.grades) for q in session.queries.values())
    base = session.config.seed if seed is None else seed
    rng = study_stream(base, judged)
    model = session.rest_model()
    shared = shared_draws(model, count, rng)
    weights = None
    if session.weights_cov is not None:
        weights = rng.multivariate_normal(session.weights, session.weights_cov, count)
    models = np.arange(count) % 2  # the candidates' two estimators, one in each half
    candidates_missing = missing_draws(_evidence(session), count, rng, models)
    out: dict[str, QueryDraws] = {}
    for query_id, q in session.queries.items():
        frame = q.frame
        qrng = study_query_stream(base, judged, query_id)
        cand = session.candidates_total(query_id)
        sample = session.rest_sample(query_id)
        rest = rest_draws(model, sample, count, qrng, shared) if shared is not None else None
        if rest is None and not sample.bands:
            rest = np.zeros(count)
        seen = rest_seen(bool(sample.bands), q.reserve_seen)
        measured = is_measured(cand.exact, cand.draws, seen, cand.variance)  # `estimate.combine`
        probabilities = session.probabilities(query_id)
        unjudged = [i for i in range(frame.candidates) if i not in q.grades]
        p = {frame.doc_ids[i]: float(probabilities[i]) for i in unjudged}
        features = {}
        if weights is not None and unjudged:
            rows = session.features(q)
            features = {frame.doc_ids[i]: rows[i] for i in unjudged}
        found = sum(1 for r in q.grades.values() if r)
        drawn = frozenset(d.doc_id for d in q.draws)
        if not measured or rest is None:
            out[query_id] = QueryDraws(
                query_id, found, len(q.grades), None, None, p, None, drawn, features
            )
            continue
        missing = np.zeros(count) if cand.exact else candidates_missing[query_id]
        rest_missing = np.maximum(rest - sample.hits, 0.0)
        unjudged_rest = max(frame.rest_size - sample.judged, 1)
        out[query_id] = QueryDraws(
            query_id,
            found,
            len(q.grades),
            missing,
            rest_missing,
            p,
            np.minimum(rest_missing / unjudged_rest, 1.0),
            drawn,
            features,
        )
    return StudyDraws(count, out, base, weights, models)


def _evidence(session: AdaptiveSession) -> dict[str, Evidence]:
    """Each query's Des Raj estimate of its candidates' missing relevant with its standard error
    (t-widened for the few draws it rests on), where it has one and they are not all judged."""
    from workbench.core.study.candidates import Evidence

    evidence = {}
    for query_id, q in session.queries.items():
        cand = session.candidates_total(query_id)
        if not cand.exact and candidates_measured(False, cand.draws, cand.variance):
            df = max(cand.draws - 1, 1)
            variance = max(cand.variance, 0.0) * (df / (df - 2) if df > 2 else 3.0)
            unjudged = sum(1 for i in range(q.frame.candidates) if i not in q.grades)
            evidence[query_id] = Evidence(cand.est - cand.found, math.sqrt(variance), unjudged)
    return evidence
