"""The denominator audit: what a metric table does not say. Pure: plain data in, rows and
problems out.

Per query: |Rel|, k, the recall ceiling min(1, k/|Rel|), P@k's ceiling |Rel|/k when
|Rel| < k, label coverage, duplicate ids (an error: one document in two slots), content
duplicates (a warning: two ids with the same normalized text in one top-k), unjudged
documents in the top-k, and queries present on one side only. The two-stage view logs
stage-1 (fetch-K) and stage-2 (keep-n) recall apart, so a loss can be pinned on a stage.

Each problem is {"qid", "level": "error" | "warning", "code", "message"}.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from workbench.core.metrics import RankingLike, ceiling, judged_any, top_k
from workbench.core.model import Level, Status, normalize_passage, order_pairs

STAGE1_RECALL_BAR = 0.95
"""The field's working threshold: stage-1 Recall@K should exceed this before tuning a reranker."""

UNDEFINED_CODES = frozenset({"no_relevant", "no_queries"})
"""Error codes that leave a reported figure undefined: `workbench eval` exits 1 on them
even without --strict."""

Problem = dict[str, "str | None"]


def problem(qid: str | None, level: Level, code: str, message: str) -> Problem:
    return {"qid": qid, "level": level, "code": code, "message": message}


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _list(ids: Sequence[str], limit: int = 8) -> str:
    shown = " ".join(ids[:limit])
    return shown + (f" ... (+{len(ids) - limit})" if len(ids) > limit else "")


@dataclass(slots=True)
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
    unjudged_in_top: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    content_duplicates: list[list[str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(slots=True)
class Audit:
    k: int
    rows: dict[str, QueryAudit]
    problems: list[Problem]


def fold_aliases(ranking: RankingLike, aliases: Mapping[str, str]) -> list[str]:
    """The ranking with each alias replaced by its canonical doc: identical passages become
    one document, so a second copy keeps its slot but can never count a second time."""
    ids = ranking if not isinstance(ranking, Mapping) else order_pairs(ranking.items())
    return [aliases.get(d, d) for d in ids]


def _duplicates(ranking: RankingLike) -> dict[str, list[int]]:
    """doc id -> its 1-based ranks, for ids that appear more than once."""
    if isinstance(ranking, Mapping) or len(set(ranking)) == len(ranking):
        return {}
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
        if rel == 0:
            if not ranked:
                continue  # neither scored nor shown: nothing is undefined
            problems.append(
                problem(
                    qid,
                    Level.ERROR,
                    "no_relevant",
                    f"no judged relevant document (grade >= {rel_threshold}; "
                    f"{len(judged_ids)} judged): R@{k}, nDCG@{k} and bpref are undefined; the "
                    "query is left out of every mean",
                )
            )
        elif not ranked:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "missing_from_run",
                    f"in the qrels (|Rel| = {rel}) but not in the run: scores 0 in the mean",
                )
            )
        scored_any = scored_any or (ranked and rel > 0)
        top = top_k(ranking, k)
        if corpus_size:
            coverage: float | None = len(judged_ids) / corpus_size
            basis = "corpus"
        else:
            distinct = ranking.keys() if isinstance(ranking, Mapping) else set(ranking)
            coverage = len(distinct & judged_ids) / len(distinct) if distinct else None
            basis = "ranking"
        row = QueryAudit(
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
            unjudged_in_top=[d for d in dict.fromkeys(top) if d not in judged_ids],
        )
        rows[qid] = row
        if not ranked:
            continue
        dupes = _duplicates(original)
        if dupes:
            row.duplicate_ids = list(dupes)
            where = "; ".join(f"{d} at ranks {', '.join(map(str, r))}" for d, r in dupes.items())
            problems.append(
                problem(
                    qid,
                    Level.ERROR,
                    "duplicate_doc",
                    f"the same doc id fills more than one slot ({where}); it counts once",
                )
            )
        if passages is not None:
            row.content_duplicates = content_duplicates(top_k(original, k), passages)
            for ids in row.content_duplicates:
                problems.append(
                    problem(
                        qid,
                        Level.WARNING,
                        "content_duplicate",
                        f"{' '.join(ids)} in the top {k} have the same text: one passage "
                        "indexed twice can count one hit twice",
                    )
                )
        if len(ranking) < k:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "short_ranking",
                    f"{len(ranking)} results, fewer than k = {k}: the empty slots score 0",
                )
            )
        if row.unjudged_in_top:
            n = len(row.unjudged_in_top)
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "unjudged_in_top_k",
                    f"{n} of the top {min(k, len(ranking))} unjudged "
                    f"({_list(row.unjudged_in_top)}): counted as non-relevant, so judging them "
                    f"can only raise P@{k} (a lower bound) and R@{k}; R@{k} can still fall for "
                    f"relevant documents nobody judged outside the top {k}",
                )
            )
    extra = [q for q in rankings if not judged_any(qrels.get(q))]
    if extra:
        problems.append(
            problem(
                None,
                Level.WARNING,
                "not_in_qrels",
                f"{len(extra)} ranked quer{'y' if len(extra) == 1 else 'ies'} with no judgment "
                f"in the qrels (not judged yet, or not part of this study), not scored: "
                f"{_list(extra)}",
            )
        )
    if not scored_any:
        problems.append(
            problem(
                None,
                Level.ERROR,
                "no_queries",
                "no query is both ranked and judged with a relevant document: every mean is "
                "undefined",
            )
        )
    return Audit(k, rows, problems)


# --- two stages: fetch-K (retriever) and keep-n (reranker) -----------------------------------


@dataclass(slots=True)
class StageRow:
    qid: str
    rel: int
    fetch_k: int
    keep_n: int
    fetch_recall: float
    """|Rel ∩ stage-1 top-K| / |Rel|: what the reranker was given to work with."""
    keep_recall: float
    """|Rel ∩ stage-2 top-n| / |Rel|: what survived the cut."""
    dropped: list[str] = field(default_factory=list)
    """Relevant docs stage 1 fetched that stage 2 did not keep: the reranker's loss."""
    never_fetched: list[str] = field(default_factory=list)
    """Relevant docs stage 1 missed: the retriever's loss, no reranker can recover them."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(slots=True)
class TwoStage:
    rows: dict[str, StageRow]
    mean: dict[str, float | int | None]
    problems: list[Problem]


def two_stage(
    qrels: Mapping[str, Mapping[str, int]],
    stage1: Mapping[str, RankingLike],
    stage2: Mapping[str, RankingLike],
    keep_n: int,
    fetch_k: int | None = None,
    rel_threshold: int = 1,
    bar: float = STAGE1_RECALL_BAR,
) -> TwoStage:
    """Per query fetch-recall@K (K = `fetch_k`, else the stage-1 ranking's depth) and
    keep-recall@n, the relevant docs each stage lost, and a warning when stage-1 recall is
    at or below `bar`. Queries without a relevant doc are skipped (recall is undefined)."""
    rows: dict[str, StageRow] = {}
    problems: list[Problem] = []
    empty: list[str] = []
    for qid, judged in qrels.items():
        relevant = [d for d, g in judged.items() if g >= rel_threshold]
        if not relevant:
            continue
        first = stage1.get(qid, empty)
        k_fetch = fetch_k if fetch_k is not None else len(first)
        fetched = set(top_k(first, k_fetch))
        second = top_k(stage2.get(qid, empty), keep_n)
        kept = set(second)
        row = StageRow(
            qid=qid,
            rel=len(relevant),
            fetch_k=k_fetch,
            keep_n=keep_n,
            fetch_recall=sum(1 for d in relevant if d in fetched) / len(relevant),
            keep_recall=sum(1 for d in relevant if d in kept) / len(relevant),
            dropped=[d for d in relevant if d in fetched and d not in kept],
            never_fetched=[d for d in relevant if d not in fetched],
        )
        rows[qid] = row
        if row.fetch_recall <= bar:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "stage1_recall_low",
                    f"stage-1 recall@{k_fetch} = {_fmt(row.fetch_recall)} <= {bar}: the "
                    f"retriever lost {_list(row.never_fetched)}; no reranker can recover them",
                )
            )
        if row.dropped:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "stage2_dropped",
                    f"stage 2 dropped relevant docs stage 1 had fetched: {_list(row.dropped)} "
                    f"(keep-recall@{keep_n} {_fmt(row.keep_recall)} vs fetch-recall@"
                    f"{k_fetch} {_fmt(row.fetch_recall)})",
                )
            )
        outside = [d for d in second if d not in fetched]
        if outside and qid in stage1:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "stage2_not_from_stage1",
                    f"stage 2 keeps docs stage 1 never fetched in its top {k_fetch}: "
                    f"{_list(outside)} (are the two runs from the same pipeline?)",
                )
            )
    mean: dict[str, float | int | None] = {"queries": len(rows)}
    for key in ("fetch_recall", "keep_recall"):
        values = [getattr(r, key) for r in rows.values()]
        mean[key] = sum(values) / len(values) if values else None
    return TwoStage(rows, mean, problems)


# --- coverage: recall under the estimated |Rel| (the gate) -----------------------------------

COVERAGE_STATUSES = ("complete", "incomplete", "unmeasured", "stale")
"""complete / incomplete / unmeasured as the coverage summary decided (or re-decided with a
`complete_at` of the user's); 'stale': the summary counts a different number of judged relevant
documents than the qrels in use, so its estimate does not describe them and is not used."""

COVERAGE_FIGURES = ("est_rel", "est_rel_low", "est_rel_high", "completeness", "completeness_low")


@dataclass(slots=True)
class QueryCoverage:
    """What a coverage summary says about one query's judged relevant set."""

    status: str
    judged_relevant: int
    """Judged relevant documents counted as the summary counts them (aliases not expanded)."""
    est_rel: float | None = None
    est_rel_low: float | None = None
    est_rel_high: float | None = None
    completeness: float | None = None
    completeness_low: float | None = None
    summary_relevant: int | None = None
    """The summary's own count of judged relevant documents, when it differs ('stale')."""
    in_summary: bool = True

    @property
    def measured(self) -> bool:
        return self.status in (Status.COMPLETE, Status.INCOMPLETE) and self.est_rel_high is not None


@dataclass(slots=True)
class Coverage:
    """The coverage summary checked against the qrels in use, per query of the qrels."""

    source: str
    complete_at: float | None
    queries: dict[str, QueryCoverage]
    judged: Mapping[str, Mapping[str, int]]
    """The judged grades as the summary counted them: aliases not expanded."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """alias doc id -> canonical doc id: a ranking's alias counts as its canonical doc."""
    thresholds: Mapping[str, object] = field(default_factory=dict)
    method: str | None = None


def _number(value: object, where: str, problems: list[str]) -> float | None:
    """A coverage figure: None, or a finite number >= 0 (counts and shares are never negative;
    a NaN or an infinity would turn every comparison and division on it into nonsense)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{where}: expected a number or null, found {value!r}")
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0:
        problems.append(f"{where}: expected a finite number >= 0 or null, found {number!r}")
        return None
    return number


def coverage_from_summary(
    summary: Mapping[str, object],
    judged: Mapping[str, Mapping[str, int]],
    *,
    source: str,
    rel_threshold: int = 1,
    aliases: Mapping[str, str] | None = None,
    complete_at: float | None = None,
) -> tuple[Coverage, list[str]]:
    """Check a coverage summary (`workbench.core.coverage.summary_for_store`, or golden.yaml's
    `coverage`) against `judged` (aliases not expanded). Returns the coverage and the
    problems with the summary's shape, each naming its field (`coverage.queries.QID.KEY`).

    With `complete_at`, a measured query's status is re-decided as coverage does it:
    complete when completeness_low >= complete_at. A query the summary lacks is unmeasured."""
    problems: list[str] = []
    rows = summary.get("queries") if isinstance(summary, Mapping) else None
    if not isinstance(rows, Mapping):
        problems.append("coverage.queries: expected a mapping of query id -> figures")
        rows = {}
    thresholds = summary.get("thresholds") if isinstance(summary, Mapping) else None
    thresholds = thresholds if isinstance(thresholds, Mapping) else {}
    recorded = thresholds.get("complete_at")
    method = summary.get("method") if isinstance(summary, Mapping) else None
    queries: dict[str, QueryCoverage] = {}
    for qid, grades in judged.items():
        relevant = sum(1 for g in grades.values() if g >= rel_threshold)
        row = rows.get(qid)
        if row is None:
            queries[qid] = QueryCoverage("unmeasured", relevant, in_summary=False)
            continue
        where = f"coverage.queries.{qid}"
        if not isinstance(row, Mapping):
            problems.append(f"{where}: expected a mapping")
            continue
        figures = {
            key: _number(row.get(key), f"{where}.{key}", problems) for key in COVERAGE_FIGURES
        }
        status = row.get("status", "unmeasured")
        if status not in (Status.COMPLETE, Status.INCOMPLETE, Status.UNMEASURED):
            problems.append(f"{where}.status: {status!r} is not complete, incomplete or unmeasured")
            continue
        unbounded = figures["est_rel_low"] is None or figures["est_rel_high"] is None
        if status != Status.UNMEASURED and unbounded:
            problems.append(f"{where}: status {status} without est_rel_low and est_rel_high")
            continue
        counted = row.get("relevant")
        if isinstance(counted, int) and not isinstance(counted, bool) and counted != relevant:
            queries[qid] = QueryCoverage("stale", relevant, summary_relevant=counted)
            continue
        if status != Status.UNMEASURED and complete_at is not None:
            low = figures["completeness_low"]
            status = (
                Status.COMPLETE if low is not None and low >= complete_at else Status.INCOMPLETE
            )
        queries[qid] = QueryCoverage(status, relevant, **figures)  # type: ignore[arg-type]
    gate = complete_at
    if gate is None:
        gate = _number(recorded, "coverage.thresholds.complete_at", problems)
    coverage = Coverage(
        source=source,
        complete_at=gate,
        queries=queries,
        judged=judged,
        aliases=dict(aliases or {}),
        thresholds=dict(thresholds),
        method=method if isinstance(method, str) else None,
    )
    return coverage, problems


def judged_hits(
    ranking: RankingLike,
    judged: Mapping[str, int],
    k: int,
    rel_threshold: int = 1,
    aliases: Mapping[str, str] | None = None,
) -> int:
    """Distinct judged relevant documents in the top k, an alias counting as its canonical
    document (unless judged itself): the numerator of recall in the coverage summary's units."""
    aliases = aliases or {}
    found: set[str] = set()
    for doc_id in top_k(ranking, k):
        key = doc_id if doc_id in judged else aliases.get(doc_id, doc_id)
        if judged.get(key, -1) >= rel_threshold:
            found.add(key)
    return len(found)


def recall_interval(
    hits: int, judged_relevant: int, est_rel_low: float, est_rel_high: float
) -> tuple[float, float] | None:
    """[hits / est_rel_high, hits / est_rel_low]: the range of recall@k when |Rel| lies in the
    estimate's interval. |Rel| is never below the judged relevant count, so the high end never
    exceeds recall against the judged set. `hits` counts judged relevant documents only.

    None when the interval admits |Rel| = 0 (nothing relevant judged and an estimate whose low
    end is 0): recall@k is undefined at that end, so no interval is given; None too for an
    estimate that is not a finite number >= 0 (never a figure built on it)."""
    if not all(math.isfinite(v) and v >= 0 for v in (est_rel_low, est_rel_high)):
        return None
    low_denominator = max(est_rel_low, float(judged_relevant), float(hits))
    high_denominator = max(est_rel_high, low_denominator)
    if low_denominator <= 0:
        return None
    return hits / high_denominator, min(1.0, hits / low_denominator)


def no_relevant_coverage_note(info: QueryCoverage, k: int) -> str | None:
    """What the coverage estimate adds to a query with no judged relevant document: whether
    |Rel| may be 0 (then R@k stays undefined under the estimate too) or relevant documents
    surely exist that nobody judged. None when the query's coverage is not measured."""
    if not info.measured or info.judged_relevant:
        return None
    estimate = (
        f"the coverage estimate puts |Rel| at {_opt(info.est_rel, 1)} "
        f"[{_opt(info.est_rel_low, 1)}, {_opt(info.est_rel_high, 1)}]"
    )
    if recall_interval(0, 0, info.est_rel_low or 0.0, info.est_rel_high or 0.0) is None:
        return f"{estimate}: |Rel| may be 0, so R@{k} is undefined under the estimated |Rel| too"
    return (
        f"{estimate}: relevant documents exist that nobody judged yet (judge more: under the "
        f"estimated |Rel| R@{k} is 0 until one is found)"
    )


def coverage_gate(
    coverage: Coverage,
    rankings: Mapping[str, RankingLike],
    ks: Sequence[int],
    scored: Sequence[str],
    rel_threshold: int = 1,
    strict: bool = False,
) -> tuple[dict[str, dict[str, object]], dict[str, object], list[Problem]]:
    """Per query of `coverage` that a run has a row for: the recall interval at each k under the
    estimated |Rel| (`R@k_low`, `R@k_est`, `R@k_high`), the estimate, completeness and
    `coverage_status`; their mean over the `scored` queries (those in the run's means) that
    are measured; and the problems: `incomplete_judgments` per scored incomplete query (an
    error when `strict`: the gate), `unmeasured_coverage` and `coverage_mismatch` warnings."""
    empty: list[str] = []
    rows: dict[str, dict[str, object]] = {}
    for qid, info in coverage.queries.items():
        judged = coverage.judged.get(qid, {})
        row: dict[str, object] = {
            "coverage_status": info.status,
            "est_rel": info.est_rel,
            "est_rel_low": info.est_rel_low,
            "est_rel_high": info.est_rel_high,
            "completeness": info.completeness,
            "completeness_low": info.completeness_low,
        }
        ranking = rankings.get(qid, empty)
        for k in ks:
            interval = None
            estimate = None
            if info.measured:
                hits = judged_hits(ranking, judged, k, rel_threshold, coverage.aliases)
                assert info.est_rel_low is not None and info.est_rel_high is not None
                interval = recall_interval(
                    hits, info.judged_relevant, info.est_rel_low, info.est_rel_high
                )
                if interval is not None:
                    est = info.est_rel if info.est_rel is not None else 0.0
                    est = est if math.isfinite(est) else 0.0
                    point = max(est, float(info.judged_relevant), float(hits))
                    estimate = hits / point if point > 0 else None
            row[f"R@{k}_low"] = interval[0] if interval else None
            row[f"R@{k}_est"] = estimate
            row[f"R@{k}_high"] = interval[1] if interval else None
        rows[qid] = row

    measured = [q for q in scored if q in rows and coverage.queries[q].measured]
    mean: dict[str, object] = {}
    for k in ks:
        for end in ("low", "est", "high"):
            key = f"R@{k}_{end}"
            values = [float(rows[q][key]) for q in measured if rows[q][key] is not None]  # type: ignore[arg-type]
            mean[key] = sum(values) / len(values) if values else None
    for key in ("completeness", "completeness_low"):
        values = [float(rows[q][key]) for q in measured if rows[q][key] is not None]  # type: ignore[arg-type]
        mean[key] = sum(values) / len(values) if values else None
    for status in COVERAGE_STATUSES:
        mean[f"coverage_{status}"] = sum(
            1 for q in scored if q in coverage.queries and coverage.queries[q].status == status
        )

    problems: list[Problem] = []
    k = ks[0]
    gate = f"{coverage.complete_at:g}" if coverage.complete_at is not None else "the threshold"
    for qid in scored:
        if qid not in coverage.queries:
            continue
        info = coverage.queries[qid]
        row = rows[qid]
        if info.status == Status.INCOMPLETE:
            low, high = row[f"R@{k}_low"], row[f"R@{k}_high"]
            message = (
                f"judged relevant set incomplete: completeness {_opt(info.completeness)} "
                f"(95% lower bound {_opt(info.completeness_low)} < {gate}), est. |Rel| "
                f"{_opt(info.est_rel, 1)} [{_opt(info.est_rel_low, 1)}, "
                f"{_opt(info.est_rel_high, 1)}] vs {info.judged_relevant} judged relevant; "
                f"R@{k} against the judged set leaves out the relevant documents the pool missed "
                f"(it is an upper bound when its top {k} is fully judged); under the "
                f"estimated |Rel| it is {_opt(low)}-{_opt(high)} (unjudged documents in the top "
                f"{k} counted as non-relevant); "
                + (
                    "--strict fails on it (judge more, or pool deeper)"
                    if strict
                    else "an error under --strict"
                )
            )
            problems.append(
                problem(
                    qid, Level.ERROR if strict else Level.WARNING, "incomplete_judgments", message
                )
            )
        elif info.status == Status.UNMEASURED:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "unmeasured_coverage",
                    (
                        "completeness unmeasured (no judged sample from outside the pool: "
                        "`workbench pool --sample N`, then judge it)"
                        if info.in_summary
                        else f"not in the coverage summary ({coverage.source})"
                    )
                    + f": how far R@{k} against the judged set overstates recall (relevant "
                    "documents nobody judged lower it) is unknown; --strict does not gate it",
                )
            )
        elif info.status == Status.STALE:
            problems.append(
                problem(
                    qid,
                    Level.WARNING,
                    "coverage_mismatch",
                    f"the coverage summary ({coverage.source}) counts "
                    f"{info.summary_relevant} judged relevant, these qrels "
                    f"{info.judged_relevant} at grade >= {rel_threshold} (another "
                    "--rel-threshold, or judgments changed since): its estimate is not used",
                )
            )
    return rows, mean, problems


def _opt(value: object, digits: int = 3) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"  # type: ignore[arg-type]
