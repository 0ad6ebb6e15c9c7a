"""The denominator audit: what a metric table does not say. Pure: plain data in, typed rows
and problems out.

Per query: |Rel|, k, the recall ceiling min(1, k/|Rel|), P@k's ceiling |Rel|/k when
|Rel| < k, label coverage, duplicate ids (an error: one document in two slots), content
duplicates (a warning: two ids with the same normalized text in one top-k), unjudged
documents in the top-k, and queries present on one side only. The two-stage view
(`audit_stages`) and recall under the estimated |Rel| (`audit_coverage`) add theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from workbench.core.measures.measure_view import JudgedRanking, RankingLike, judged_any, top_k
from workbench.core.measures.metrics import ceiling
from workbench.core.model import Level, Problem, normalize_passage, order_pairs

UNDEFINED_CODES = frozenset({"no_relevant", "no_queries"})
"""Error codes that leave a reported figure undefined: `workbench eval` exits 1 on them
even without --strict."""


def id_list(ids: Sequence[str], limit: int = 8) -> str:
    """Ids for a message: the first `limit`, then how many more."""
    shown = " ".join(ids[:limit])
    return shown + (f" ... (+{len(ids) - limit})" if len(ids) > limit else "")


@dataclass(frozen=True, slots=True)
class QueryAudit:
    """What one query's figures rest on."""

    qid: str
    rel: int
    k: int
    depth: int
    ceiling: float | None
    """min(1, k/|Rel|): R@k can never beat it; None when |Rel| = 0."""
    precision_ceiling: float | None
    """|Rel|/k when |Rel| < k (P@k can never beat it), else None (1 is reachable)."""
    recall_capped_by_k: bool
    """|Rel| > k: no ranking reaches R@k = 1, and a min(|Rel|, k) denominator would hide it."""
    judged: int
    label_coverage: float | None
    coverage_basis: str
    """'corpus' (judged / corpus size) or 'ranking' (judged docs in the ranking / its depth)."""
    unjudged_in_top: tuple[str, ...] = ()
    duplicate_ids: tuple[str, ...] = ()
    content_duplicates: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Audit:
    k: int
    rows: dict[str, QueryAudit]
    problems: list[Problem]


def fold_aliases(ranking: RankingLike, aliases: Mapping[str, str]) -> list[str]:
    """The ranking with each alias replaced by its canonical doc: identical passages become
    one document, so a second copy keeps its slot but can never count a second time."""
    if isinstance(ranking, JudgedRanking):
        raise TypeError("a JudgedRanking cannot fold aliases: read the run whole")
    ids = ranking if not isinstance(ranking, Mapping) else order_pairs(ranking.items())
    return [aliases.get(d, d) for d in ids]


def _duplicates(ranking: RankingLike) -> dict[str, list[int]]:
    """doc id -> its 1-based ranks, for ids that appear more than once."""
    if isinstance(ranking, (Mapping, JudgedRanking)) or len(set(ranking)) == len(ranking):
        return {}  # scores and reduced rankings hold each doc once
    ranks: dict[str, list[int]] = {}
    for i, d in enumerate(ranking, 1):
        ranks.setdefault(d, []).append(i)
    return {d: r for d, r in ranks.items() if len(r) > 1}


def content_duplicates(top: Sequence[str], passages: Mapping[str, str]) -> list[list[str]]:
    """Groups of distinct ids in `top` whose normalized text is the same. `passages` maps
    doc id -> normalized text (see `normalized_passages`); ids without text are skipped."""
    groups: dict[str, list[str]] = {}
    for d in dict.fromkeys(top):
        text = passages.get(d)
        if text:
            groups.setdefault(text, []).append(d)
    return [ids for ids in groups.values() if len(ids) > 1]


def normalized_passages(texts: Mapping[str, str]) -> dict[str, str]:
    """doc id -> `normalize_passage(text)`, the key content duplicates are found by."""
    return {d: normalize_passage(t) for d, t in texts.items()}


def audit(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, RankingLike],
    k: int,
    rel_threshold: int = 1,
    corpus_size: int | None = None,
    passages: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> Audit:
    """Audit one run at cutoff k. `passages` (doc id -> normalized text) enables the
    content-duplicate check; `corpus_size` makes label coverage judged / corpus size;
    `aliases` (alias id -> canonical id) folds identical passages as the metrics do.

    A query of `qrels` without a single judgment (no grade >= 0: a golden.yaml or a store lists
    every query of a study, judged or not; TREC qrels list only judged ones) is treated as
    absent from the qrels, so one judged set gets one verdict whatever its file format: not
    judged yet is a `not_in_qrels` warning, judged with nothing relevant a `no_relevant` error."""
    rows: dict[str, QueryAudit] = {}
    problems: list[Problem] = []
    empty: list[str] = []
    scored_any = False
    for qid, judged in qrels.items():
        judged_ids = {d for d, g in judged.items() if g >= 0}
        if not judged_ids:
            continue  # not judged yet: as if absent from the qrels, whatever the file format
        ranked = qid in rankings
        original = rankings.get(qid, empty)
        ranking = fold_aliases(original, aliases) if aliases and ranked else original
        rel = sum(1 for g in judged.values() if g >= rel_threshold)
        if rel == 0 and not ranked:
            continue  # neither scored nor shown: nothing is undefined
        problems.extend(_judged_problems(qid, rel, ranked, len(judged_ids), k, rel_threshold))
        scored_any = scored_any or (ranked and rel > 0)
        row = _query_row(qid, ranking, judged_ids, rel, k, corpus_size)
        if ranked:
            row = _ranking_checks(row, original, ranking, k, passages, problems)
        rows[qid] = row
    problems.extend(_run_problems(qrels, rankings, scored_any))
    return Audit(k, rows, problems)


def _query_row(
    qid: str,
    ranking: RankingLike,
    judged_ids: set[str],
    rel: int,
    k: int,
    corpus_size: int | None,
) -> QueryAudit:
    """The figures one query rests on, before the ranking's own checks."""
    if corpus_size:
        coverage: float | None = len(judged_ids) / corpus_size
        basis = "corpus"
    elif isinstance(ranking, JudgedRanking):
        held = sum(1 for d in judged_ids if d in ranking.ranks)
        coverage = held / ranking.depth if ranking.depth else None
        basis = "ranking"
    else:
        distinct = ranking.keys() if isinstance(ranking, Mapping) else set(ranking)
        coverage = len(distinct & judged_ids) / len(distinct) if distinct else None
        basis = "ranking"
    return QueryAudit(
        qid=qid,
        rel=rel,
        k=k,
        depth=len(ranking),
        ceiling=ceiling(k, rel),
        precision_ceiling=rel / k if 0 < rel < k else None,
        recall_capped_by_k=rel > k,
        judged=len(judged_ids),
        label_coverage=coverage,
        coverage_basis=basis,
        unjudged_in_top=tuple(d for d in dict.fromkeys(top_k(ranking, k)) if d not in judged_ids),
    )


def _judged_problems(
    qid: str, rel: int, ranked: bool, judged: int, k: int, rel_threshold: int
) -> list[Problem]:
    """A judged query with nothing relevant (its figures undefined), or one the run lacks."""
    if rel == 0:
        message = (
            f"no judged relevant document (grade >= {rel_threshold}; {judged} judged): R@{k}, "
            f"nDCG@{k} and bpref are undefined; the query is left out of every mean"
        )
        return [Problem(qid, Level.ERROR, "no_relevant", message)]
    if not ranked:
        message = f"in the qrels (|Rel| = {rel}) but not in the run: scores 0 in the mean"
        return [Problem(qid, Level.WARNING, "missing_from_run", message)]
    return []


def _ranking_checks(
    row: QueryAudit,
    original: RankingLike,
    ranking: RankingLike,
    k: int,
    passages: Mapping[str, str] | None,
    problems: list[Problem],
) -> QueryAudit:
    """`row` with the ranked query's duplicates; its problems appended to `problems`."""
    qid = row.qid
    dupes = _duplicates(original)
    if dupes:
        where = "; ".join(f"{d} at ranks {', '.join(map(str, r))}" for d, r in dupes.items())
        message = f"the same doc id fills more than one slot ({where}); it counts once"
        problems.append(Problem(qid, Level.ERROR, "duplicate_doc", message))
    groups = content_duplicates(top_k(original, k), passages) if passages is not None else []
    for ids in groups:
        message = (
            f"{' '.join(ids)} in the top {k} have the same text: one passage indexed twice can "
            "count one hit twice"
        )
        problems.append(Problem(qid, Level.WARNING, "content_duplicate", message))
    if len(ranking) < k:
        message = f"{len(ranking)} results, fewer than k = {k}: the empty slots score 0"
        problems.append(Problem(qid, Level.WARNING, "short_ranking", message))
    if row.unjudged_in_top:
        message = (
            f"{len(row.unjudged_in_top)} of the top {min(k, len(ranking))} unjudged "
            f"({id_list(row.unjudged_in_top)}): counted as non-relevant, so judging them can "
            f"only raise P@{k} (a lower bound) and R@{k}; R@{k} can still fall for relevant "
            f"documents nobody judged outside the top {k}"
        )
        problems.append(Problem(qid, Level.WARNING, "unjudged_in_top_k", message))
    if not dupes and not groups:
        return row  # the common case: a copy of an unchanged row is 2,000 copies for nothing
    return replace(
        row, duplicate_ids=tuple(dupes), content_duplicates=tuple(tuple(ids) for ids in groups)
    )


def _run_problems(
    qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, RankingLike], scored_any: bool
) -> list[Problem]:
    """Ranked queries the qrels do not judge, and a run with no scorable query at all."""
    problems: list[Problem] = []
    extra = [q for q in rankings if not judged_any(qrels.get(q))]
    if extra:
        message = (
            f"{len(extra)} ranked quer{'y' if len(extra) == 1 else 'ies'} with no judgment in "
            f"the qrels (not judged yet, or not part of this study), not scored: {id_list(extra)}"
        )
        problems.append(Problem(None, Level.WARNING, "not_in_qrels", message))
    if not scored_any:
        message = (
            "no query is both ranked and judged with a relevant document: every mean is undefined"
        )
        problems.append(Problem(None, Level.ERROR, "no_queries", message))
    return problems
