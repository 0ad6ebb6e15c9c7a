"""The relevance model's features of a query's frame: rank, reserve, text similarity to the
query and to what was judged, the query's relevance so far, and a model judge's labels where
one is the covariate (`judge`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.core.adaptive.judge import JudgeCovariate
from workbench.core.adaptive.records import QueryRecord


def frame_features(
    q: QueryRecord, query_cosines: Any, judge: JudgeCovariate | None, leave_out: bool = False
) -> Any:
    """Frame passages x features (an intercept, each system's rank, in the reserve or not,
    the cosine to the query (`query_cosines`), to the judged relevant and non-relevant, the
    query's relevance logit so far, and the judge's columns where there is one);
    `leave_out`: a judged passage's feedback features leave its own grade out (the rows the
    model is trained on)."""
    import numpy as np

    frame = q.frame
    n = len(frame.doc_ids)
    ranks = frame.ranks
    rank_feature = np.where(ranks > 0, 1.0 / np.log2(1.0 + np.maximum(ranks, 1)), 0.0)
    reserve = np.zeros(n)
    reserve[frame.candidates :] = 1.0
    rel = _max_sim(q.rel_sims, q.rel_cols, n, leave_out)
    non = _max_sim(q.non_sims, q.non_cols, n, leave_out)
    r = sum(q.grades.values())
    judged = len(q.grades)
    own = np.zeros(n)
    seen = np.zeros(n)
    if leave_out and q.grades:
        idx = np.fromiter(q.grades, dtype=np.intp)
        own[idx] = [q.grades[i] for i in q.grades]
        seen[idx] = 1.0
    logit = np.log((r - own + 0.5) / (judged - seen - (r - own) + 0.5))
    columns = [np.ones(n), rank_feature, reserve, query_cosines, rel, non, logit]
    if judge is not None:
        if q.judge_columns is None:
            q.judge_columns = judge.columns(frame.query_id, frame.doc_ids)
        columns.append(q.judge_columns)
    return np.column_stack(columns)


def _max_sim(sims: list[Any], cols: Mapping[int, int], n: int, leave_out: bool) -> Any:
    """Per passage, its largest cosine with the judged passages in `sims` (optionally not
    counting a passage's own column)."""
    import numpy as np

    if not sims:
        return np.zeros(n)
    matrix = np.column_stack(sims)
    if leave_out:
        matrix = matrix.copy()
        for row, col in cols.items():
            matrix[row, col] = 0.0
    return matrix.max(axis=1)
