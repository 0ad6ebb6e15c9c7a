"""Adaptive judging: a queue that learns from every grade where the relevant passages are,
draws random passages with recorded probabilities so |Rel| is estimated without bias however it
chose, and certifies a query when its completeness interval clears the target.

- `frame`: what may be judged per query (every system's top 100 by default, plus a random
  reserve of the rest of the corpus, stratified by rank band).
- `rest`: the rest's relevant count, a Gamma-Poisson model shared across queries.
- `text`: tf-idf similarities inside a frame.
- `learner`: the relevance model (logistic regression on rank, lexical similarity to the query
  and to the passages judged so far).
- `policy`: `AdaptiveSession`, the decisions (fair start, feedback picks, draws, stopping).
- `estimate`: the design-based estimate of |Rel| from the draws (Des Raj), its interval, the
  certification rule.
- `walk`: judging a study with an answer function (simulate, the benchmark).
- `judge`: a model judge's labels (one version) as covariates of the relevance model.
- `saving`: the human judgments a judge covariate saved, against the no-judge model.
- `twophase`: the rest with a judge's labels (one grid posterior with `rest`'s).
- `records`, `picking`, `chooser`, `overlap`, `projection`, `snapshot`: the policy's records,
  its draws, the app's order of work, blind overlap, judgments to go, a frozen view.
- `coverage_report`: the coverage report of an adaptive store (here, not in `core.coverage`,
  which sits below this package)."""

from workbench.core.adaptive.estimate import (
    CandidateTotal,
    Draw,
    SampledTotal,
    candidate_total,
    certify,
    combine,
)
from workbench.core.adaptive.frame import (
    CANDIDATE,
    CANDIDATE_DEPTH,
    FAIR_DEPTH,
    RESERVE,
    RESERVE_SIZE,
    QueryFrame,
    build_frame,
    frame_entries,
    frame_from_entries,
)
from workbench.core.adaptive.policy import AdaptiveSession, Pick, PolicyConfig, QueryState
from workbench.core.adaptive.walk import Step, walk

__all__ = [
    "CANDIDATE",
    "CANDIDATE_DEPTH",
    "RESERVE",
    "FAIR_DEPTH",
    "RESERVE_SIZE",
    "AdaptiveSession",
    "Draw",
    "Pick",
    "PolicyConfig",
    "QueryFrame",
    "QueryState",
    "SampledTotal",
    "Step",
    "build_frame",
    "frame_entries",
    "frame_from_entries",
    "certify",
    "candidate_total",
    "combine",
    "CandidateTotal",
    "walk",
]
