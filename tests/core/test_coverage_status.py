"""'Measured' and 'complete', written once (`core.coverage_status`), and said the same by every
place that decides them: the adaptive estimate, the study's draws, the queue's forecast, the
static report and a summary read back."""

import math

import pytest

from workbench.core.adaptive.estimate import CandidateTotal, certify, combine
from workbench.core.coverage.status import (
    candidates_measured,
    coverage_status,
    is_complete,
    is_measured,
    rest_seen,
)
from workbench.core.model import Status


@pytest.mark.parametrize(
    ("exact", "draws", "variance", "measured"),
    [(True, 0, math.inf, True), (False, 1, 0.5, False), (False, 2, 0.5, True),
     (False, 2, math.inf, False), (False, 5, math.nan, False), (False, 3, 0.0, True)],
)  # fmt: skip
def test_the_candidates_are_measured_when_all_judged_or_two_draws_give_a_variance(
    exact, draws, variance, measured
):
    assert candidates_measured(exact, draws, variance) is measured
    assert is_measured(exact, draws, True, variance) is measured
    assert is_measured(exact, draws, False, variance) is False


def test_the_rest_is_seen_once_a_reserve_passage_is_judged_or_there_is_no_rest():
    assert rest_seen(False, 0) and rest_seen(True, 1) and not rest_seen(True, 0)


@pytest.mark.parametrize(
    ("low", "at", "status"),
    [(None, 0.8, Status.INCOMPLETE), (0.79, 0.8, Status.INCOMPLETE), (0.8, 0.8, Status.COMPLETE),
     (1.0, 1.0, Status.COMPLETE)],
)  # fmt: skip
def test_complete_when_the_lower_end_reaches_complete_at(low, at, status):
    assert is_complete(low, at) is (status == Status.COMPLETE)
    assert coverage_status(low, at) == status
    assert coverage_status(low, at, measured=False) == Status.UNMEASURED


def test_the_adaptive_estimate_applies_the_same_rules():
    one_draw = CandidateTotal(3, 1, 4.0, math.inf)
    assert combine(one_draw, [1.0, 2.0], 0, 7).est is None
    two_draws = CandidateTotal(3, 2, 4.0, 1.0)
    assert combine(two_draws, [1.0, 2.0], 0, 7, rest_seen=False).est is None
    total = combine(two_draws, [1.0, 2.0, 3.0], 0, 7)
    assert total.est is not None
    assert certify(total, 0.01) == coverage_status(total.completeness_low, 0.01) == Status.COMPLETE
    assert certify(combine(one_draw, [1.0], 0, 7), 0.01) == Status.UNMEASURED


def test_the_rule_level_is_the_project_level_and_the_adaptive_report_refuses_another():
    from workbench.core.adaptive.coverage_report import adaptive_coverage_report
    from workbench.core.coverage.results import CompletenessRule
    from workbench.core.interval_level import LEVEL

    assert CompletenessRule().level == LEVEL
    report = adaptive_coverage_report([], {}, 10, {}, query_ids=[])
    assert report.rule.level == LEVEL
    with pytest.raises(ValueError, match="adaptive estimate's intervals are at 95%, not 90%"):
        adaptive_coverage_report([], {}, 10, {}, thresholds=CompletenessRule(level=0.9))
