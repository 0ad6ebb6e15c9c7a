"""How complete is the judged relevant set? Per query: pool and judging figures, each system's
part (Zobel's unique relevant), the discovery curve, and an estimate of |Rel|, the relevant
documents in the whole corpus, from the random samples judged outside the pool.

What is observed (`observations`). A query's queue holds its pool (the systems' top results)
and, outside it, documents sampled at random with known inclusion probabilities from strata
(workbench.core.pool.sampling): bands of best rank across the systems' deep rankings ('rank:21-50',
...) and 'rest'; corpus documents in no stratum form 'unsampled'. A judged document is relevant
when the grade that counts (`grades_counted`) reaches the relevance threshold.

The model (`rank_model`). A document of query q at best rank r is relevant with

    logit p = u_q + exp(s_q) * f(log r),  u_q ~ t4(mu + gamma * x_q, tau),  s_q ~ N(0, slope_sd)

- f, shared by all queries, is piecewise linear in log rank and never rises: 0 at the shallowest
  sampled rank, with knots there, at the deepest, and at 50, 100, 300 and 1000 between. A band's
  rate is the mean over ranks spread evenly across it; a stratum that is not a band ('rest')
  has its own offset in place of f(log r).
- u_q is the query's level; x_q what its pool says about what the pool missed: the log count of
  relevant pool documents that some system did not retrieve (with one system, the empirical
  logit of the pool's relevance rate). gamma is 0 below 8 sampled queries or when every x_q is
  the same.
- s_q is the query's steepness: a query whose relevant documents sit deep falls more gently.

The fit (`fit`: empirical Bayes). Only the outside-pool samples enter the likelihood (the pool
enters through x_q): a query's judged and relevant counts per stratum, binomial at the stratum's
rate, marginalised over a grid of (u_q, s_q) (151 levels on [-16, 6] by 5 Gauss-Hermite nodes).
The hyperparameters (mu, gamma, tau, the curve's slopes, the offsets, slope_sd) are the mode of
that marginal likelihood over all queries times weak priors (`optimizer`: Nelder-Mead); 100
draws of them around the mode (`laplace`: adaptive importance sampling from a Laplace proposal)
carry the fit's own uncertainty.

The estimate (`estimator`). For each of 4000 draws: a fit (by its weight), the query's (u_q, s_q)
from its exact grid posterior under that fit, and per stratum a binomial count of relevant
among its unjudged documents at that rate. Unjudged pool items take the query's pool rate
(Jeffreys prior); unsampled documents are taken as 'rest', else as the deepest band; a stratum
the model cannot place (or no fit at all) takes its own counts under Beta(0.5, 0.5). |Rel| is
the judged relevant plus those counts: est_rel is the median draw with the central 95%
interval, finite even when no sample was relevant; completeness = judged relevant / est_rel,
its interval from the draws. A query whose whole corpus is judged has |Rel| exactly. The
design-based Horvitz-Thompson estimate (unbiased, but noisy with few samples) stands beside it.

The status (`CompletenessRule`; `status` decides "measured" and "complete" for every estimate
of the project): complete when the lower end of the completeness interval reaches complete_at;
unmeasured below min_samples judged samples; else incomplete.

Results are typed (`results`: `CoverageReport`, `QueryFigures`, `SystemFigures`,
`CoverageSummary`), built by `report` and serialised once (`CoverageReport.to_json`);
`summary` rounds a report into golden.yaml's summary (`workbench.flows.coverage` reads a
store for it). Pure: plain data in,
typed results out; numpy only (imported lazily).
"""

from workbench.core.coverage.estimator import estimate_missing, horvitz_thompson
from workbench.core.coverage.fit import fit_rank_model
from workbench.core.coverage.observations import (
    POOL_STRATUM,
    UNSAMPLED,
    QueryObs,
    StratumObs,
    grades_counted,
    observe,
    query_covariate,
)
from workbench.core.coverage.rank_model import RankModel
from workbench.core.coverage.report import (
    coverage_report,
    discovery_curve,
    last_quarter_share,
    summarize,
    system_figures,
)
from workbench.core.coverage.results import (
    KS,
    CompletenessRule,
    CoverageReport,
    CoverageSummary,
    QueryFigures,
    SystemFigures,
)
from workbench.core.coverage.summary import round_figure, summary_of

__all__ = [
    "KS",
    "POOL_STRATUM",
    "UNSAMPLED",
    "CompletenessRule",
    "CoverageReport",
    "CoverageSummary",
    "QueryFigures",
    "QueryObs",
    "RankModel",
    "StratumObs",
    "SystemFigures",
    "coverage_report",
    "discovery_curve",
    "estimate_missing",
    "fit_rank_model",
    "grades_counted",
    "horvitz_thompson",
    "last_quarter_share",
    "observe",
    "query_covariate",
    "round_figure",
    "summarize",
    "summary_of",
    "system_figures",
]
