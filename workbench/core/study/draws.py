"""Joint posterior draws of every query's relevant passages not yet found, from an adaptive
session: the raw material of the study intervals (`workbench.core.study.intervals`).

Per draw s and query q, the relevant not yet found split as the estimator splits them:

- **among the candidates**: the Des Raj estimate's missing count (estimate - found) with its
  sampling variance (widened by Student's t for the few draws it rests on), as a gamma with
  those moments: never below 0 and with the estimate's mean (a normal cut at 0 moved it up and
  every mean recall down: cacm, 60 per query, seed 0, R@10 0.251 against a true 0.304; as a
  gamma 0.278; a prior from the relevance model, 0.247); a query whose candidates are all
  judged has none missing. Where the estimate says none are missing (no draw met the few that
  are) the draws say none either: on the demo after 40 judgments per query that puts the study
  interval of mean R@10 above the truth. Mixing in the relevance model's own view (Poisson with
  its expected count) fixed the demo and broke cacm (a quarter of the draws: 1 miss of 4 there;
  half: 4 of 4), so it is not done. The queries' candidate estimates come from
  their own random draws, so across queries these errors are independent and average out.
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
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.adaptive.policy import AdaptiveSession

STUDY_DRAWS = 2000
"""Joint draws per study: the 2.5% and 97.5% quantiles of a mean rest on 50 draws each."""


def _candidates_missing(cand: Any, count: int, rng: Any) -> Any:
    """Draws of the relevant among the unjudged candidates with the Des Raj estimate's mean and
    variance, never below 0 and without moving the mean (a normal cut at 0 would: its cut-off
    mass lands above the estimate, which lowers every mean recall): a gamma with those
    moments, its variance widened by Student's t for the few draws it is estimated from,
    rounded at random to a whole count."""
    import numpy as np

    mean = max(cand.est - cand.found, 0.0)
    df = max(cand.draws - 1, 1)
    variance = max(cand.variance, 0.0) * (df / (df - 2) if df > 2 else 3.0)
    if mean <= 0 or variance <= 0:
        drawn = np.full(count, mean)
    else:
        drawn = rng.gamma(mean * mean / variance, variance / mean, count)
    # A count: rounded at random (floor(x + U), same mean), so that "none missing" has its own
    # probability; as a continuum the draws' upper end sat a hair under the figure with every
    # relevant found (R@10 0.5061866 against 0.5061869).
    return np.floor(drawn + rng.random(count))


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

    judged = sum(len(q.grades) for q in session.queries.values())
    base = session.config.seed if seed is None else seed
    rng = np.random.default_rng([base, judged, 27])
    model = session.rest_model()
    shared = shared_draws(model, count, rng)
    weights = None
    if session.weights_cov is not None:
        weights = rng.multivariate_normal(session.weights, session.weights_cov, count)
    out: dict[str, QueryDraws] = {}
    for query_id, q in session.queries.items():
        frame = q.frame
        qrng = np.random.default_rng([base, judged, zlib.crc32(query_id.encode("utf-8"))])
        cand = session.candidates_total(query_id)
        sample = session.rest_sample(query_id)
        rest = rest_draws(model, sample, count, qrng, shared) if shared is not None else None
        if rest is None and not sample.bands:
            rest = np.zeros(count)
        measured = cand.exact or (cand.draws >= 2 and math.isfinite(cand.variance))
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
        if cand.exact:
            missing = np.zeros(count)
        else:
            missing = _candidates_missing(cand, count, qrng)
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
    return StudyDraws(count, out, base, weights)
