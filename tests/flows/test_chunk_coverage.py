"""The coverage estimate in chunks: est |Rel| scaled by relevant chunks / judged relevant
passages (the text figures' assumption), completeness unchanged, no study draws."""

from __future__ import annotations

from workbench.core.audit.judged_coverage import Coverage, QueryCoverage
from workbench.core.model import Status
from workbench.flows.chunked import chunk_coverage


def test_est_rel_scales_with_the_relevant_chunks_per_relevant_passage() -> None:
    info = QueryCoverage(Status.INCOMPLETE, 2, est_rel=4.0, est_rel_low=3.0, est_rel_high=8.0,
                         completeness=0.5, completeness_low=0.25)  # fmt: skip
    coverage = Coverage("store s.db", 0.8, {"q": info}, {"q": {"p1": 2, "p2": 1}})
    chunks = {"q": {"c1": 2, "c2": 2, "c3": 1, "c4": 1, "c5": 0}}  # each passage cut in two
    scaled = chunk_coverage(coverage, chunks, {"c4": "c3"}, 1)
    assert scaled is not None and scaled.study is None and scaled.aliases == {"c4": "c3"}
    row = scaled.queries["q"]
    assert (row.judged_relevant, row.est_rel, row.est_rel_low, row.est_rel_high) == (4, 8, 6, 16)
    assert row.completeness == info.completeness and row.status == info.status
    assert scaled.judged == chunks
