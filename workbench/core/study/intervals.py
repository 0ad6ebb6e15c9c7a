"""Study intervals: the joint 95% interval of a run's mean (R@k, P@k, nDCG@k) over the scored
queries, and of the difference between two runs' means, under the relevant passages nobody has
judged yet, from the joint draws of `draws`.

Numerators are earned: the adaptive queue judges every pooled system's top k first (its fair
start), so a pooled run's top k holds no unjudged passage and its P@k, its recall's numerator
and its DCG@k are exact; only |Rel| and the ideal DCG are drawn. A run scored later may have
unjudged passages in its top k: per draw and query, which of them are relevant (Bernoulli, at
the relevance model's probability for a candidate under that draw's model weights, drawn from
the fit's posterior, at the rest's per-passage rate of that draw elsewhere), and each interval
says the share of top-k places that rests on it (`imputed`). Then the query's |Rel| (the
judged relevant plus the draw's missing counts, at least the unjudged top-k passages drawn
relevant), and for nDCG the grades of the relevant not yet judged: drawn from the grades of the
query's judged relevant passages (each relevant grade of the study given half a pseudo-count),
so the ideal DCG moves with them. The run's figure is then
computed as `metrics` computes it, per draw; the mean over the scored queries per draw gives the
interval (its 2.5% and 97.5% quantiles) and the estimate (the median). Two runs' deltas use the
same draws, so what the missing judgments leave open is the same for both.

bpref is left out: with every relevant passage found its figure also depends on which passages
would be judged non-relevant, which no draw here says."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.interval_level import TAILS
from workbench.core.measures.measure_key import parse_key
from workbench.core.measures.measure_view import RankingLike, top_k
from workbench.core.measures.metrics import MEASURES, gain_of
from workbench.core.random_streams import interval_stream
from workbench.core.study.draws import StudyDraws

STUDY_MEASURES = ("R", "P", "nDCG")
"""The measures a study interval is given for."""


@dataclass(frozen=True, slots=True)
class StudyInterval:
    """A study figure: the estimate (the draws' median) and its 95% interval over `queries`
    scored queries; all three None when some scored query has no estimate yet (`unmeasured`)."""

    estimate: float | None
    low: float | None
    high: float | None
    queries: int
    unmeasured: tuple[str, ...] = ()
    imputed: float = 0.0
    """The share of the run's top-k places over these queries that nobody judged: what the
    figure takes from the relevance model (with its fit's uncertainty) rather than from grades.
    0 for every pooled run once the queue's fair start (every system's top k) is judged."""

    @property
    def width(self) -> float | None:
        return None if self.low is None or self.high is None else self.high - self.low

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"estimate": self.estimate, "low": self.low, "high": self.high}
        data["queries"] = self.queries
        if self.estimate is not None:
            data["imputed"] = round(self.imputed, 6)
        if self.unmeasured:
            data["unmeasured"] = list(self.unmeasured)
        return data


@dataclass
class RunStudy:
    """One run's study: each measure key's interval, and per key the per-query figures per
    draw (query -> array), which deltas and the stopping rule read."""

    intervals: dict[str, StudyInterval]
    per_query: dict[str, dict[str, Any]] = field(default_factory=dict)
    scored: dict[str, list[str]] = field(default_factory=dict)
    waiting: tuple[str, ...] = ()
    """The study's queries with no estimate yet and nothing relevant found (outside eval's
    means for now): until they have one, no study figure (the one found relevant joins)."""
    models: Any = None
    """Per draw, the estimator of the candidates' missing counts (`StudyDraws.models`)."""


def _interval(values: Any, queries: int, models: Any = None) -> StudyInterval:
    """The draws' median and 95% interval; with `models`, the hull of each estimator's own
    interval (valid where either is: `candidates`)."""
    import numpy as np

    ends = list(TAILS)
    groups = [values] if models is None else [values[models == m] for m in np.unique(models)]
    lows, highs = zip(*(np.nanquantile(g, ends) for g in groups if len(g)), strict=True)
    return StudyInterval(float(np.nanmedian(values)), float(min(lows)), float(max(highs)), queries)


def _discounts(k: int) -> Any:
    import numpy as np

    return 1.0 / np.log2(np.arange(k) + 2.0)


def _ideal_dcg(values: Sequence[float], counts: Any, k: int) -> Any:
    """Per draw, the DCG of the top k of a multiset of gains: `values` (descending, distinct)
    with `counts` (draws x values) of each."""
    import numpy as np

    cum = np.concatenate([[0.0], np.cumsum(_discounts(k))])
    ends = np.minimum(np.cumsum(counts, axis=1), k).astype(int)
    starts = np.concatenate([np.zeros((counts.shape[0], 1), dtype=int), ends[:, :-1]], axis=1)
    return (np.asarray(values)[None, :] * (cum[ends] - cum[starts])).sum(axis=1)


# long: one query's draws serve every run and every k in one pass (the RNG's order)
def study(
    draws: StudyDraws,
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, RankingLike]],
    ks: Sequence[int],
    scored: Mapping[str, Mapping[str, Sequence[str]]],
    rel_threshold: int = 1,
    gain: str = "linear",
    measures: Sequence[str] = STUDY_MEASURES,
) -> dict[str, RunStudy]:
    """Every run's study intervals. `runs`: name -> query -> ranking (aliases folded);
    `scored`: name -> measure key ('R@10') -> the queries its mean covers (eval's)."""
    import numpy as np

    deepest = max(ks)
    count = draws.count
    relevant_grades = sorted(
        {g for judged in qrels.values() for g in judged.values() if g >= rel_threshold}
    ) or [rel_threshold]
    wanted = {q for per_key in scored.values() for qs in per_key.values() for q in qs}
    chosen = [MEASURES[m] for m in STUDY_MEASURES if m in measures]
    prior = _study_grades(draws, qrels, relevant_grades)
    figures: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in runs}
    unjudged_at: dict[str, dict[int, dict[str, tuple[int, int]]]] = {name: {} for name in runs}
    for qid in sorted(wanted):
        qd = draws.queries.get(qid)
        if qd is None or not qd.measured:
            continue
        judged = qrels.get(qid, {})
        rng = interval_stream(draws.seed, qid)
        tops = {name: _once(top_k(r.get(qid, ()), deepest)) for name, r in runs.items()}
        unjudged: list[str] = []
        seen: set[str | None] = {None}
        for top in tops.values():
            for doc in top:
                if doc not in seen and judged.get(doc, -1) < 0:
                    seen.add(doc)
                    unjudged.append(doc)
        column = {d: i for i, d in enumerate(unjudged)}
        is_cand = np.array([d in qd.p for d in unjudged], dtype=bool)
        probs = np.empty((count, len(unjudged)))
        for i, doc in enumerate(unjudged):
            probs[:, i] = draws.probabilities(qid, doc) if is_cand[i] else qd.rest_rate
        hit = rng.random((count, len(unjudged))) < probs
        missing_c = np.maximum(qd.candidates_missing, hit[:, is_cand].sum(axis=1))
        missing_r = np.maximum(qd.rest_missing, hit[:, ~is_cand].sum(axis=1))
        rel_judged = sum(1 for g in judged.values() if g >= rel_threshold)
        total = rel_judged + missing_c + missing_r
        # nDCG: grades of the relevant not yet judged, from the query's judged relevant grades
        share = _grade_share(qid, qd.drawn, judged, relevant_grades, prior)
        level_of = rng.choice(len(share), (count, len(unjudged)), p=share)
        gains_drawn = np.array([gain_of(g, gain) for g in relevant_grades])[level_of]
        others = np.maximum(total - rel_judged - hit.sum(axis=1), 0).astype(np.int64)
        other_counts = rng.multinomial(others, share)
        values = sorted(
            {gain_of(g, gain) for g in judged.values() if g > 0}
            | {gain_of(g, gain) for g in relevant_grades},
            reverse=True,
        )
        index = {v: i for i, v in enumerate(values)}
        counts = np.zeros((count, len(values)))
        for g in judged.values():
            if g > 0:
                counts[:, index[gain_of(g, gain)]] += 1
        for j, level in enumerate(relevant_grades):
            counts[:, index[gain_of(level, gain)]] += other_counts[:, j]
            counts[:, index[gain_of(level, gain)]] += (hit & (level_of == j)).sum(axis=1)
        for name, top in tops.items():
            per = figures[name]
            for k in ks:
                cols = [column[d] for d in top[:k] if d in column]
                unjudged_at[name].setdefault(k, {})[qid] = (len(cols), len(top[:k]))
                view = _TopK(top, k, judged, (rel_threshold, gain), total, (hit, cols, column),
                             (gains_drawn, values, counts))  # fmt: skip
                for m in chosen:  # through the registry, as eval scores (`measure_formulas`)
                    per.setdefault(m.key(k), {})[qid] = m.per_draw(view, k)
    out: dict[str, RunStudy] = {}
    waiting = tuple(sorted(q for q, qd in draws.queries.items() if not qd.measured))
    for name in runs:
        result = RunStudy({}, figures[name], {}, waiting, draws.models)
        for key, queries in scored.get(name, {}).items():
            if key not in figures[name] and parse_key(key).name not in measures:
                continue
            queries = list(queries)
            result.scored[key] = queries
            missing = tuple(q for q in queries if q not in figures[name].get(key, {}))
            if missing or waiting or not queries:
                unmeasured = tuple(sorted(set(missing) | set(waiting)))
                result.intervals[key] = StudyInterval(None, None, None, len(queries), unmeasured)
                continue
            stacked = np.vstack([figures[name][key][q] for q in queries])
            interval = _interval(np.nanmean(stacked, axis=0), len(queries), draws.models)
            k = parse_key(key).cutoff or 0
            places = [unjudged_at[name][k][q] for q in queries]
            share = sum(u for u, _ in places) / max(sum(n for _, n in places), 1)
            result.intervals[key] = replace(interval, imputed=share)
        out[name] = result
    return out


class _TopK:
    """A run's top k of one query per draw (`DrawView`): the relevant in it, judged or drawn
    among its unjudged passages (`drawn`: which are relevant per draw, `hit`, their columns
    there and each passage's column), and |Rel| (`relevant`); the DCGs only when a measure reads
    them, from the drawn grades (`grades`: the gains drawn per unjudged passage, the distinct
    gains, and each one's count per draw)."""

    def __init__(
        self,
        top: Sequence[str | None],
        k: int,
        judged: Mapping[str | None, int],
        scale: tuple[int, str],
        relevant: Any,
        drawn: tuple[Any, list[int], Mapping[str | None, int]],
        grades: tuple[Any, Sequence[float], Any],
    ):
        self.top, self.k, self.judged, self.gain = top[:k], k, judged, scale[1]
        self.relevant, self.grades = relevant, grades
        self.hit, self.cols, self.column = drawn
        judged_rel = sum(1 for d in self.top if judged.get(d, -1) >= scale[0])
        self.found = judged_rel + self.hit[:, self.cols].sum(axis=1)

    @property
    def dcg(self) -> Any:
        disc = _discounts(self.k)
        judged = self.judged
        dcg = sum(
            gain_of(judged[d], self.gain) * disc[i]
            for i, d in enumerate(self.top)
            if judged.get(d, -1) > 0
        )
        at = [i for i, d in enumerate(self.top) if d in self.column]
        gains_drawn = self.grades[0]
        return dcg + (self.hit[:, self.cols] * gains_drawn[:, self.cols] * disc[at]).sum(axis=1)

    @property
    def ideal(self) -> Any:
        _, values, counts = self.grades
        return _ideal_dcg(values, counts, self.k)


def _once(top: Sequence[str]) -> list[str | None]:
    """The top k with a document's later places empty (None): a passage ranked twice (aliases
    folded onto one) counts once, at its first place, as `metrics` counts it."""
    seen: set[str] = set()
    out: list[str | None] = []
    for doc in top:
        out.append(None if doc in seen else doc)
        seen.add(doc)
    return out


PRIOR_WEIGHT = 2.0
"""How many of a query's own drawn relevant grades the study's grade shares count as."""


def _study_grades(
    draws: StudyDraws, qrels: Mapping[str, Mapping[str, int]], levels: Sequence[int]
) -> Any:
    """The shares of the relevant grades among every query's relevant passages found by a
    random draw (half a pseudo-count each): the study's view of the grades not yet found."""
    import numpy as np

    counts = np.full(len(levels), 0.5)
    index = {g: i for i, g in enumerate(levels)}
    for qid, qd in draws.queries.items():
        judged = qrels.get(qid, {})
        for doc in qd.drawn:
            if judged.get(doc, -1) in index:
                counts[index[judged[doc]]] += 1
    return counts / counts.sum()


def _grade_share(
    qid: str, drawn: frozenset[str], judged: Mapping[str, int], levels: Sequence[int], prior: Any
) -> Any:
    """A query's shares of the relevant grades for its relevant not yet found: its own drawn
    relevant passages' grades with the study's shares as `PRIOR_WEIGHT` pseudo-counts. Drawn,
    not all judged: the feedback picks find the clearest relevant first, so the grades found
    so far run higher than the ones left (cranfield, graded 1-3: nDCG@10's interval from all
    judged grades sat below the truth at 150 judgments per query)."""
    import numpy as np

    own = np.array([sum(1 for d in drawn if judged.get(d, -1) == g) for g in levels], float)
    counts = own + PRIOR_WEIGHT * prior
    return counts / counts.sum()


def study_delta(a: RunStudy, b: RunStudy, key: str) -> StudyInterval | None:
    """The interval of mean(a) - mean(b) of `key` over the queries both means cover, from the
    same draws (`imputed`: the larger of the two runs' shares); None when either run has no
    study of `key`."""
    import numpy as np

    if key not in a.scored or key not in b.scored:
        return None
    common = [q for q in a.scored[key] if q in set(b.scored[key])]
    if not common:
        return StudyInterval(None, None, None, 0)
    missing = tuple(
        q for q in common if q not in a.per_query.get(key, {}) or q not in b.per_query.get(key, {})
    )
    if missing or a.waiting or b.waiting:
        unmeasured = tuple(sorted(set(missing) | set(a.waiting) | set(b.waiting)))
        return StudyInterval(None, None, None, len(common), unmeasured)
    diff = np.vstack([a.per_query[key][q] - b.per_query[key][q] for q in common])
    shares = [run.intervals[key].imputed for run in (a, b) if key in run.intervals]
    values = np.nanmean(diff, axis=0)
    return replace(_interval(values, len(common), a.models), imputed=max(shares, default=0))


def variance_shares(run: RunStudy, key: str) -> dict[str, float]:
    """Each scored query's share of the variance of the run's mean of `key` (its own figure's
    variance over the draws / the queries squared): where judging narrows the interval."""
    import numpy as np

    queries = run.scored.get(key, [])
    figures = run.per_query.get(key, {})
    shares = {q: float(np.nanvar(figures[q])) / len(queries) ** 2 for q in queries if q in figures}
    return {q: v for q, v in shares.items() if math.isfinite(v)}
