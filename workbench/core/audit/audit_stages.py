"""Two stages audited apart: stage-1 (fetch-K, the retriever) and stage-2 (keep-n, after the
reranker) recall, so a loss can be pinned on a stage. Pure: plain data in, typed rows out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.core.audit.audit import Problem, id_list
from workbench.core.measures.measure_view import RankingLike, top_k
from workbench.core.model import Level

STAGE1_RECALL_BAR = 0.95
"""The field's working threshold: stage-1 Recall@K should exceed this before tuning a reranker."""


@dataclass(frozen=True, slots=True)
class StageRow:
    qid: str
    rel: int
    fetch_k: int
    keep_n: int
    fetch_recall: float
    """|Rel ∩ stage-1 top-K| / |Rel|: what the reranker was given to work with."""
    keep_recall: float
    """|Rel ∩ stage-2 top-n| / |Rel|: what survived the cut."""
    dropped: tuple[str, ...] = ()
    """Relevant docs stage 1 fetched that stage 2 did not keep: the reranker's loss."""
    never_fetched: tuple[str, ...] = ()
    """Relevant docs stage 1 missed: the retriever's loss, no reranker can recover them."""


@dataclass(frozen=True, slots=True)
class StageMean:
    queries: int
    fetch_recall: float | None
    keep_recall: float | None


@dataclass(frozen=True, slots=True)
class TwoStage:
    rows: dict[str, StageRow]
    mean: StageMean
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
            dropped=tuple(d for d in relevant if d in fetched and d not in kept),
            never_fetched=tuple(d for d in relevant if d not in fetched),
        )
        rows[qid] = row
        outside = [d for d in second if d not in fetched] if qid in stage1 else []
        problems.extend(_stage_problems(row, outside, bar))
    fetch = [r.fetch_recall for r in rows.values()]
    keep = [r.keep_recall for r in rows.values()]
    mean = StageMean(
        len(rows),
        sum(fetch) / len(fetch) if fetch else None,
        sum(keep) / len(keep) if keep else None,
    )
    return TwoStage(rows, mean, problems)


def _stage_problems(row: StageRow, outside: list[str], bar: float) -> list[Problem]:
    """Stage 1 below the bar, relevant docs stage 2 dropped, stage-2 docs stage 1 never had."""
    problems: list[Problem] = []
    k_fetch, keep_n = row.fetch_k, row.keep_n
    if row.fetch_recall <= bar:
        message = (
            f"stage-1 recall@{k_fetch} = {row.fetch_recall:.3f} <= {bar}: the retriever lost "
            f"{id_list(row.never_fetched)}; no reranker can recover them"
        )
        problems.append(Problem(row.qid, Level.WARNING, "stage1_recall_low", message))
    if row.dropped:
        message = (
            f"stage 2 dropped relevant docs stage 1 had fetched: {id_list(row.dropped)} "
            f"(keep-recall@{keep_n} {row.keep_recall:.3f} vs fetch-recall@{k_fetch} "
            f"{row.fetch_recall:.3f})"
        )
        problems.append(Problem(row.qid, Level.WARNING, "stage2_dropped", message))
    if outside:
        message = (
            f"stage 2 keeps docs stage 1 never fetched in its top {k_fetch}: {id_list(outside)} "
            "(are the two runs from the same pipeline?)"
        )
        problems.append(Problem(row.qid, Level.WARNING, "stage2_not_from_stage1", message))
    return problems
