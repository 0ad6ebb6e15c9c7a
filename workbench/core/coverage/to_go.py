"""What one query still needs, as one figure worded one way: the app's status line and overview,
`coverage` (text, Markdown, HTML) and `report` all read it from `to_go`, so no two of them give
one query two figures (the status line said 'out of reach' where the overview said '≈ 328').

From a coverage row (`QueryFigures`) or the adaptive queue's `QueryState`: certified; the
judgments to certify it, as the model forecasts them (`core.adaptive.projection`); more than its
frame has left when the model sees no end within it (never 'out of reach' while the frame can
still be judged); and, for an unmeasured query, the judgments that give it an estimate."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.model import Status

CERTIFIED = "certified"
COMPLETE = "complete"
CERTIFY = "certify"
WHOLE_FRAME = "whole_frame"
"""Judging all its frame (which holds the whole corpus outside the candidates) certifies it."""
BEYOND_FRAME = "beyond_frame"
FRAME_JUDGED = "frame_judged"
CAPPED = "capped"
ESTIMATE = "estimate"
NO_ESTIMATE = "no_estimate"
NO_SAMPLE = "no_sample"
INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class ToGo:
    """One query's 'to go': its kind and the judgments it counts (None where no count)."""

    kind: str
    judgments: int | None = None

    @property
    def cell(self) -> str:
        """The table cell (coverage's 'to go' column, the overview's)."""
        n = self.judgments
        return {
            CERTIFY: f"≈ {n}",
            WHOLE_FRAME: f"{n} (all)",
            BEYOND_FRAME: f"> {n}",
            FRAME_JUDGED: "all judged",
            CAPPED: "at its cap",
            ESTIMATE: f"≈ {n} to estimate",
            NO_ESTIMATE: "no estimate",
            NO_SAMPLE: "needs --sample",
        }.get(self.kind, "–")

    @property
    def words(self) -> str:
        """The same figure as a phrase (the app's status line)."""
        n = self.judgments
        return {
            CERTIFIED: "certified",
            COMPLETE: "complete",
            CERTIFY: f"≈ {n} to certify",
            WHOLE_FRAME: f"{n} to certify: all it has left",
            BEYOND_FRAME: f"> {n} to certify (more than it has left)",
            FRAME_JUDGED: "all judged, not certified",
            CAPPED: "at its cap, not certified",
            ESTIMATE: f"≈ {n} to an estimate",
            NO_ESTIMATE: "no estimate from what it has left",
            NO_SAMPLE: "no sample outside the pool: pool with --sample N",
            INCOMPLETE: "incomplete",
        }.get(self.kind, "no estimate yet")


def to_go(row: object, adaptive: bool, capped: bool = False) -> ToGo:
    """The figure of a coverage row (`QueryFigures`) or an adaptive `QueryState`: read from their
    `status`, `more_to_certify`, `to_estimate` and `frame_left`. `capped`: at the queue's cap
    (a `QueryState` says so itself)."""
    status = getattr(row, "status", None)
    more = getattr(row, "more_to_certify", None)
    estimate = getattr(row, "to_estimate", None)
    left = getattr(row, "frame_left", None)
    capped = capped or bool(getattr(row, "capped", False))
    if status == Status.COMPLETE:
        return ToGo(CERTIFIED if adaptive else COMPLETE)
    if adaptive and capped:
        return ToGo(CAPPED)
    if status == Status.UNMEASURED:
        if estimate:
            return ToGo(ESTIMATE, estimate)
        return ToGo(NO_ESTIMATE if adaptive else NO_SAMPLE)
    if not adaptive:
        return ToGo(INCOMPLETE)
    if more is not None:
        return ToGo(WHOLE_FRAME if left is not None and more >= left else CERTIFY, more)
    if left:
        return ToGo(BEYOND_FRAME, left)
    if left == 0:
        return ToGo(FRAME_JUDGED)
    return ToGo(INCOMPLETE)
