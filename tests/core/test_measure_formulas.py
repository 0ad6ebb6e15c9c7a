"""The study scores a run through the metrics registry: each measure it gives an interval for
has one formula (`core.measure_formulas`) that eval's per-query path and the study's per-draw
path share, so with nothing left to draw the two say the same figure."""

import numpy as np
import pytest

from workbench.core.measures.metrics import MEASURES, score_query
from workbench.core.study.draws import QueryDraws, StudyDraws
from workbench.core.study.intervals import STUDY_MEASURES, study


def test_the_study_measures_are_the_registered_ones_with_a_per_draw_path():
    assert {m.name for m in MEASURES.values() if m.per_draw is not None} == set(STUDY_MEASURES)


@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_with_nothing_left_to_draw_the_study_scores_as_eval_does(gain):
    count = 4
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "d": 3, "e": 0}, "q2": {"a": 0, "b": 1}}
    runs = {"run": {"q1": ["b", "a", "e", "c", "d"], "q2": ["a", "b"]}}
    none = np.zeros(count)
    queries = {q: QueryDraws(q, 0, len(j), none, none, {}, none) for q, j in qrels.items()}
    ks = [1, 3, 10]
    scored = {"run": {f"{m}@{k}": list(qrels) for m in STUDY_MEASURES for k in ks}}
    out = study(StudyDraws(count, queries), qrels, runs, ks, scored, gain=gain)["run"]
    for q, ranking in runs["run"].items():
        expected = score_query(ranking, qrels[q], ks, gain=gain, measures=STUDY_MEASURES).values
        for key, value in expected.items():
            assert out.per_query[key][q] == pytest.approx([value] * count, rel=1e-12), (q, key)
