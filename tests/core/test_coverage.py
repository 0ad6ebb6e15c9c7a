"""Coverage: every figure on hand-computed cases, the estimator's properties by simulation."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

from workbench.core.coverage import (
    CompletenessRule,
    RankModel,
    coverage_report,
    discovery_curve,
    estimate_missing,
    fit_rank_model,
    grades_counted,
    horvitz_thompson,
    last_quarter_share,
    observe,
    system_figures,
)
from workbench.core.model import Judgment, PoolEntry, Provenance, Status
from workbench.core.pool.sampling import sample_outside_pool


def pooled(qid: str, doc: str, position: int, *prov: tuple[str, int]) -> PoolEntry:
    return PoolEntry(qid, doc, position, provenance=tuple(Provenance(s, r, 0.0) for s, r in prov))


def sampled(qid: str, doc: str, position: int, stratum: str, prob: float) -> PoolEntry:
    return PoolEntry(qid, doc, position, stratum=stratum, inclusion_prob=prob)


# -- hand-computed figures -----------------------------------------------------------------------

POOL = [
    pooled("q", "a", 0, ("bm25", 1), ("dense", 2)),
    pooled("q", "b", 1, ("bm25", 2)),
    pooled("q", "c", 2, ("dense", 1)),
    pooled("q", "d", 3, ("bm25", 3)),
    pooled("q", "e", 4, ("dense", 3)),
]


def test_system_figures_judged_at_k_relevant_and_unique():
    grades = {"a": 2, "b": 1, "c": 0, "e": 3}  # d unjudged
    figures = system_figures(POOL, grades)
    # bm25 top: a(1) b(2) d(3): judged@5 = 2/3; relevant a, b; unique b (dense has a, e)
    assert figures["bm25"].judged_at[5] == pytest.approx(2 / 3)
    assert figures["bm25"].relevant == 2
    assert figures["bm25"].unique_relevant == 1
    assert figures["dense"].judged_at[5] == 1.0
    assert figures["dense"].relevant == 2
    assert figures["dense"].unique_relevant == 1  # e
    # judged@k only counts the system's own top k
    assert system_figures(POOL, {"a": 1})["bm25"].judged_at[5] == pytest.approx(1 / 3)


def test_discovery_curve_in_queue_order_and_last_quarter():
    entries = POOL + [sampled("q", "s1", 5, "rank:21-50", 0.5)]
    curve = discovery_curve(entries, {"e": 1, "a": 2, "b": 0, "s1": 1, "c": 1})
    assert curve == [1, 1, 2, 3, 4]  # a b c e s1 (d unjudged)
    # 5 judgments: the last quarter is the last 2 (ceil 5/4); they found 2 of 4
    assert last_quarter_share(curve) == pytest.approx(0.5)
    assert last_quarter_share([0, 0]) is None
    assert last_quarter_share([1, 1, 1, 1]) == 0.0


def test_observe_strata_populations_and_the_unsampled_rest():
    entries = POOL + [
        sampled("q", "x1", 5, "rank:21-50", 0.25),
        sampled("q", "x2", 6, "rank:21-50", 0.25),
        sampled("q", "y1", 7, "rest", 0.1),
    ]
    grades = {"a": 1, "b": 0, "c": 0, "d": 0, "e": 0, "x1": 1, "x2": 0}
    obs = observe("q", entries, grades, corpus_size=30)
    assert (obs.pool_size, obs.pool_judged, obs.pool_relevant) == (5, 5, 1)
    strata = {s.name: s for s in obs.strata}
    assert strata["rank:21-50"].population == 8  # 2 / 0.25
    assert (strata["rank:21-50"].judged, strata["rank:21-50"].relevant) == (2, 1)
    assert strata["rest"].population == 10 and strata["rest"].judged == 0
    assert strata["unsampled"].population == 30 - 5 - 8 - 10
    assert obs.partial_relevant == 0  # a was found by both systems
    # HT: 1 in the pool + 8 * 1/2 in the band; the unjudged 'rest' has no estimate by design
    assert horvitz_thompson(obs) == pytest.approx(1 + 4)


def test_resolve_grades_one_annotator_or_the_rule():
    rows = [
        Judgment("ann", "q", "a", 2),
        Judgment("bob", "q", "a", 0),
        Judgment("judge", "q", "a", 3, role="adjudicator"),
        Judgment("llm", "q", "b", 3, role="model"),
        Judgment("oracle", "q", "c", 1, role="oracle"),
    ]
    assert grades_counted(rows) == {"q": {"a": 3, "c": 1}}
    assert grades_counted(rows, "llm") == {"q": {"b": 3}}
    assert grades_counted(rows, "bob") == {"q": {"a": 0}}


# -- the report ----------------------------------------------------------------------------------


def test_unmeasured_without_a_judged_sample_and_json_shape():
    grades = {"q": {"a": 1, "b": 0, "c": 0, "d": 0, "e": 2}}
    report = coverage_report(POOL, grades, corpus_size=100, k=5)
    row = report.queries["q"]
    assert row.status == Status.UNMEASURED
    assert row.est_rel is None and row.completeness is None
    assert (row.pool, row.judged, row.relevant) == (5, 5, 2)
    assert row.relevant_by_grade == {1: 1, 2: 1}
    assert row.label_coverage == pytest.approx(0.05)
    assert row.ceiling == 1.0
    assert report.summary.unmeasured == 1
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data  # plain data
    assert list(data) == ["k", "thresholds", "queries", "summary", "model"]
    shown = data["queries"]["q"]
    assert list(shown) == [
        "pool", "sampled", "judged", "unjudged", "relevant", "relevant_by_grade",
        "label_coverage", "ceiling", "est_rel", "est_rel_low", "est_rel_high", "est_rel_ht",
        "completeness", "completeness_low", "completeness_high", "ceiling_est", "status",
        "to_estimate", "systems", "discovery", "last_quarter_share", "strata",
    ]  # fmt: skip
    assert shown["status"] == "unmeasured" and type(shown["status"]) is str
    assert shown["relevant_by_grade"] == {"1": 1, "2": 1}
    assert list(shown["systems"]["bm25"]) == [
        "judged@5", "judged@10", "judged@20", "relevant", "unique_relevant"
    ]  # fmt: skip
    assert data["summary"]["unmeasured"] == 1 and data["model"] is None


def test_census_outside_the_pool_is_exact_and_complete():
    """Every outside doc judged (inclusion 1): |Rel| is known, the interval is a point."""
    entries = POOL + [sampled("q", f"o{i}", 5 + i, "rank:21-50", 1.0) for i in range(5)]
    grades = {"q": {e.doc_id: 0 for e in entries} | {"a": 1, "o3": 1}}
    row = coverage_report(entries, grades, corpus_size=10).queries["q"]
    assert row.est_rel == row.est_rel_low == row.est_rel_high == 2
    assert row.completeness == 1.0 and row.completeness_low == 1.0
    assert row.status == "complete"


def test_zero_relevant_in_every_stratum_gives_a_finite_honest_interval():
    entries = (
        POOL
        + [sampled("q", f"o{i}", 5 + i, "rank:21-50", 0.1) for i in range(5)]
        + [sampled("q", f"t{i}", 10 + i, "rest", 0.01) for i in range(3)]
    )
    grades = {"q": {e.doc_id: 0 for e in entries} | {"a": 1, "c": 2}}
    row = coverage_report(entries, grades, corpus_size=400).queries["q"]
    assert row.status in ("complete", "incomplete")
    assert row.est_rel_low >= 2  # never below what was judged relevant
    assert math.isfinite(row.est_rel_high)
    assert row.est_rel_high < 2 + 395  # not the whole unjudged corpus
    assert 0 < row.completeness_low <= row.completeness <= 1


def test_thresholds_decide_the_status():
    entries = POOL + [sampled("q", f"o{i}", 5 + i, "rank:21-50", 0.5) for i in range(5)]
    grades = {"q": {e.doc_id: 0 for e in entries} | {"a": 1, "b": 1, "c": 1}}
    strict = coverage_report(entries, grades, 15, thresholds=CompletenessRule(complete_at=1.0))
    loose = coverage_report(entries, grades, 15, thresholds=CompletenessRule(complete_at=0.01))
    assert strict.queries["q"].status == "incomplete"
    assert loose.queries["q"].status == "complete"
    many = coverage_report(entries, grades, 15, thresholds=CompletenessRule(min_samples=6))
    assert many.queries["q"].status == "unmeasured"


# -- estimator properties on synthetic populations where relevance decays with rank ----------------


def synthetic_population(n_queries: int, n_docs: int, seed: int):
    """Two systems whose rankings put relevant docs early (with noise): ids, rankings to depth
    300, the true relevant sets, the depth-20 pool and its queue entries with provenance."""
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(n_docs)]
    rankings: dict[str, dict[str, list[str]]] = {"s1": {}, "s2": {}}
    truth: dict[str, set[str]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        level = rng.gauss(-0.5, 0.8)
        latent = {d: rng.random() for d in ids}
        order = sorted(ids, key=lambda d: latent[d])
        truth[qid] = {
            d
            for r, d in enumerate(order, 1)
            if rng.random() < 1 / (1 + math.exp(-(level - 1.1 * math.log(r))))
        }
        for system, noise in (("s1", 0.15), ("s2", 0.25)):
            rankings[system][qid] = sorted(ids, key=lambda d: latent[d] + rng.gauss(0, noise))[:300]
    pool = {q: set(rankings["s1"][q][:20]) | set(rankings["s2"][q][:20]) for q in truth}
    pool_entries = []
    for qid, members in pool.items():
        ranks = {s: {d: r for r, d in enumerate(rankings[s][qid][:20], 1)} for s in rankings}
        for i, d in enumerate(sorted(members)):
            prov = tuple(Provenance(s, ranks[s][d], 0.0) for s in ranks if d in ranks[s])
            pool_entries.append(PoolEntry(qid, d, i, provenance=prov))
    return ids, rankings, truth, pool, pool_entries


def oracle(entries, truth):
    grades: dict[str, dict[str, int]] = {q: {} for q in truth}
    for e in entries:
        grades[e.query_id][e.doc_id] = int(e.doc_id in truth[e.query_id])
    return grades


def test_horvitz_thompson_is_unbiased_over_repeated_samples():
    ids, rankings, truth, pool, pool_entries = synthetic_population(1, 800, seed=11)
    estimates = []
    for seed in range(300):
        sample = sample_outside_pool(rankings, pool, ids, 30, seed=seed, rank_depth=300)
        grades = oracle(pool_entries + sample, truth)["q0"]
        estimates.append(horvitz_thompson(observe("q0", pool_entries + sample, grades, len(ids))))
    true_rel = len(truth["q0"])
    mean = sum(estimates) / len(estimates)
    spread = (sum((x - mean) ** 2 for x in estimates) / (len(estimates) - 1)) ** 0.5
    assert spread > 0
    assert abs(mean - true_rel) < 3 * spread / len(estimates) ** 0.5


def test_interval_covers_the_true_relevant_count():
    ids, rankings, truth, pool, pool_entries = synthetic_population(80, 500, seed=5)
    entries = pool_entries + sample_outside_pool(rankings, pool, ids, 40, seed=5, rank_depth=300)
    n_docs = len(ids)
    report = coverage_report(entries, oracle(entries, truth), n_docs, draws=2000)
    inside = [
        row.est_rel_low <= len(truth[qid]) <= row.est_rel_high
        for qid, row in report.queries.items()
    ]
    assert sum(inside) / len(inside) >= 0.9
    # and it says something: the median interval is narrower than the unjudged corpus by far
    widths = sorted(row.est_rel_high - row.est_rel_low for row in report.queries.values())
    assert widths[len(widths) // 2] < 0.2 * (n_docs - 60)
    # the model estimate beats assuming the judged set is complete
    model_error = naive_error = 0.0
    for qid, row in report.queries.items():
        if not truth[qid]:
            continue
        true_completeness = row.relevant / len(truth[qid])
        model_error += abs(row.completeness - true_completeness)
        naive_error += abs(1 - true_completeness)
    assert model_error < naive_error


def test_core_imports_stay_light():
    code = (
        "import sys, workbench.core.coverage, workbench.core.pool.sampling, "
        "workbench.reports.coverage\n"
        "heavy = [m for m in ('textual', 'torch', 'sentence_transformers', 'scipy', 'numpy')"
        " if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_fit_carries_its_own_uncertainty():
    """The fit comes with weighted draws of its hyperparameters (importance sampling of their
    posterior), and mixing over them widens the intervals (here: about 25% in total)."""
    ids, rankings, truth, pool, pool_entries = synthetic_population(12, 400, seed=3)
    entries = pool_entries + sample_outside_pool(rankings, pool, ids, 20, seed=3, rank_depth=300)
    grades = oracle(entries, truth)
    by_query: dict[str, list] = {}
    for e in entries:
        by_query.setdefault(e.query_id, []).append(e)
    observations = [observe(q, by_query[q], grades[q], len(ids)) for q in sorted(by_query)]
    model = fit_rank_model(observations)
    assert model is not None and model.draws
    assert abs(sum(d.weight for d in model.draws) - 1) < 1e-9
    assert model.slope_sd > 0
    # the draws differ from the mode: the curve is not taken as known
    assert any(d.curve != model.curve or d.tau != model.tau for d in model.draws)
    import numpy as np

    plugged = RankModel(**{**model.__dict__, "draws": [], "cache": {}})
    widths = [0.0, 0.0]
    for obs in observations:
        for i, fit in enumerate((plugged, model)):
            totals = estimate_missing(obs, fit, draws=2000, seed=1)
            widths[i] += float(np.quantile(totals, 0.975) - np.quantile(totals, 0.025))
    assert widths[1] > widths[0]


def test_a_query_whose_whole_corpus_is_judged_is_complete_and_exact():
    """Nothing left unjudged: |Rel| is known exactly, whatever the sample."""
    entries = [
        PoolEntry("q", f"d{i}", i, provenance=(Provenance("bm25", i + 1, 1.0),)) for i in range(4)
    ]
    grades = {"q": {"d0": 2, "d1": 0, "d2": 1, "d3": 0}}
    row = coverage_report(entries, grades, 4, query_ids=["q"], k=10).queries["q"]
    assert (row.est_rel, row.est_rel_low, row.est_rel_high) == (2, 2, 2)
    assert row.completeness_low == 1.0 and row.status == "complete"
