"""Position bias of a pairwise judge judged in both orders (pure: text in, figures out).

Each record says which of two documents `a`, `b` was shown first and which the judge preferred
("a", "b" or "tie"; "a"/"b" name documents, not positions). A pair's preference is *consistent*
when it is the same document (or a tie both times) whichever was shown first. An unbiased judge
prefers the first-shown document in half of its decisive verdicts."""

from __future__ import annotations

import math
from dataclasses import dataclass

Z_95 = 1.959963984540054
PairKey = tuple[str, str, str]
"""(query_id, lower doc id, higher doc id): a pair whichever way round a record names it."""


@dataclass(frozen=True, slots=True)
class Comparison:
    query_id: str
    first_doc: str
    second_doc: str
    preferred_doc: str | None
    """None for a tie."""
    line: int

    @property
    def key(self) -> PairKey:
        low, high = sorted((self.first_doc, self.second_doc))
        return (self.query_id, low, high)


def wilson_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """95% Wilson score interval for a proportion (sound at small n and near 0 or 1)."""
    if trials == 0:
        return None
    p = successes / trials
    z2 = Z_95 * Z_95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z_95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _score(comparison: Comparison, doc: str) -> float:
    """1 when `doc` was preferred, 0.5 for a tie, 0 otherwise."""
    if comparison.preferred_doc is None:
        return 0.5
    return 1.0 if comparison.preferred_doc == doc else 0.0


def position_bias_report(comparisons: list[Comparison]) -> dict:
    """Position consistency, first-position preference rate (with a Wilson CI), tie rate, and
    swap-averaged preferences per pair; pairs judged in one order only are listed apart."""
    by_pair: dict[PairKey, list[Comparison]] = {}
    for c in comparisons:
        by_pair.setdefault(c.key, []).append(c)
    decisive = [c for c in comparisons if c.preferred_doc is not None]
    first_wins = sum(c.preferred_doc == c.first_doc for c in decisive)
    per_pair = []
    one_order = []
    consistent = inconsistent = flips_to_first = flips_to_second = 0
    for key in sorted(by_pair):
        qid, low, high = key
        judged = by_pair[key]
        both = len(judged) == 2
        same: bool | None = None
        if both:
            same = judged[0].preferred_doc == judged[1].preferred_doc
            if same:
                consistent += 1
            else:
                inconsistent += 1
                if all(c.preferred_doc == c.first_doc for c in judged):
                    flips_to_first += 1
                elif all(c.preferred_doc == c.second_doc for c in judged):
                    flips_to_second += 1
        else:
            c = judged[0]
            one_order.append(
                {"qid": qid, "first": c.first_doc, "second": c.second_doc, "line": c.line}
            )
        a_score = sum(_score(c, low) for c in judged) / len(judged)
        per_pair.append(
            {
                "qid": qid,
                "a": low,
                "b": high,
                "orders": len(judged),
                "a_score": a_score,
                "verdict": "a" if a_score > 0.5 else "b" if a_score < 0.5 else "tie",
                "consistent": same,
            }
        )
    both_orders = consistent + inconsistent
    ci = wilson_interval(first_wins, len(decisive))
    return {
        "comparisons": len(comparisons),
        "pairs": len(by_pair),
        "both_orders": both_orders,
        "consistent": consistent,
        "inconsistent": inconsistent,
        "consistency": consistent / both_orders if both_orders else None,
        "inconsistent_favouring_first": flips_to_first,
        "inconsistent_favouring_second": flips_to_second,
        "decisive": len(decisive),
        "first_position_rate": first_wins / len(decisive) if decisive else None,
        "first_position_rate_ci": list(ci) if ci else None,
        "tie_rate": (len(comparisons) - len(decisive)) / len(comparisons) if comparisons else None,
        "one_order_only": one_order,
        "per_pair": per_pair,
    }
