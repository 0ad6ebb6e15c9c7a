"""DESIGN.md's seed example, copied by hand from its table: the one copy the tests check the
golden/seed-example files and the metrics against."""

from pathlib import Path

SEED_QRELS = {
    "q_faw": {"m1": 3, "m2": 2, "m3": 1},
    "q_store": {"s1": 3, "s2": 2, "s3": 1},
    "q_milk": {"d1": 3, "d2": 2, "d3": 1},
    "q_broad": {"m1": 3, "m2": 3, "m3": 2, "m4": 2, "m5": 1, "m6": 1, "s1": 2, "s2": 1},
}
SEED_RANKINGS = {
    "q_faw": "m2 x3 m1 p1 d2 m3 s1 x1 p3 d5".split(),
    "q_store": "d2 s2 x4 s1 p2 s3 m4 d1 p5 x2".split(),
    "q_milk": "d1 s2 x1 d2 x3 d3 m1 p4 s4 x2".split(),
    "q_broad": "m1 s1 m2 m3 x1 m4 m5 m6 s2 d1".split(),
}

Q_BROAD_COVERAGE = {  # the truly relevant set has 12 documents: the estimate's interval holds it
    "relevant": 8, "est_rel": 12.0, "est_rel_low": 9.0, "est_rel_high": 16.0,
    "completeness": 0.667, "completeness_low": 0.5, "status": "incomplete",
}  # fmt: skip
"""A coverage summary for q_broad as `workbench export` would record one: 8 judged relevant of
an estimated 12 [9, 16]. Its top 10 holds all 8, so R@10 is 1 against the judged set and
0.5-0.889 under the estimated |Rel| (8/16, 8/9); the other queries are left unmeasured."""


COMPLETE = {  # the other three queries, each with its 3 relevant found and known exactly
    "relevant": 3, "est_rel": 3.0, "est_rel_low": 3.0, "est_rel_high": 3.0,
    "completeness": 1.0, "completeness_low": 1.0, "status": "complete",
}  # fmt: skip


def seed_golden_with_coverage(golden: str, path: Path, every_query: bool = False) -> Path:
    """`golden` (the text of golden/seed-example.yaml) with `Q_BROAD_COVERAGE` as its coverage
    summary (`every_query`: and the other three complete, `COMPLETE`: a summary that measures
    every scored query, so a floor is held to the interval, not failed as unmeasured), written
    to `path`."""
    rows = {"q_broad": Q_BROAD_COVERAGE}
    if every_query:
        rows = {"q_faw": COMPLETE, "q_store": COMPLETE, "q_milk": COMPLETE, **rows}
    lines = "".join(
        f"    {qid}: {{{', '.join(f'{k}: {v}' for k, v in figures.items())}}}\n"
        for qid, figures in rows.items()
    )
    summary = f"coverage:\n  queries:\n{lines}  thresholds: {{complete_at: 0.8}}\n"
    assert "\ncoverage: null\n" in golden
    path.write_text(golden.replace("\ncoverage: null\n", "\n" + summary), encoding="utf-8")
    return path
