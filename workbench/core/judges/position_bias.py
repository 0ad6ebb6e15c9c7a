"""Position bias of a pairwise judge judged in both orders (pure: text in, figures out).

Each record says which of two documents `a`, `b` was shown first and which the judge preferred
("a", "b" or "tie"; "a"/"b" name documents, not positions). A pair's preference is *consistent*
when it is the same document (or a tie both times) whichever was shown first. An unbiased judge
prefers the first-shown document in half of its decisive verdicts."""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.core.agreement.kappa import Z_95

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


@dataclass(frozen=True, slots=True)
class PairPreference:
    """One pair, its documents in id order (`a` < `b`), preferences averaged over its orders."""

    query_id: str
    a: str
    b: str
    orders: int
    a_score: float
    """1 when `a` always won, 0.5 for ties or a split, 0 when `b` always won."""
    consistent: bool | None
    """Same verdict in both orders; None when judged in one order only."""

    @property
    def verdict(self) -> str:
        return "a" if self.a_score > 0.5 else "b" if self.a_score < 0.5 else "tie"

    def to_json(self) -> dict:
        return {
            "qid": self.query_id,
            "a": self.a,
            "b": self.b,
            "orders": self.orders,
            "a_score": self.a_score,
            "verdict": self.verdict,
            "consistent": self.consistent,
        }


@dataclass(frozen=True, slots=True)
class OneOrder:
    """A pair judged in one order only (left out of consistency)."""

    query_id: str
    first: str
    second: str
    line: int

    def to_json(self) -> dict:
        return {"qid": self.query_id, "first": self.first, "second": self.second, "line": self.line}


@dataclass(frozen=True, slots=True)
class PositionBiasReport:
    comparisons: int
    decisive: int
    """Comparisons with a preference (not a tie)."""
    first_wins: int
    """Decisive comparisons won by the document shown first."""
    consistent: int
    inconsistent: int
    favouring_first: int
    """Inconsistent pairs whose verdict went to whichever was shown first, both times."""
    favouring_second: int
    per_pair: tuple[PairPreference, ...]
    one_order_only: tuple[OneOrder, ...]

    @property
    def both_orders(self) -> int:
        return self.consistent + self.inconsistent

    @property
    def consistency(self) -> float | None:
        return self.consistent / self.both_orders if self.both_orders else None

    @property
    def first_position_rate(self) -> float | None:
        """Unbiased: 0.5."""
        return self.first_wins / self.decisive if self.decisive else None

    @property
    def first_position_rate_ci(self) -> tuple[float, float] | None:
        return wilson_interval(self.first_wins, self.decisive)

    @property
    def tie_rate(self) -> float | None:
        ties = self.comparisons - self.decisive
        return ties / self.comparisons if self.comparisons else None

    def to_json(self) -> dict:
        ci = self.first_position_rate_ci
        return {
            "comparisons": self.comparisons,
            "pairs": len(self.per_pair),
            "both_orders": self.both_orders,
            "consistent": self.consistent,
            "inconsistent": self.inconsistent,
            "consistency": self.consistency,
            "inconsistent_favouring_first": self.favouring_first,
            "inconsistent_favouring_second": self.favouring_second,
            "decisive": self.decisive,
            "first_position_rate": self.first_position_rate,
            "first_position_rate_ci": list(ci) if ci else None,
            "tie_rate": self.tie_rate,
            "one_order_only": [o.to_json() for o in self.one_order_only],
            "per_pair": [p.to_json() for p in self.per_pair],
        }


def position_bias_report(comparisons: list[Comparison]) -> PositionBiasReport:
    """Position consistency, first-position preference rate (with a Wilson CI), tie rate, and
    swap-averaged preferences per pair; pairs judged in one order only are listed apart."""
    by_pair: dict[PairKey, list[Comparison]] = {}
    for c in comparisons:
        by_pair.setdefault(c.key, []).append(c)
    decisive = [c for c in comparisons if c.preferred_doc is not None]
    per_pair: list[PairPreference] = []
    one_order: list[OneOrder] = []
    to_first = to_second = 0
    for (qid, low, high), judged in sorted(by_pair.items()):
        same: bool | None = None
        if len(judged) == 2:
            same = judged[0].preferred_doc == judged[1].preferred_doc
            to_first += not same and all(c.preferred_doc == c.first_doc for c in judged)
            to_second += not same and all(c.preferred_doc == c.second_doc for c in judged)
        else:
            c = judged[0]
            one_order.append(OneOrder(qid, c.first_doc, c.second_doc, c.line))
        a_score = sum(_score(c, low) for c in judged) / len(judged)
        per_pair.append(PairPreference(qid, low, high, len(judged), a_score, same))
    return PositionBiasReport(
        comparisons=len(comparisons),
        decisive=len(decisive),
        first_wins=sum(c.preferred_doc == c.first_doc for c in decisive),
        consistent=sum(p.consistent is True for p in per_pair),
        inconsistent=sum(p.consistent is False for p in per_pair),
        favouring_first=to_first,
        favouring_second=to_second,
        per_pair=tuple(per_pair),
        one_order_only=tuple(one_order),
    )
