"""The study level: what the whole study's figures are, under every query's unjudged relevant
passages at once. Per-query intervals are the raw material; a user decides about a mean ("is
dense's R@10 at least 0.6?") or a difference ("is the new retriever better?"), so those get a
joint 95% interval from draws that share the cross-query parameters (`draws`), computed per
run and per pair of runs (`intervals`), and a stopping rule on its width (`target`).

Pure: plain data in, typed results out (numpy, imported lazily)."""

from workbench.core.study.draws import STUDY_DRAWS, QueryDraws, StudyDraws, study_draws
from workbench.core.study.intervals import (
    STUDY_MEASURES,
    RunStudy,
    StudyInterval,
    study,
    study_delta,
    variance_shares,
)
from workbench.core.study.target import (
    DEFAULT_TARGET,
    Plan,
    Target,
    next_query,
    parse_target,
    plan,
    pooled_rankings,
    study_plan,
)

__all__ = [
    "DEFAULT_TARGET",
    "Plan",
    "Target",
    "next_query",
    "parse_target",
    "plan",
    "pooled_rankings",
    "study_plan",
    "STUDY_DRAWS",
    "STUDY_MEASURES",
    "QueryDraws",
    "RunStudy",
    "StudyDraws",
    "StudyInterval",
    "study",
    "study_delta",
    "study_draws",
    "variance_shares",
]
