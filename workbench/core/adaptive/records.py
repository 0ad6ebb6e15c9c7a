"""The adaptive queue's records: its knobs (`PolicyConfig`), a pick (`Pick`), where a query
stands (`QueryState`), and each query's state inside a session (`QueryRecord`, with the caches
on it). Plain data, shared by the policy (`policy`), the picks it draws (`picking`) and the
forecast of judgments to go (`projection`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.adaptive.estimate import CandidateTotal, Draw, SampledTotal
from workbench.core.adaptive.frame import QueryFrame
from workbench.core.adaptive.rest import RestSample
from workbench.core.adaptive.text import FrameIndex
from workbench.core.model import Status


@dataclass(frozen=True)
class PolicyConfig:
    """The policy's knobs (defaults chosen on seeds 0-2 of bench/coverage_sim.py)."""

    draw_share: float = 0.25
    """Share of the picks after the fair start that are draws among the candidates."""
    rest_share: float = 0.35
    """Share of the picks after the fair start that are draws from the reserve (the rest of the
    corpus holds a fifth to a half of the shared collections' relevant passages; at 0.15 its
    estimate was the interval's widest part)."""
    defensive: float = 0.2
    """Share of each draw's probability spread over all unjudged passages by weight."""
    target: float = 0.8
    """Certified when the completeness interval's lower end reaches this."""
    max_per_query: int | None = None
    """No more judgments than this per query (it then stays incomplete if not certified)."""
    stop_when_certified: bool = True
    refit_every: int = 20
    """Judgments between refits of the relevance model."""
    seed: int = 0
    two_phase: bool = False
    """Where the judge covariate labelled the reserve, sample it in two phases by the judge's
    label (`twophase`). Off: at the 300-passage reserve it measured no narrowing (wider with a
    good judge on cranfield, with a random one on npl: docs/llm-judges.md), so it is an
    experiment (`bench/judge_sim.py --two-phase`) until the judge labels a larger first phase."""


@dataclass(frozen=True, slots=True)
class Pick:
    """The next passage to judge and why: 'fair', 'feedback' or 'draw' (with its record)."""

    query_id: str
    doc_id: str
    kind: str
    draw: Draw | None = None


@dataclass(frozen=True, slots=True)
class QueryState:
    """Where one query stands: its estimate, status and the judgments the model expects it
    still needs to be certified (None: not within the cap, or not reachable); the judgments it
    needs to have an estimate at all (0: it has one; None: not within its frame or cap); and
    what its frame has left to judge (within the cap). `workbench.core.coverage.to_go` words
    them, one way everywhere."""

    query_id: str
    judged: int
    total: SampledTotal
    status: Status
    more_to_certify: int | None
    capped: bool
    to_estimate: int | None = None
    frame_left: int | None = None


REST_DRAWS = 4000
"""Posterior draws of the rest of the corpus's relevant count per estimate."""
PRIOR = (-3.0, 1.5, 2.0, 3.0, -1.0, 0.5)
"""Prior weights: intercept, reserve (offset vs rank 100), cosine to the query, to the judged
relevant, to the judged non-relevant, the query's relevance logit so far; each system's rank
feature 2.0."""


@dataclass
class QueryRecord:
    """One query's state in the session: its frame, judgments, draws and the caches on them."""

    frame: QueryFrame
    words: Sequence[str]
    """The query's tokens."""
    position: dict[str, int]
    built: tuple[FrameIndex, Any] | None = None
    """The frame's term index and every passage's cosine with the query (built on first use:
    a study of 225 queries opens in the app without building them all)."""
    grades: dict[int, bool] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    rel_sims: list[Any] = field(default_factory=list)
    rel_cols: dict[int, int] = field(default_factory=dict)
    non_sims: list[Any] = field(default_factory=list)
    non_cols: dict[int, int] = field(default_factory=dict)
    draws: list[Draw] = field(default_factory=list)
    pending: Draw | None = None
    version: int = 0
    """Bumped by every grade recorded or forgotten: the caches below hold for one version of
    the query's judgments and one of the model (a regrade of the last passage changes
    neither the count nor the last index, so those cannot be the key)."""
    probs: tuple[Any, Any] | None = None
    cached: tuple[Any, CandidateTotal] | None = None
    weighted: tuple[Any, tuple[float, float]] | None = None
    """The relevant candidates, depth-weighted and plain (`_relevant_candidates`)."""
    rests: dict[bool, tuple[Any, RestSample]] = field(default_factory=dict)
    """The rest's sample (`rest_sample`), for the fit and not, each with its key."""
    next: Pick | None = None
    """The pick made and not yet judged (asking again returns it)."""
    next_ready: bool = False
    kinds: dict[str, int] = field(default_factory=dict)
    """Picks after the fair start, by kind."""
    judge_columns: Any = None
    """The judge covariate's columns for the frame (fixed with the frame: built once)."""
    reserve_seen: int = 0
    """Reserve passages judged: until one is, the query has no estimate (its rest, of passages
    no system ranked, would be the shared model's guess alone)."""

    @property
    def candidate_draws(self) -> int:
        """Judged draws among the candidates (what the Des Raj estimate rests on)."""
        return sum(1 for d in self.draws if not d.reserve)

    def drop_column(self, i: int) -> None:
        """A regraded or undone passage's cosines stop counting: zeroed (the columns keep their
        positions), or None where only its index was held (`AdaptiveSession.record`)."""
        for cols, sims in ((self.rel_cols, self.rel_sims), (self.non_cols, self.non_sims)):
            if i in cols:
                c = cols.pop(i)
                sims[c] = None if isinstance(sims[c], int) else sims[c] * 0.0

    def fill_columns(self, index: FrameIndex) -> None:
        """The cosines of the passages judged before the vectors were built (held as their
        index, or None once dropped), computed now that `index` is."""
        import numpy as np

        for sims in (self.rel_sims, self.non_sims):
            for col, held in enumerate(sims):
                if isinstance(held, int):
                    sims[col] = index.similarities(held)
                elif held is None:
                    sims[col] = np.zeros(len(self.frame.doc_ids))
