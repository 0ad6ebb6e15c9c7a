"""How complete is the judged relevant set? Per-query pool and judging figures, per-system
contribution (Zobel's unique relevant), the discovery curve, and an estimate of the relevant
documents the pool missed, from the stratified sample judged outside it (see workbench.sampling).

The estimate (docs/why in `estimate_missing`): a beta-binomial model per stratum whose prior
mean depends on the query's pool relevance rate, fitted across all queries (empirical Bayes,
borrowing strength), then per query a posterior for each stratum's relevance rate and a
posterior-predictive draw of the relevant count among its unjudged documents. Summing draws
over strata gives est |Rel| with a 95% interval that stays finite and honest when a stratum's
sample holds no relevant document. The design-based Horvitz–Thompson estimate is reported beside it.

Pure: plain data in, plain data out; numpy only (imported lazily).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.model import Judgment, PoolEntry

POOL_STRATUM = "pool"
UNSAMPLED = "unsampled"
KS = (5, 10, 20)


@dataclass(frozen=True)
class Thresholds:
    """When a query's judged relevant set counts as complete.

    complete: completeness_low >= complete_at (the lower end of the 95% interval, so the figure
    users act on is a one-sided bound); unmeasured: fewer than min_samples judged items outside
    the pool (nothing to estimate from); incomplete: otherwise."""

    complete_at: float = 0.8
    min_samples: int = 1
    level: float = 0.95

    def as_dict(self) -> dict[str, float]:
        return {
            "complete_at": self.complete_at,
            "min_samples": self.min_samples,
            "level": self.level,
        }


# -- judgments -----------------------------------------------------------------------------------

ROLE_PRIORITY = {"adjudicator": 3, "human": 2, "oracle": 2}
"""Whose grade counts when several annotators graded a pair: an adjudicator over others; among
equals the latest row. 'model' grades count only when asked for by annotator name."""


def resolve_grades(
    judgments: Iterable[Judgment], annotator: str | None = None
) -> dict[str, dict[str, int]]:
    """query -> doc -> the grade that counts, from current judgments (latest row per annotator)."""
    best: dict[tuple[str, str], tuple[int, int, int]] = {}
    for order, j in enumerate(judgments):
        if j.grade is None:
            continue
        if annotator is not None:
            if j.annotator != annotator:
                continue
            priority = 1
        else:
            priority = ROLE_PRIORITY.get(j.role, 0)
            if priority == 0:
                continue
        key = (j.query_id, j.doc_id)
        if key not in best or (priority, order) >= best[key][:2]:
            best[key] = (priority, order, j.grade)
    grades: dict[str, dict[str, int]] = {}
    for (qid, did), (_, _, grade) in best.items():
        grades.setdefault(qid, {})[did] = grade
    return grades


# -- observations --------------------------------------------------------------------------------


@dataclass
class StratumObs:
    """One stratum of one query: its population, how many of it were judged, how many relevant."""

    name: str
    population: int
    sampled: int = 0
    judged: int = 0
    relevant: int = 0
    inclusion_prob: float = 1.0

    @property
    def unjudged(self) -> int:
        return max(self.population - self.judged, 0)


@dataclass
class QueryObs:
    query_id: str
    pool_size: int
    pool_judged: int
    pool_relevant: int
    extra_relevant: int = 0
    """Judged relevant docs that are in no queue entry (e.g. imported labels)."""
    strata: list[StratumObs] = field(default_factory=list)

    @property
    def judged_relevant(self) -> int:
        return (
            self.pool_relevant
            + self.extra_relevant
            + sum(s.relevant for s in self.strata if s.name != POOL_STRATUM)
        )

    @property
    def sample_judged(self) -> int:
        return sum(s.judged for s in self.strata)


def observe(
    query_id: str,
    entries: Sequence[PoolEntry],
    grades: Mapping[str, int],
    corpus_size: int,
    rel_threshold: int = 1,
) -> QueryObs:
    """Group one query's queue entries into the pool and its sampling strata."""
    pool_docs = [e for e in entries if e.stratum == POOL_STRATUM]
    judged_pool = [e for e in pool_docs if e.doc_id in grades]
    strata: dict[str, StratumObs] = {}
    for e in entries:
        if e.stratum == POOL_STRATUM:
            continue
        s = strata.setdefault(e.stratum, StratumObs(e.stratum, 0, inclusion_prob=e.inclusion_prob))
        s.sampled += 1
        if e.doc_id in grades:
            s.judged += 1
            s.relevant += grades[e.doc_id] >= rel_threshold
    for s in strata.values():
        s.population = max(int(round(s.sampled / s.inclusion_prob)), s.sampled)
    known = {e.doc_id for e in entries}
    obs = QueryObs(
        query_id=query_id,
        pool_size=len(pool_docs),
        pool_judged=len(judged_pool),
        pool_relevant=sum(grades[e.doc_id] >= rel_threshold for e in judged_pool),
        extra_relevant=sum(
            1 for d, g in grades.items() if d not in known and g >= rel_threshold
        ),
        strata=sorted(strata.values(), key=lambda s: _stratum_key(s.name)),
    )
    if strata:
        # Documents in no stratum (e.g. allocation gave a stratum nothing) form their own.
        left = corpus_size - len(pool_docs) - sum(s.population for s in obs.strata)
        if left > 0:
            obs.strata.append(StratumObs(UNSAMPLED, left, inclusion_prob=0.0))
    return obs


def _stratum_key(name: str) -> tuple[int, str]:
    if name.startswith("rank:"):
        try:
            return (int(name[5:].split("-")[0]), name)
        except ValueError:
            pass
    return (10**9, name)


# -- the estimator -------------------------------------------------------------------------------


def _logit_rate(relevant: int, judged: int) -> float:
    """Empirical logit of the pool's relevance rate: the query-level covariate of the prior."""
    return math.log((relevant + 0.5) / (judged - relevant + 0.5))


def _nelder_mead(fun, start: Sequence[float], step: float = 0.5, iters: int = 400) -> list[float]:
    """Minimize fun over R^d (small d) without scipy."""
    import numpy as np

    dim = len(start)
    simplex = [np.array(start, dtype=float)]
    for i in range(dim):
        point = np.array(start, dtype=float)
        point[i] += step
        simplex.append(point)
    values = [fun(p) for p in simplex]
    for _ in range(iters):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-9:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        reflected = centroid + (centroid - worst)
        fr = fun(reflected)
        if fr < values[0]:
            expanded = centroid + 2 * (centroid - worst)
            fe = fun(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (worst - centroid)
            fc = fun(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best + 0.5 * (p - best) for p in simplex]
                values = [fun(p) for p in simplex]
    return list(simplex[int(np.argmin(values))])


def beta_binomial_loglik(y, n, alpha, beta):
    """log P(y | n, alpha, beta) up to the binomial coefficient, exact for integer counts:
    sum_{i<y} log(alpha+i) + sum_{i<n-y} log(beta+i) - sum_{i<n} log(alpha+beta+i)."""
    import numpy as np

    y = np.asarray(y)
    n = np.asarray(n)
    steps = np.arange(max(int(n.max(initial=0)), 1))
    alpha = np.asarray(alpha, dtype=float)[:, None]
    beta = np.asarray(beta, dtype=float)[:, None]
    return (
        (np.log(alpha + steps) * (steps < y[:, None])).sum(1)
        + (np.log(beta + steps) * (steps < (n - y)[:, None])).sum(1)
        - (np.log(alpha + beta + steps) * (steps < n[:, None])).sum(1)
    )


@dataclass(frozen=True)
class StratumPrior:
    """Beta prior of a stratum's relevance rate: mean expit(intercept + slope * x_q), concentration kappa."""

    intercept: float
    slope: float
    kappa: float
    queries: int

    def alpha_beta(self, x: float) -> tuple[float, float]:
        mean = 1.0 / (1.0 + math.exp(-(self.intercept + self.slope * x)))
        mean = min(max(mean, 1e-6), 1 - 1e-6)
        return mean * self.kappa, (1 - mean) * self.kappa


MIN_QUERIES_FOR_SLOPE = 8
"""Below this many queries with a judged sample in a stratum, the prior ignores the pool covariate."""


def fit_stratum_prior(
    relevant: Sequence[int], judged: Sequence[int], covariate: Sequence[float]
) -> StratumPrior:
    """Maximum a posteriori beta-binomial prior over queries (weak priors keep it finite when
    no relevant doc was seen anywhere, or when the queries are few)."""
    import numpy as np

    y = np.asarray(relevant, dtype=int)
    n = np.asarray(judged, dtype=int)
    x = np.asarray(covariate, dtype=float)
    use_slope = len(y) >= MIN_QUERIES_FOR_SLOPE and float(np.ptp(x)) > 0
    x_center = float(x.mean()) if len(x) else 0.0

    def objective(theta) -> float:
        intercept, slope, log_kappa = theta[0], (theta[1] if use_slope else 0.0), theta[-1]
        log_kappa = min(max(log_kappa, -3.0), 9.0)
        kappa = math.exp(log_kappa)
        mean = 1.0 / (1.0 + np.exp(-(intercept + slope * (x - x_center))))
        mean = np.clip(mean, 1e-6, 1 - 1e-6)
        ll = beta_binomial_loglik(y, n, mean * kappa, (1 - mean) * kappa).sum()
        # Weak priors: rate around 2% (logit -4 +- 3), slope around 0.5 +- 1, kappa around e^2.5.
        penalty = ((intercept + 4.0) / 3.0) ** 2 / 2 + ((log_kappa - 2.5) / 1.5) ** 2 / 2
        if use_slope:
            penalty += ((slope - 0.5) / 1.0) ** 2 / 2
        return float(-ll + penalty)

    start = [-4.0, 0.5, 2.5] if use_slope else [-4.0, 2.5]
    theta = _nelder_mead(objective, start)
    slope = theta[1] if use_slope else 0.0
    log_kappa = min(max(theta[-1], -3.0), 9.0)
    return StratumPrior(
        intercept=theta[0] - slope * x_center,
        slope=slope,
        kappa=math.exp(log_kappa),
        queries=len(y),
    )


VAGUE_PRIOR = StratumPrior(intercept=0.0, slope=0.0, kappa=1.0, queries=0)
"""Jeffreys-like Beta(0.5, 0.5) for a stratum nobody sampled: honest, and wide."""


def fit_priors(observations: Iterable[QueryObs]) -> dict[str, StratumPrior]:
    """One prior per stratum name, fitted on every query that judged part of that stratum."""
    data: dict[str, tuple[list[int], list[int], list[float]]] = {}
    for obs in observations:
        x = _logit_rate(obs.pool_relevant, obs.pool_judged)
        for s in obs.strata:
            if s.judged:
                ys, ns, xs = data.setdefault(s.name, ([], [], []))
                ys.append(s.relevant)
                ns.append(s.judged)
                xs.append(x)
    priors = {name: fit_stratum_prior(*values) for name, values in data.items()}
    # Documents outside every sampled stratum borrow the deepest fitted band's prior.
    if priors and UNSAMPLED not in priors:
        priors[UNSAMPLED] = priors[max(priors, key=_stratum_key)]
    return priors


def horvitz_thompson(obs: QueryObs) -> float:
    """Design-based estimate of |Rel|: judged relevant plus, per stratum, the sample rate times
    the stratum's unjudged documents (unbiased under the stratified design)."""
    total = float(obs.pool_relevant + obs.extra_relevant)
    if obs.pool_judged < obs.pool_size and obs.pool_judged:
        total += (obs.pool_size - obs.pool_judged) * obs.pool_relevant / obs.pool_judged
    for s in obs.strata:
        if s.judged:
            total += s.population * s.relevant / s.judged
    return total


def estimate_missing(
    obs: QueryObs,
    priors: Mapping[str, StratumPrior],
    draws: int = 4000,
    seed: int = 0,
) -> Any:
    """Posterior-predictive draws of |Rel| for one query (a numpy array of `draws` totals).

    Each unjudged document of stratum h is relevant with the stratum's rate p_h, and
    p_h ~ Beta(prior(x_q) + the stratum's judged counts). Unjudged pool items use the query's own
    pool rate with a Jeffreys prior. Sums over strata carry the uncertainty of every stratum."""
    import numpy as np

    rng = np.random.default_rng([seed, zlib.crc32(obs.query_id.encode("utf-8"))])
    x = _logit_rate(obs.pool_relevant, obs.pool_judged)
    total = np.full(draws, float(obs.judged_relevant))
    pool_unjudged = obs.pool_size - obs.pool_judged
    if pool_unjudged > 0:
        rate = rng.beta(0.5 + obs.pool_relevant, 0.5 + obs.pool_judged - obs.pool_relevant, draws)
        total += rng.binomial(pool_unjudged, rate)
    for s in obs.strata:
        if s.unjudged == 0:
            continue
        prior = priors.get(s.name, VAGUE_PRIOR)
        a, b = prior.alpha_beta(x) if prior.queries else (0.5, 0.5)
        rate = rng.beta(a + s.relevant, b + s.judged - s.relevant, draws)
        total += rng.binomial(s.unjudged, rate)
    return total


# -- per-system and discovery figures ------------------------------------------------------------


def system_figures(
    entries: Sequence[PoolEntry], grades: Mapping[str, int], rel_threshold: int = 1
) -> dict[str, dict[str, float | int | None]]:
    """Per system: judged@k (share of its top k that was judged), relevant found within the pool
    depth, and unique relevant (found by no other system: Zobel's leave-one-system-out)."""
    ranks: dict[str, dict[str, int]] = {}
    for e in entries:
        if e.stratum != POOL_STRATUM:
            continue
        for p in e.provenance:
            held = ranks.setdefault(p.system, {})
            held[e.doc_id] = min(p.rank, held.get(e.doc_id, p.rank))
    relevant = {d for d, g in grades.items() if g >= rel_threshold}
    found_by: dict[str, set[str]] = {s: set(r) & relevant for s, r in ranks.items()}
    out: dict[str, dict[str, float | int | None]] = {}
    for system, held in sorted(ranks.items()):
        figures: dict[str, float | int | None] = {}
        for k in KS:
            top = [d for d, r in held.items() if r <= k]
            figures[f"judged@{k}"] = (
                sum(d in grades for d in top) / len(top) if top else None
            )
        others = set().union(*(found_by[o] for o in found_by if o != system))
        figures["relevant"] = len(found_by[system])
        figures["unique_relevant"] = len(found_by[system] - others)
        out[system] = figures
    return out


def discovery_curve(
    entries: Sequence[PoolEntry], grades: Mapping[str, int], rel_threshold: int = 1
) -> list[int]:
    """Relevant found after each judgment, judged items taken in queue order."""
    curve: list[int] = []
    found = 0
    for e in sorted(entries, key=lambda e: e.position):
        if e.doc_id in grades:
            found += grades[e.doc_id] >= rel_threshold
            curve.append(found)
    return curve


def last_quarter_share(curve: Sequence[int]) -> float | None:
    """Share of the relevant found in the last quarter of the judgments: high means the queue
    was still finding relevant documents when it ended."""
    if not curve or curve[-1] == 0:
        return None
    cut = len(curve) - math.ceil(len(curve) / 4)
    before = curve[cut - 1] if cut > 0 else 0
    return (curve[-1] - before) / curve[-1]


# -- the report ----------------------------------------------------------------------------------


def _quantile(values, q: float) -> float:
    import numpy as np

    return float(np.quantile(values, q))


def coverage_report(
    entries: Sequence[PoolEntry],
    grades: Mapping[str, Mapping[str, int]],
    corpus_size: int,
    *,
    query_ids: Sequence[str] | None = None,
    k: int = 10,
    thresholds: Thresholds = Thresholds(),
    rel_threshold: int = 1,
    draws: int = 4000,
    seed: int = 0,
) -> dict[str, Any]:
    """The coverage report as plain data: {"queries": {QID: {...}}, "summary": {...}}."""
    import numpy as np

    by_query: dict[str, list[PoolEntry]] = {}
    for e in entries:
        by_query.setdefault(e.query_id, []).append(e)
    qids = list(query_ids) if query_ids is not None else list(by_query)
    observations = {
        q: observe(q, by_query.get(q, []), grades.get(q, {}), corpus_size, rel_threshold)
        for q in qids
    }
    priors = fit_priors(observations.values())
    tail = (1 - thresholds.level) / 2
    queries: dict[str, dict[str, Any]] = {}
    for qid in qids:
        obs = observations[qid]
        query_entries = by_query.get(qid, [])
        query_grades = grades.get(qid, {})
        judged_entries = [e for e in query_entries if e.doc_id in query_grades]
        known = {e.doc_id for e in query_entries}
        judged = len(judged_entries) + sum(1 for d in query_grades if d not in known)
        relevant = obs.judged_relevant
        by_grade: dict[str, int] = {}
        for g in query_grades.values():
            if g >= rel_threshold:
                by_grade[str(g)] = by_grade.get(str(g), 0) + 1
        curve = discovery_curve(query_entries, query_grades, rel_threshold)
        row: dict[str, Any] = {
            "pool": obs.pool_size,
            "sampled": sum(s.sampled for s in obs.strata),
            "judged": judged,
            "unjudged": len(query_entries) - len(judged_entries),
            "relevant": relevant,
            "relevant_by_grade": dict(sorted(by_grade.items())),
            "label_coverage": judged / corpus_size if corpus_size else None,
            "ceiling": min(1.0, k / relevant) if relevant else None,
            "est_rel": None,
            "est_rel_low": None,
            "est_rel_high": None,
            "est_rel_ht": None,
            "completeness": None,
            "completeness_low": None,
            "completeness_high": None,
            "ceiling_est": None,
            "status": "unmeasured",
            "systems": system_figures(query_entries, query_grades, rel_threshold),
            "discovery": curve,
            "last_quarter_share": last_quarter_share(curve),
            "strata": {
                s.name: {
                    "population": s.population,
                    "sampled": s.sampled,
                    "judged": s.judged,
                    "relevant": s.relevant,
                }
                for s in obs.strata
            },
        }
        if obs.sample_judged >= thresholds.min_samples and obs.sample_judged > 0:
            totals = estimate_missing(obs, priors, draws=draws, seed=seed)
            share = relevant / np.maximum(totals, 1e-9) if relevant else np.zeros_like(totals)
            est = _quantile(totals, 0.5)
            row.update(
                est_rel=est,
                est_rel_low=_quantile(totals, tail),
                est_rel_high=_quantile(totals, 1 - tail),
                est_rel_ht=horvitz_thompson(obs),
                completeness=(relevant / est) if est > 0 else None,
                completeness_low=_quantile(share, tail) if est > 0 else None,
                completeness_high=_quantile(share, 1 - tail) if est > 0 else None,
                ceiling_est=min(1.0, k / est) if est > 0 else None,
            )
            low = row["completeness_low"]
            complete = est == 0 or (low is not None and low >= thresholds.complete_at)
            row["status"] = "complete" if complete else "incomplete"
        queries[qid] = row
    return {
        "k": k,
        "thresholds": thresholds.as_dict(),
        "queries": queries,
        "summary": summarize(queries, corpus_size),
        "priors": {
            name: {"intercept": p.intercept, "slope": p.slope, "kappa": p.kappa, "queries": p.queries}
            for name, p in sorted(priors.items(), key=lambda item: _stratum_key(item[0]))
        },
    }


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _median(values: Iterable[float | None]) -> float | None:
    kept = sorted(v for v in values if v is not None)
    if not kept:
        return None
    mid = len(kept) // 2
    return kept[mid] if len(kept) % 2 else (kept[mid - 1] + kept[mid]) / 2


def summarize(queries: Mapping[str, Mapping[str, Any]], corpus_size: int) -> dict[str, Any]:
    """Across queries: counts by status, totals, mean and median completeness, system means."""
    rows = list(queries.values())
    status = {s: sum(r["status"] == s for r in rows) for s in ("complete", "incomplete", "unmeasured")}
    systems: dict[str, dict[str, list]] = {}
    for r in rows:
        for name, figures in r["systems"].items():
            for key, value in figures.items():
                systems.setdefault(name, {}).setdefault(key, []).append(value)
    return {
        "queries": len(rows),
        **status,
        "pool": sum(r["pool"] for r in rows),
        "judged": sum(r["judged"] for r in rows),
        "relevant": sum(r["relevant"] for r in rows),
        "corpus_size": corpus_size,
        "est_rel": _sum_or_none(r["est_rel"] for r in rows),
        "mean_completeness": _mean(r["completeness"] for r in rows),
        "median_completeness": _median(r["completeness"] for r in rows),
        "mean_completeness_low": _mean(r["completeness_low"] for r in rows),
        "mean_label_coverage": _mean(r["label_coverage"] for r in rows),
        "mean_last_quarter_share": _mean(r["last_quarter_share"] for r in rows),
        "systems": {
            name: {
                key: (_mean(values) if key.startswith("judged@") else sum(v or 0 for v in values))
                for key, values in figures.items()
            }
            for name, figures in sorted(systems.items())
        },
    }


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) if kept else None


# -- store adapters ------------------------------------------------------------------------------


def coverage_for_store(
    store: Any,
    k: int = 10,
    complete_at: float = 0.8,
    min_samples: int = 1,
    annotator: str | None = None,
    rel_threshold: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """The coverage report of a judgments store (anything with pool(), current_judgments(),
    corpus_size(), queries())."""
    grades = resolve_grades(store.current_judgments(annotator), annotator)
    return coverage_report(
        store.pool(),
        grades,
        store.corpus_size(),
        query_ids=[q.query_id for q in store.queries()],
        k=k,
        thresholds=Thresholds(complete_at=complete_at, min_samples=min_samples),
        rel_threshold=rel_threshold,
        seed=seed,
    )


SUMMARY_KEYS = ("est_rel", "est_rel_low", "est_rel_high", "completeness", "completeness_low", "status")


def summary_for_store(store: Any, **options: Any) -> dict[str, Any]:
    """The compact coverage slot of golden.yaml: per-query estimate and status, the summary,
    and the thresholds that decided the status."""
    report = coverage_for_store(store, **options)
    return {
        "queries": {
            qid: {key: row[key] for key in ("pool", "judged", "relevant", *SUMMARY_KEYS)}
            for qid, row in report["queries"].items()
        },
        "summary": report["summary"],
        "thresholds": report["thresholds"],
        "method": "stratified sample outside the pool; empirical-Bayes beta-binomial per stratum",
    }
