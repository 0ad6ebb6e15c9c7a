"""Batches sized by passage length: a token budget per batch instead of a fixed count, so short
passages go many at a time and long ones few (steady memory, little padding)."""

from __future__ import annotations

from collections.abc import Sequence

TOKENS_PER_ITEM = 128
"""A batch's token budget is its maximum size times this (a 64-item cap: 8,192 tokens)."""


def token_budget_batches(
    token_counts: Sequence[int], max_batch: int, token_budget: int | None = None
) -> list[list[int]]:
    """Indices of `token_counts`, longest first, cut into batches whose padded size (items x
    longest item) stays within `token_budget` (default `max_batch * TOKENS_PER_ITEM`) and whose
    length is at most `max_batch`; an item longer than the budget goes alone."""
    if max_batch < 1:
        raise ValueError(f"max_batch must be at least 1, not {max_batch}")
    budget = token_budget if token_budget is not None else max_batch * TOKENS_PER_ITEM
    order = sorted(range(len(token_counts)), key=lambda i: (-token_counts[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        width = max(longest, token_counts[index], 1)
        if current and (len(current) + 1 > max_batch or (len(current) + 1) * width > budget):
            batches.append(current)
            current, width = [], max(token_counts[index], 1)
        current.append(index)
        longest = width
    if current:
        batches.append(current)
    return batches
