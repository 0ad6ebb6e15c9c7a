"""Retrieval measures over plain data: rankings are doc-id lists in rank order, judged is
{doc_id: grade}. Pure: no files, no printing.

Conventions (trec_eval's, so figures agree with it to 4 decimals):

- Relevant: grade >= rel_threshold (default 1). Judged non-relevant: 0 <= grade <
  rel_threshold. A negative grade, or an absent doc, is unjudged.
- Recall@k divides by |Rel|, every judged relevant document, never min(|Rel|, k); with
  |Rel| = 0 it is undefined (None), not 0.
- A doc id repeated in a ranking keeps its slot (later docs do not move up) but scores
  nothing after its first occurrence: one document never counts twice.
- judged@k = |judged ∩ top-k| / min(k, ranking length): the share of the top-k slots that
  carry a human grade (0 included). Unjudged documents in the top k count as non-relevant,
  so judging them can only raise P@k (a lower bound) and R@k; R@k can still fall for relevant
  documents nobody judged outside the top k. None for an empty ranking.
- ceiling@k = min(1, k / |Rel|): the best R@k any ranking could reach; pct_of_ceiling@k =
  R@k / ceiling@k, a fraction (0.8 means 80% of what was reachable).

Each measure is a small declarative `Measure` in `MEASURES`; adding one is adding a
definition. `evaluate` computes a per-query table and trec_eval -c style means.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import ge

from workbench.core.model import order_pairs

RankingLike = Sequence[str] | Mapping[str, float]
"""A ranking: doc ids in rank order, or {doc_id: score} ordered by the one ordering rule
(score descending, ties by doc id descending). Scores skip sorting whole runs."""

GAINS = ("linear", "exponential")
MAX_EXPONENTIAL_GRADE = 1000
"""The largest grade `--gain exponential` takes: 2^1000 - 1 is a float (2^1024 is not), and a
DCG summing millions of such gains still stays finite, so nDCG is a number, never inf/inf."""
MAX_LINEAR_GRADE = 10**300
"""The largest grade linear gain takes: the grade as a float, summed over a ranking, stays
finite."""
MAX_GRADE = {"linear": MAX_LINEAR_GRADE, "exponential": MAX_EXPONENTIAL_GRADE}


def grade_problem(grade: int, gain: str = "linear") -> str | None:
    """Why `grade` cannot be scored under `gain`, or None when it can."""
    top = MAX_GRADE.get(gain, MAX_LINEAR_GRADE)
    if grade <= top:
        return None
    digits = str(grade)
    shown = digits if len(digits) <= 24 else f"{digits[:12]}... ({len(digits)} digits)"
    limit = "10^300" if top == MAX_LINEAR_GRADE else str(top)
    return (
        f"grade {shown} is too large: the largest grade --gain {gain} can take is {limit} "
        "(its gain must stay a finite number)"
    )


@dataclass(frozen=True, slots=True)
class QueryView:
    """One query's ranking reduced to what every measure needs, computed once.

    `hits` lists (rank_index, grade) for the judged docs (grade >= 0) at their FIRST
    occurrence in the ranking, in rank order (rank_index is 0-based)."""

    hits: tuple[tuple[int, int], ...]
    depth: int
    """Ranking length, duplicate slots included."""
    rel_count: int
    nonrel_count: int
    rel_threshold: int
    ideal_gains: tuple[float, ...]
    """Gains of every judged doc, best first: the ideal ranking for nDCG."""
    gain: str = "linear"


def gain_of(grade: int, gain: str = "linear") -> float:
    """Linear gain is the grade; exponential is 2^grade - 1. Non-positive grades gain 0.
    ValueError for a grade above `MAX_GRADE[gain]` (its gain would not be a finite float)."""
    if grade <= 0:
        return 0.0
    if grade > MAX_GRADE.get(gain, MAX_LINEAR_GRADE):
        raise ValueError(grade_problem(grade, gain))
    return float(grade) if gain == "linear" else float(2**grade - 1)


def _hits_from_scores(
    docs: Mapping[str, float], judged: Mapping[str, int]
) -> tuple[tuple[int, int], ...]:
    """(rank_index, grade) of the judged docs in `docs`, ranked by the ordering rule without
    sorting the whole run: a doc's rank index is how many docs outrank it."""
    present = [(docs[d], d, g) for d, g in judged.items() if g >= 0 and d in docs]
    if not present:
        return ()
    present.sort(reverse=True)  # the ordering rule: score descending, then doc id descending
    values = sorted(docs.values())
    n = len(values)
    hits: list[tuple[int, int]] = []
    tied_ids: dict[float, list[str]] | None = None
    for score, doc_id, grade in present:
        after = bisect_right(values, score)
        above = n - after
        if after - bisect_left(values, score) > 1:  # tied: higher ids come first
            if tied_ids is None:  # one pass (in C) collects every tie group a judged doc sits in
                wanted = {p[0] for p in present}
                tied_ids = {}
                for other in compress(docs, map(wanted.__contains__, docs.values())):
                    tied_ids.setdefault(docs[other], []).append(other)
            above += sum(1 for other in tied_ids[score] if other > doc_id)
        hits.append((above, grade))
    return tuple(hits)


def judged_any(judged: Mapping[str, int] | None) -> bool:
    """Whether a query carries at least one judgment (a grade >= 0; negative = unjudged)."""
    return judged is not None and any(g >= 0 for g in judged.values())


def top_k(ranking: RankingLike, k: int) -> list[str]:
    """The first k doc ids of a ranking (a list, or scores under the ordering rule)."""
    if not isinstance(ranking, Mapping):
        return list(ranking[:k])
    if len(ranking) <= k:
        return order_pairs(ranking.items())
    kth = heapq.nlargest(k, ranking.values())[-1]
    above = compress(ranking, map(ge, ranking.values(), repeat(kth)))  # a C-level filter
    return order_pairs([(d, ranking[d]) for d in above])[:k]


def query_view(
    ranking: RankingLike,
    judged: Mapping[str, int],
    rel_threshold: int = 1,
    gain: str = "linear",
) -> QueryView:
    """Reduce a ranking against one query's judgments (see the module's conventions)."""
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, not {gain!r}")
    get = judged.get
    if isinstance(ranking, Mapping):
        hits = _hits_from_scores(ranking, judged)
    elif len(set(ranking)) == len(ranking):
        hits = tuple((i, g) for i, d in enumerate(ranking) if (g := get(d)) is not None and g >= 0)
    else:
        seen: set[str] = set()
        found: list[tuple[int, int]] = []
        for i, d in enumerate(ranking):
            if d in seen:
                continue
            seen.add(d)
            g = get(d)
            if g is not None and g >= 0:
                found.append((i, g))
        hits = tuple(found)
    rel_count = 0
    nonrel_count = 0
    for g in judged.values():
        if g >= rel_threshold:
            rel_count += 1
        elif g >= 0:
            nonrel_count += 1
    ideal = tuple(sorted((gain_of(g, gain) for g in judged.values() if g > 0), reverse=True))
    return QueryView(hits, len(ranking), rel_count, nonrel_count, rel_threshold, ideal, gain)


# --- the measures -------------------------------------------------------------------------


def _relevant_in_top(view: QueryView, k: int) -> int:
    t = view.rel_threshold
    return sum(1 for i, g in view.hits if i < k and g >= t)


def precision_at(view: QueryView, k: int) -> float:
    """Relevant docs in the top k, over k (not over the ranking length, as trec_eval)."""
    return _relevant_in_top(view, k) / k


def recall_at(view: QueryView, k: int) -> float | None:
    """Relevant docs in the top k over |Rel|; None when |Rel| = 0."""
    if view.rel_count == 0:
        return None
    return _relevant_in_top(view, k) / view.rel_count


def reciprocal_rank(view: QueryView, k: int | None = None) -> float:
    """1 / rank of the first relevant doc in the whole ranking; 0 when none is retrieved."""
    t = view.rel_threshold
    for i, g in view.hits:
        if g >= t:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at(view: QueryView, k: int) -> float | None:
    """DCG of the top k (gain / log2(rank + 1)) over the DCG of the judged grades sorted
    best first; None when |Rel| = 0."""
    if view.rel_count == 0:
        return None
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(view.ideal_gains[:k]))
    if ideal == 0:
        return None
    dcg = sum(gain_of(g, view.gain) / math.log2(i + 2) for i, g in view.hits if i < k)
    return dcg / ideal


def bpref(view: QueryView, k: int | None = None) -> float | None:
    """trec_eval's bpref: each retrieved relevant doc scores 1 - min(n, R) / min(N, R),
    n = judged non-relevant docs ranked above it, R = |Rel|, N = judged non-relevant
    count; summed and divided by R. Unjudged docs are skipped. None when R = 0."""
    rel = view.rel_count
    if rel == 0:
        return None
    t = view.rel_threshold
    denominator = min(view.nonrel_count, rel)
    nonrel_so_far = 0
    total = 0.0
    for _, g in view.hits:
        if g >= t:
            total += 1.0 - min(nonrel_so_far, rel) / denominator if nonrel_so_far else 1.0
        else:
            nonrel_so_far += 1
    return total / rel


def judged_at(view: QueryView, k: int) -> float | None:
    """|judged ∩ top-k| / min(k, ranking length); None for an empty ranking."""
    slots = min(k, view.depth)
    if slots == 0:
        return None
    return sum(1 for i, _ in view.hits if i < k) / slots


def ceiling(k: int, relevant: float) -> float | None:
    """min(1, k / |Rel|): the best R@k any ranking can reach; None when |Rel| is 0 (or an
    estimate of it is not positive). The one definition of the ceiling."""
    return min(1.0, k / relevant) if relevant > 0 else None


def capped_recall(hits: int, relevant: int, k: int) -> float | None:
    """THE BUG, kept only to show what it inflates: hits / min(|Rel|, k)."""
    return hits / min(relevant, k) if relevant > 0 else None


def ceiling_at(view: QueryView, k: int) -> float | None:
    """`ceiling` of the query's judged |Rel|."""
    return ceiling(k, view.rel_count)


def pct_of_ceiling_at(view: QueryView, k: int) -> float | None:
    """R@k / ceiling@k, as a fraction."""
    recall = recall_at(view, k)
    ceiling = ceiling_at(view, k)
    if recall is None or not ceiling:
        return None
    return recall / ceiling


def capped_recall_at(view: QueryView, k: int) -> float | None:
    """`capped_recall` of one query."""
    return capped_recall(_relevant_in_top(view, k), view.rel_count, k)


@dataclass(frozen=True, slots=True)
class Measure:
    """A measure as data: its name, whether it takes a cutoff k, what it means, how to
    compute it from a `QueryView`."""

    name: str
    description: str
    compute: Callable[[QueryView, int], float | None]
    cutoff: bool = True

    def key(self, k: int) -> str:
        return f"{self.name}@{k}" if self.cutoff else self.name


MEASURES: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    MEASURES[measure.name] = measure
    return measure


register(Measure("P", "precision: relevant in top k / k", precision_at))
register(Measure("R", "recall: relevant in top k / |Rel| (never min(|Rel|, k))", recall_at))
register(Measure("MRR", "reciprocal rank of the first relevant doc", reciprocal_rank, False))
register(Measure("nDCG", "DCG@k over ideal DCG@k from the judged grades", ndcg_at))
register(Measure("bpref", "trec_eval bpref: relevant above judged non-relevant", bpref, False))
register(Measure("judged", "share of the top-k slots that carry a grade", judged_at))
register(Measure("ceiling", "min(1, k / |Rel|): the highest reachable R@k", ceiling_at))
register(Measure("pct_of_ceiling", "R@k / ceiling@k (a fraction)", pct_of_ceiling_at))

DEFAULT_MEASURES: tuple[str, ...] = tuple(MEASURES)


def measure_keys(ks: Sequence[int], measures: Iterable[str] = DEFAULT_MEASURES) -> list[str]:
    """Row keys in display order: every per-k measure for each k, then the k-free ones,
    then `rel`, `ceiling` and `pct_of_ceiling` (the plain names are the first k's)."""
    chosen = [MEASURES[name] for name in measures]
    keys: list[str] = []
    for m in chosen:
        if m.cutoff:
            keys.extend(m.key(k) for k in ks)
        else:
            keys.append(m.name)
    keys.append("rel")
    names = {m.name for m in chosen}
    keys.extend(plain for plain in ("ceiling", "pct_of_ceiling") if plain in names)
    return keys


def score_query(
    ranking: RankingLike,
    judged: Mapping[str, int],
    ks: Sequence[int],
    rel_threshold: int = 1,
    gain: str = "linear",
    measures: Iterable[str] = DEFAULT_MEASURES,
) -> dict[str, float | int | None]:
    """One query's row: each measure at each k, `rel` = |Rel|, and plain `ceiling` /
    `pct_of_ceiling` for the first k."""
    view = query_view(ranking, judged, rel_threshold, gain)
    row: dict[str, float | int | None] = {}
    for name in measures:
        m = MEASURES[name]
        if m.cutoff:
            for k in ks:
                row[m.key(k)] = m.compute(view, k)
        else:
            row[m.name] = m.compute(view, ks[0] if ks else 0)
    row["rel"] = view.rel_count
    if ks:
        for plain in ("ceiling", "pct_of_ceiling"):
            if f"{plain}@{ks[0]}" in row:
                row[plain] = row[f"{plain}@{ks[0]}"]
    return row


@dataclass(slots=True)
class Evaluation:
    """Per-query rows and their means, with which queries each mean covers.

    Means follow trec_eval -c: every query in the qrels with at least one judged relevant
    document is in the mean (`queries` says how many); one absent from the run scores 0 on
    every measure and is listed in `missing_from_run`. Queries with |Rel| = 0 have undefined
    recall/nDCG/bpref/ceiling; they keep a per-query row when ranked but stay out of every
    mean (`no_relevant`). A value that is None inside the mean set (judged@k of a query
    absent from the run) is left out of that measure's mean and named in `undefined`.

    A query listed in the qrels without a single judgment (no grade >= 0: a golden.yaml or a
    store lists every query of a study, judged yet or not) counts as absent from the qrels:
    no row, and in `not_in_qrels` when ranked, as TREC qrels (which list judged queries only)
    would have it. One judged set, one verdict, whatever its file format."""

    ks: list[int]
    per_query: dict[str, dict[str, float | int | None]]
    mean: dict[str, float | int | None]
    in_mean: list[str] = field(default_factory=list)
    missing_from_run: list[str] = field(default_factory=list)
    no_relevant: list[str] = field(default_factory=list)
    not_in_qrels: list[str] = field(default_factory=list)
    undefined: dict[str, list[str]] = field(default_factory=dict)


def mean_of(
    rows: Mapping[str, Mapping[str, float | int | None]], qids: Sequence[str], keys: Sequence[str]
) -> tuple[dict[str, float | int | None], dict[str, list[str]]]:
    """Mean of each key over `qids`, skipping None values (and naming them)."""
    mean: dict[str, float | int | None] = {}
    undefined: dict[str, list[str]] = {}
    for key in keys:
        values: list[float] = []
        for qid in qids:
            value = rows[qid].get(key)
            if value is None:
                undefined.setdefault(key, []).append(qid)
            else:
                values.append(float(value))
        mean[key] = sum(values) / len(values) if values else None
    mean["queries"] = len(qids)
    return mean, undefined


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, RankingLike],
    ks: Sequence[int] | int,
    rel_threshold: int = 1,
    gain: str = "linear",
    measures: Iterable[str] = DEFAULT_MEASURES,
) -> Evaluation:
    """Score every query of `qrels`, in the qrels' order (absent from `rankings` = empty
    ranking), and average as trec_eval -c does (see `Evaluation`). Queries ranked but not in
    the qrels are listed, not scored."""
    ks = [ks] if isinstance(ks, int) else list(ks)
    if not ks or any(k < 1 for k in ks):
        raise ValueError(f"every k must be >= 1, got {ks}")
    measures = tuple(measures)
    per_query: dict[str, dict[str, float | int | None]] = {}
    in_mean: list[str] = []
    missing: list[str] = []
    no_relevant: list[str] = []
    empty: list[str] = []
    for qid in qrels:
        judged = qrels[qid]
        if not judged_any(judged):
            continue  # not judged yet: as if absent from the qrels (see `Evaluation`)
        ranked = qid in rankings
        has_relevant = any(g >= rel_threshold for g in judged.values())
        if not has_relevant:
            no_relevant.append(qid)
            if not ranked:
                continue
        per_query[qid] = score_query(
            rankings.get(qid, empty), judged, ks, rel_threshold, gain, measures
        )
        if has_relevant:
            in_mean.append(qid)
            if not ranked:
                missing.append(qid)
    keys = measure_keys(ks, measures)
    mean, undefined = mean_of(per_query, in_mean, keys)
    not_in_qrels = [q for q in rankings if not judged_any(qrels.get(q))]
    return Evaluation(ks, per_query, mean, in_mean, missing, no_relevant, not_in_qrels, undefined)
