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

Each measure is a small declarative `Measure` in `MEASURES`, carrying how a table shows it;
adding one is adding a definition (`register`), and it reaches every row, mean and table.
`evaluate` computes typed per-query scores and trec_eval -c style means.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.measures.measure_formulas import (
    DrawView,
    ndcg,
    ndcg_per_draw,
    precision,
    precision_per_draw,
    recall,
    recall_per_draw,
)
from workbench.core.measures.measure_key import MeasureKey, parse_key, split_key
from workbench.core.measures.measure_view import (
    GAINS,
    MAX_EXPONENTIAL_GRADE,
    MAX_GRADE,
    MAX_LINEAR_GRADE,
    QueryView,
    RankingLike,
    gain_of,
    grade_problem,
    judged_any,
    query_view,
    top_k,
)

__all__ = [  # the view's names are re-exported: `metrics` is the measures' public face
    "GAINS", "MAX_EXPONENTIAL_GRADE", "MAX_GRADE", "MAX_LINEAR_GRADE", "MEASURES",
    "CUTOFF_BLOCK", "Evaluation", "MeanScores", "Measure", "QueryScores", "QueryView",
    "RankingLike", "bpref", "capped_recall", "capped_recall_at", "ceiling", "ceiling_at",
    "evaluate", "gain_of", "grade_problem", "judged_any", "judged_at", "measure_keys",
    "ndcg_at", "pct_of_ceiling_at", "precision_at", "query_view", "recall_at",
    "reciprocal_rank", "register", "score_query", "top_k",
]  # fmt: skip


# --- the measures -------------------------------------------------------------------------


def _relevant_in_top(view: QueryView, k: int) -> int:
    t = view.rel_threshold
    return sum(1 for i, g in view.hits if i < k and g >= t)


def precision_at(view: QueryView, k: int) -> float:
    """Relevant docs in the top k, over k (not over the ranking length, as trec_eval)."""
    return precision(_relevant_in_top(view, k), k)


def recall_at(view: QueryView, k: int) -> float | None:
    """Relevant docs in the top k over |Rel|; None when |Rel| = 0."""
    if view.rel_count == 0:
        return None
    return recall(_relevant_in_top(view, k), view.rel_count)


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
    return ndcg(dcg, ideal)


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


CEILING_WORDS = "min(1, k / |Rel|): the best R@k any ranking could reach"
"""The ceiling in words, wherever a legend defines it (`core.figures.ceiling_help`)."""


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
    reachable = ceiling_at(view, k)
    if recall is None or not reachable:
        return None
    return recall / reachable


def capped_recall_at(view: QueryView, k: int) -> float | None:
    """`capped_recall` of one query."""
    return capped_recall(_relevant_in_top(view, k), view.rel_count, k)


# --- the registry ---------------------------------------------------------------------------

CUTOFF_BLOCK = 0
"""`Measure.column` of the measures a table shows together for each cutoff, first (P, R, R's
ceiling and the share of it reached); the others follow the blocks in `column` order."""


@dataclass(frozen=True, slots=True)
class Measure:
    """A measure as data: its name, whether it takes a cutoff k, what it means, how to
    compute it from a `QueryView` (and per draw of a study from a `DrawView`, where the study
    gives it an interval), and how a table shows it."""

    name: str
    description: str
    compute: Callable[[QueryView, int], float | None]
    cutoff: bool = True
    header: str = ""
    """The table header, `{k}` standing for the cutoff; '' shows the key (`P@5`, `MRR`)."""
    percent: bool = False
    """Shown as a whole percentage; else as a figure to 3 decimals."""
    column: int = 100
    """Where its columns go: `CUTOFF_BLOCK`, or after the blocks in increasing order (ties in
    registration order); a new measure's default puts it last."""
    per_draw: Callable[[DrawView, int], Any] | None = None
    """The same formula over a study's draws (arrays), `compute`'s counts drawn."""

    def key(self, k: int) -> str:
        """Its name in rows, means and JSON: `P@5`, or `MRR` without a cutoff."""
        return MeasureKey.at(self.name, k if self.cutoff else None)

    def heading(self, k: int) -> str:
        """Its table header at cutoff k."""
        return self.header.format(k=k) if self.header else self.key(k)


MEASURES: dict[str, Measure] = {}
"""Every measure by name, in registration order: the order of rows, means and JSON keys."""


def register(measure: Measure) -> Measure:
    """Add `measure` (or replace one of its name): every later evaluation scores it."""
    MEASURES[measure.name] = measure
    return measure


register(Measure("P", "precision: relevant in top k / k", precision_at, column=CUTOFF_BLOCK,
                 per_draw=precision_per_draw))  # fmt: skip
register(Measure("R", "recall: relevant in top k / |Rel| (never min(|Rel|, k))", recall_at,
                 column=CUTOFF_BLOCK, per_draw=recall_per_draw))  # fmt: skip
register(Measure("MRR", "reciprocal rank of the first relevant doc", reciprocal_rank, False,
                 column=30))  # fmt: skip
register(Measure("nDCG", "DCG@k over ideal DCG@k from the judged grades", ndcg_at, column=20,
                 per_draw=ndcg_per_draw))  # fmt: skip
register(Measure("bpref", "trec_eval bpref: relevant above judged non-relevant", bpref, False,
                 column=40))  # fmt: skip
register(Measure("judged", "share of the top-k slots that carry a grade", judged_at,
                 percent=True, column=50))  # fmt: skip
register(Measure("ceiling", f"{CEILING_WORDS}, with the judged |Rel|", ceiling_at,
                 header="ceil@{k}", column=CUTOFF_BLOCK))  # fmt: skip
register(Measure("pct_of_ceiling", "R@k / ceiling@k (a fraction)", pct_of_ceiling_at,
                 header="of ceil", percent=True, column=CUTOFF_BLOCK))  # fmt: skip


def read_measure(
    text: str, measures: Iterable[Measure] | None = None
) -> tuple[Measure, int | None]:
    """A measure as a user writes it ('nDCG@10', 'ndcg@010', 'MRR', 'R'): the measure (its name
    matched without case) and its cutoff (None when none is written). ValueError says why it is
    not one of `measures` (default: every registered one). The one reading of a measure key for
    `compare --measure`, `eval --fail-under` and `assert_eval(min=...)`."""
    pool = tuple(MEASURES.values()) if measures is None else tuple(measures)
    by_folded = {m.name.casefold(): m for m in pool}
    base, cutoff = split_key(text)
    measure = by_folded.get(base.casefold())
    if measure is None:
        raise ValueError(f"unknown measure {base!r} (measures: {', '.join(m.name for m in pool)})")
    if cutoff is None:
        return measure, None
    if not measure.cutoff:
        raise ValueError(f"{measure.name} takes no cutoff: write {measure.name}")
    return measure, parse_key(text).cutoff


def chosen_measures(names: Iterable[str] | None = None) -> tuple[Measure, ...]:
    """The measures of `names`, or every registered one (in registration order) for None."""
    return tuple(MEASURES.values()) if names is None else tuple(MEASURES[n] for n in names)


def measure_keys(ks: Sequence[int], measures: Iterable[Measure]) -> list[str]:
    """Figure keys in registration order: each per-k measure at every k, a k-free one once."""
    keys: list[str] = []
    for m in measures:
        if m.cutoff:
            keys.extend(m.key(k) for k in ks)
        else:
            keys.append(m.name)
    return keys


# --- scores ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryScores:
    """One query's figures: each measure's value under its key (`P@5`, `MRR`), in registration
    order (None where undefined), and |Rel|."""

    values: Mapping[str, float | None]
    rel: int


@dataclass(frozen=True, slots=True)
class MeanScores:
    """Means over `queries` queries: each measure's (None when no query defines it) and
    |Rel|'s."""

    values: Mapping[str, float | None]
    rel: float | None
    queries: int


def score_query(
    ranking: RankingLike,
    judged: Mapping[str, int],
    ks: Sequence[int],
    rel_threshold: int = 1,
    gain: str = "linear",
    measures: Iterable[str] | None = None,
) -> QueryScores:
    """One query's scores: each measure (default: every registered one) at each k."""
    plan = _plan(ks, chosen_measures(measures))
    return _score(query_view(ranking, judged, rel_threshold, gain), plan)


_Plan = list[tuple[str, Callable[[QueryView, int], float | None], int]]


def _plan(ks: Sequence[int], measures: Sequence[Measure]) -> _Plan:
    """(key, compute, k) of each figure, in `measure_keys` order: made once per evaluation."""
    first = [ks[0] if ks else 0]  # what a measure without a cutoff is given
    return [(m.key(k), m.compute, k) for m in measures for k in (ks if m.cutoff else first)]


def _score(view: QueryView, plan: _Plan) -> QueryScores:
    return QueryScores({key: compute(view, k) for key, compute, k in plan}, view.rel_count)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Per-query scores and their means, with which queries each mean covers.

    Means follow trec_eval -c: every query in the qrels with at least one judged relevant
    document is in the mean (`in_mean`); one absent from the run scores 0 on every measure
    and is listed in `missing_from_run`. Queries with |Rel| = 0 have undefined
    recall/nDCG/bpref/ceiling; they keep a per-query row when ranked but stay out of every
    mean (`no_relevant`). A value that is None inside the mean set (judged@k of a query
    absent from the run) is left out of that measure's mean and named in `undefined`.

    A query listed in the qrels without a single judgment (no grade >= 0: a golden.yaml or a
    store lists every query of a study, judged yet or not) counts as absent from the qrels:
    no row, and in `not_in_qrels` when ranked, as TREC qrels (which list judged queries only)
    would have it. One judged set, one verdict, whatever its file format."""

    ks: list[int]
    measures: tuple[Measure, ...]
    per_query: dict[str, QueryScores]
    mean: MeanScores
    in_mean: list[str] = field(default_factory=list)
    missing_from_run: list[str] = field(default_factory=list)
    no_relevant: list[str] = field(default_factory=list)
    not_in_qrels: list[str] = field(default_factory=list)
    undefined: dict[str, list[str]] = field(default_factory=dict)


def mean_of(
    rows: Mapping[str, QueryScores], qids: Sequence[str], keys: Sequence[str]
) -> tuple[MeanScores, dict[str, list[str]]]:
    """Mean of each key over `qids`, skipping None values (and naming them)."""
    mean: dict[str, float | None] = {}
    undefined: dict[str, list[str]] = {}
    figures = [rows[qid].values for qid in qids]
    for key in keys:
        found = [values.get(key) for values in figures]
        values = [float(value) for value in found if value is not None]
        if len(values) < len(found):
            undefined[key] = [qid for qid, value in zip(qids, found, strict=True) if value is None]
        mean[key] = sum(values) / len(values) if values else None
    rel = sum(rows[q].rel for q in qids) / len(qids) if qids else None
    return MeanScores(mean, rel, len(qids)), undefined


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, RankingLike],
    ks: Sequence[int] | int,
    rel_threshold: int = 1,
    gain: str = "linear",
    measures: Iterable[str] | None = None,
) -> Evaluation:
    """Score every query of `qrels`, in the qrels' order (absent from `rankings` = empty
    ranking), on `measures` (default: every registered one), and average as trec_eval -c
    does (see `Evaluation`). Queries ranked but not in the qrels are listed, not scored."""
    ks = [ks] if isinstance(ks, int) else list(ks)
    if not ks or any(k < 1 for k in ks):
        raise ValueError(f"every k must be >= 1, got {ks}")
    chosen = chosen_measures(measures)
    plan = _plan(ks, chosen)
    per_query: dict[str, QueryScores] = {}
    in_mean: list[str] = []
    missing: list[str] = []
    no_relevant: list[str] = []
    empty: list[str] = []
    for qid, judged in qrels.items():
        if not judged_any(judged):
            continue  # not judged yet: as if absent from the qrels (see `Evaluation`)
        ranked = qid in rankings
        has_relevant = any(g >= rel_threshold for g in judged.values())
        if not has_relevant:
            no_relevant.append(qid)
            if not ranked:
                continue
        view = query_view(rankings.get(qid, empty), judged, rel_threshold, gain)
        per_query[qid] = _score(view, plan)
        if has_relevant:
            in_mean.append(qid)
            if not ranked:
                missing.append(qid)
    mean, undefined = mean_of(per_query, in_mean, measure_keys(ks, chosen))
    not_in_qrels = [q for q in rankings if not judged_any(qrels.get(q))]
    return Evaluation(
        ks, chosen, per_query, mean, in_mean, missing, no_relevant, not_in_qrels, undefined
    )
