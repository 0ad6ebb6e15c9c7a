"""The rank column checked against the scores (both run readers): one warning per file naming
how many queries' ranks disagree with the ordering rule, the rule that decides the order."""

from __future__ import annotations

import os
from itertools import pairwise
from operator import and_, eq, le, lt

from workbench.core.model import order_pairs


def rank_column_warning(
    path: str | os.PathLike[str], disagreeing: int, tie_only: int, queries: int
) -> str | None:
    """The warning for `disagreeing` of `queries` queries (`tie_only` of them only among tied
    scores), or None when none disagrees."""
    if not disagreeing:
        return None
    ties = f" ({tie_only} of them only among tied scores)" if tie_only else ""
    return (
        f"{path}: the rank column disagrees with the scores in {disagreeing} of "
        f"{queries} queries{ties}; order follows the scores (score descending, ties by "
        "docid descending), as trec_eval does"
    )


def rank_agreement(docs: dict[str, float], file_ranks: list[int]) -> tuple[bool, bool]:
    """(agree, only among ties) for one query: its ranks strictly increase along the ordering
    rule; or, when they do not, ordering by rank still puts the scores in non-increasing order."""
    agree = ranks_agree(docs, file_ranks)
    return agree, not agree and ranks_follow_scores(docs, file_ranks)


def file_order_agreement(docs: dict[str, float]) -> tuple[bool, bool]:
    """(agree, follow scores) for ranks that strictly increase in file order: they agree when
    the file order is the ordering rule's, and follow the scores when scores never rise."""
    values = list(docs.values())
    if values != sorted(values, reverse=True):
        return False, False
    ids = list(docs)
    # A tie (equal neighbours) whose ids do not descend breaks the rule; checked in C.
    broken = any(map(and_, map(eq, values, values[1:]), map(le, ids, ids[1:])))
    return not broken, True


def ranks_agree(docs: dict[str, float], file_ranks: list[int]) -> bool:
    """True when ranks strictly increase along the ordering rule (their values may start at 0).
    `file_ranks` follows the file order, as `docs` does; the common case is checked in C."""
    if all(map(lt, file_ranks, file_ranks[1:])):
        return file_order_agreement(docs)[0]
    rank_of = dict(zip(docs, file_ranks, strict=True))
    rank_seq = [rank_of[d] for d in order_pairs(docs.items())]
    return all(a < b for a, b in pairwise(rank_seq))


def ranks_follow_scores(docs: dict[str, float], file_ranks: list[int]) -> bool:
    """True when ordering by rank puts scores in non-increasing order: the ranks then differ
    from the ordering rule only in how they break ties."""
    by_rank = [score for _, score in sorted(zip(file_ranks, docs.values(), strict=True))]
    return all(a >= b for a, b in pairwise(by_rank))
