"""The stopping rule on the decision: `--target MEASURE:WIDTH` (e.g. `R@10:0.05`) is reached
when the study interval of that mean is at most WIDTH wide for every pooled run; until then, how
many more judgments it is expected to take and on which queries.

The forecast. A run's mean's variance over the joint draws splits into each query's own part
v_q (its figure's variance over the draws / queries^2: what that query's missing judgments
leave open) and the rest, the covariance the shared parameters cause. A query's part falls as
a sample's variance does, by the finite-population rule: with n_q judged of the N_q passages its
frame holds, by (N_q - n_q - m) / (N_q (n_q + m)) over (N_q - n_q) / (N_q n_q) after m more
(nothing left open once the frame is judged); the shared part the same way over the study's
judgments. Judgments go one at a time to the query
whose next one lowers the widest run's variance most (the queue's rule,
`next_query`), until the interval's width, scaled from the variance as the draws' quantiles
are, reaches the target, or every query's frame is judged. A forecast, shown as "≈": it assumes
the model's view of what is left holds."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.interval_level import Z
from workbench.core.measures.measure_key import MeasureKey, parse_key, split_key
from workbench.core.model import PoolEntry
from workbench.core.study.intervals import STUDY_MEASURES, RunStudy, StudyInterval, variance_shares

DEFAULT_TARGET = "R@10:0.05"
"""The target a new store gets: mean R@10 known to within 0.05 (its interval's full width) for
every pooled run, enough to tell runs 0.05 apart."""
NEXT_SHOWN = 5
"""Queries named in a plan's `next` (the ones taking most of the judgments to go)."""
_NAME = re.compile(r"[A-Za-z]+", re.ASCII)
_WIDTH = re.compile(r"\d*\.?\d+", re.ASCII)


@dataclass(frozen=True, slots=True)
class Target:
    """Judge until the study interval of `key`'s mean is at most `width` wide for every run."""

    key: str
    width: float

    @property
    def measure(self) -> MeasureKey:
        return parse_key(self.key)

    @property
    def k(self) -> int:
        return int(self.measure.cutoff or 0)

    def __str__(self) -> str:
        return f"{self.key}:{self.width:g}"


def parse_target(spec: str, option: str = "--target") -> Target:
    """`MEASURE@K:WIDTH` (R, P or nDCG; WIDTH in (0, 1]); ValueError naming `option`."""
    text = spec.strip() if isinstance(spec, str) else ""
    key, colon, width_text = text.partition(":")
    name, cutoff = split_key(key)
    measures = ", ".join(STUDY_MEASURES)
    digits = cutoff is not None and cutoff.isascii() and cutoff.isdigit()
    named = key == key.strip() and _NAME.fullmatch(name) is not None
    if not (colon and named and digits and _WIDTH.fullmatch(width_text)):
        raise ValueError(
            f"{option} {spec!r}: expected MEASURE@K:WIDTH, e.g. R@10:0.05 ({measures})"
        )
    assert cutoff is not None
    canonical = {m.lower(): m for m in STUDY_MEASURES}
    measure = canonical.get(name.lower())
    if measure is None:
        raise ValueError(f"{option} {spec!r}: a study interval is given for {measures} only")
    k, width = int(cutoff), float(width_text)
    if not 1 <= k <= 10**6:
        raise ValueError(f"{option} {spec!r}: the cutoff must be between 1 and 1000000")
    if not (math.isfinite(width) and 0 < width <= 1):
        raise ValueError(f"{option} {spec!r}: the width must be in (0, 1]")
    return Target(MeasureKey.at(measure, k), width)


def pooled_rankings(pool: Sequence[PoolEntry]) -> dict[str, dict[str, list[str | None]]]:
    """Each pooled system's ranking per query as the pool recorded it (the candidates' ranks:
    every system's top `candidate depth`), system -> query -> the doc id at each rank, None
    where the pool holds none (an identical twin of a passage ranked above it: eval folds it
    onto that passage, where it counts nothing), so a run's top k here is eval's top k."""
    ranked: dict[str, dict[str, dict[int, str]]] = {}
    for entry in pool:
        for p in entry.provenance:
            ranked.setdefault(p.system, {}).setdefault(entry.query_id, {})[p.rank] = entry.doc_id
    return {
        system: {q: [at.get(r) for r in range(1, max(at) + 1)] for q, at in by_query.items()}
        for system, by_query in ranked.items()
    }


@dataclass(frozen=True, slots=True)
class Plan:
    """Where the study stands against its target: each run's interval, whether the target is
    reached, and if not the judgments expected to reach it (None: not within the frames) and
    the queries that would take them (query -> judgments), most first."""

    target: Target
    runs: Mapping[str, StudyInterval]
    reached: bool
    to_target: int | None
    next: Mapping[str, int] = field(default_factory=dict)
    unmeasured: tuple[str, ...] = ()
    """Scored queries with no estimate yet: no interval until they have one."""
    allocation: Mapping[str, int] = field(default_factory=dict)
    """Every query's share of `to_target` (or of the judgments the forecast made before it ran
    out of frame), most first: where a walk toward the target spends them."""
    judged: int = 0
    """Human judgments so far, the ones `to_target` adds to (the grades that count: a model
    judge's labels are features of the relevance model and cost nothing, so they are neither
    judged nor taken off what the frames leave to judge)."""
    to_first: int | None = None
    """While some query has no estimate: the judgments until every query has one and the
    study has its first figure, in the app's order (a forecast; None: out of the frames)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "target": str(self.target),
            "runs": {name: i.to_json() for name, i in self.runs.items()},
            "reached": self.reached,
            "to_target": self.to_target,
            "judged": self.judged,
            "next": dict(self.next),
            "unmeasured": list(self.unmeasured),
            "to_first_figure": self.to_first if self.unmeasured else 0,
        }


def plan(
    target: Target,
    studies: Mapping[str, RunStudy],
    judged: Mapping[str, int],
    left: Mapping[str, int],
) -> Plan:
    """The plan toward `target` from each run's study (`studies`), each query's human judgments
    so far (`judged`) and the passages its frame still holds unjudged by people (`left`)."""
    return replace(_plan(target, studies, judged, left), judged=sum(judged.values()))


# long: the plan's figures follow each other (share, rate, judgments to go)
def _plan(
    target: Target,
    studies: Mapping[str, RunStudy],
    judged: Mapping[str, int],
    left: Mapping[str, int],
) -> Plan:
    import numpy as np

    key = target.key
    runs = {name: s.intervals[key] for name, s in studies.items() if key in s.intervals}
    unmeasured = tuple(sorted({q for i in runs.values() for q in i.unmeasured}))
    if not unmeasured and any(i.low is None for i in runs.values()):
        unmeasured = tuple(judged)  # no query has a judged relevant passage yet
    if unmeasured or not runs:
        return Plan(target, runs, False, None, {}, unmeasured)
    widths = {name: i.width or 0.0 for name, i in runs.items()}
    if all(w <= target.width for w in widths.values()):
        return Plan(target, runs, True, 0)
    # per run: each query's own variance, the shared rest, and the width per unit sd
    parts: dict[str, tuple[dict[str, float], float, float]] = {}
    total_judged = max(sum(judged.values()), 1)
    for name, s in studies.items():
        queries = s.scored.get(key, [])
        if not queries:
            continue
        stacked = np.vstack([s.per_query[key][q] for q in queries])
        mean = np.nanmean(stacked, axis=0)
        variance = float(np.var(mean))
        own = variance_shares(s, key)
        scale = widths[name] / math.sqrt(variance) if variance > 0 else 2 * Z
        parts[name] = (own, variance - sum(own.values()), scale)
    more = dict.fromkeys(judged, 0)

    own_now = {name: sum(own.values()) for name, (own, _, _) in parts.items()}

    def run_width(name: str, added: int) -> float:
        _, shared, scale = parts[name]
        v = own_now[name] + max(shared, 0.0) * _fall(total_judged, added, total_size)
        return scale * math.sqrt(max(v, 0.0))

    added = 0
    ceiling = sum(max(n, 0) for n in left.values())
    total_size = total_judged + ceiling
    batch = max(1, ceiling // 2000)
    while True:
        current = {name: run_width(name, added) for name in parts}
        widest = max(current, key=lambda n: current[n])
        if current[widest] <= target.width:
            break
        step = next_query(parts[widest][0], judged, more, left) if added < ceiling else None
        if step is None:
            return Plan(target, runs, False, None, _top(more), (), _top(more, len(more)))
        taken = min(batch, left.get(step, 0) - more.get(step, 0))
        n, m = judged.get(step, 0), more.get(step, 0)
        size = n + left.get(step, 0)
        for name, (own, _, _) in parts.items():
            if step in own:
                own_now[name] += own[step] * (_fall(n, m + taken, size) - _fall(n, m, size))
        more[step] = m + taken
        added += taken
    return Plan(target, runs, False, added, _top(more), (), _top(more, len(more)))


def _fall(judged: int, more: int, size: int | None = None) -> float:
    """A sample's variance after `more` judgments, as a share of now's: (N - n) / (N n), the
    finite-population rule, with N = `size` the passages there are to judge (None: many)."""
    n = max(judged, 1)
    if size is None or size <= n:
        return n / (n + more)
    return max(size - n - more, 0) / (n + more) * n / (size - n)


def next_query(
    own: Mapping[str, float],
    judged: Mapping[str, int],
    more: Mapping[str, int] | None = None,
    left: Mapping[str, int] | None = None,
) -> str | None:
    """The query whose next judgment lowers the mean's variance most: its own part v_q falls
    by the finite-population rule (`_fall`) from m more judgments to m + 1 (None: every frame
    judged)."""
    more = more or {}
    best, gain = None, -1.0
    for q, v in own.items():
        m = more.get(q, 0)
        if left is not None and left.get(q, 0) <= m:
            continue
        size = judged.get(q, 0) + left[q] if left is not None else None
        drop = v * (_fall(judged.get(q, 0), m, size) - _fall(judged.get(q, 0), m + 1, size))
        if drop > gain:
            best, gain = q, drop
    return best


def _top(more: Mapping[str, int], count: int = NEXT_SHOWN) -> dict[str, int]:
    """The queries taking the most of the forecast's judgments, most first."""
    ranked = sorted(((n, q) for q, n in more.items() if n > 0), key=lambda x: (-x[0], x[1]))
    return {q: n for n, q in ranked[:count]}


def study_plan(
    session: Any,
    grades: Mapping[str, Mapping[str, int]],
    pool: Sequence[PoolEntry],
    target: Target,
    rel_threshold: int = 1,
    count: int | None = None,
) -> Plan:
    """Where an adaptive study stands against `target`: the study of every pooled system's
    ranking (as the pool recorded it) over the queries with a judged relevant passage (those
    eval's mean covers), and the forecast. `session`: the store's `AdaptiveSession`; `grades`:
    the grades that count (query -> doc -> grade)."""
    from workbench.core.adaptive.projection import to_first_figure
    from workbench.core.study.draws import STUDY_DRAWS, study_draws
    from workbench.core.study.intervals import study

    draws = study_draws(session, count or STUDY_DRAWS)
    runs = pooled_rankings(pool)
    scored = [
        q for q in session.queries if any(g >= rel_threshold for g in grades.get(q, {}).values())
    ]
    measure = target.measure.name
    studies = study(draws, grades, runs, [target.k], {name: {target.key: scored} for name in runs},
                    rel_threshold, measures=(measure,))  # fmt: skip
    judged = {q: session.judged(q) for q in session.queries}  # human grades: no judge label
    left = {q: len(session.queries[q].frame.doc_ids) - judged[q] for q in session.queries}
    found = plan(target, studies, judged, left)
    # A query with no estimate yet is outside the mean only while nothing relevant is found
    # there (eval's rule): the target is not reached until it has an estimate, and the walk
    # judges it first (it may hold relevant passages no judgment has met).
    waiting = tuple(q for q in draws.unmeasured(list(session.queries)) if q not in scored)
    if waiting and not found.unmeasured:
        found = Plan(target, found.runs, False, None, {}, found.unmeasured + waiting,
                     judged=found.judged)  # fmt: skip
    if found.unmeasured:
        found = replace(found, to_first=to_first_figure(session, found.unmeasured))
    return found


def target_of(recorded: str | None) -> Target:
    """The study's target from its recorded text (a store's meta `target`: set at pool, changed
    by `coverage --target`), else the default (also for a text no longer read as one)."""
    try:
        return parse_target(recorded or DEFAULT_TARGET)
    except ValueError:
        return parse_target(DEFAULT_TARGET)


REFRESH = 25
"""Judgments between two rankings of the queries for the app (`StudyRanking`)."""


class StudyRanking:
    """The app's `ranked` for `policy_chooser`: the queries whose judgments narrow the study
    interval of `target` most, first (queries without an estimate yet before them), computed
    from the session's own grades (relevant or not, which is what recall's target reads)
    again after every `REFRESH` judgments; `latest` is the plan it came from and `behind` the
    judgments since (the app's status line words them: `reports.ranking_words`)."""

    def __init__(
        self,
        session: Any,
        pool: Sequence[PoolEntry],
        target: Target,
        count: int = 300,
        lag: int = 0,
    ):
        self.session, self.pool, self.target, self.count = session, pool, target, count
        self.lag = lag
        """Judgments past `REFRESH` a call lets the ranking fall behind before computing it
        itself (never the first one): the app computes it while the annotator
        reads (`due`, `refresh`), so that the chooser's call on a grade's path finds it made."""
        self.latest: Plan | None = None
        self._at = -REFRESH
        self._order: list[str] = []

    def due(self) -> bool:
        """Whether `REFRESH` judgments came since the ranking was last computed, or the first
        study figure it forecast is due (the queue serves the unmeasured queries first, each
        judgment one nearer: `to_first`)."""
        since = self._judged() - self._at
        plan = self.latest
        first_due = plan is not None and plan.unmeasured and plan.to_first is not None
        return since >= REFRESH or bool(first_due and since >= plan.to_first)

    def _judged(self) -> int:
        return sum(self.session.judged(q) for q in self.session.queries)

    def refresh(self) -> None:
        """Compute the ranking now, from the session's grades."""
        self.take(*self.compute())

    def compute(self, session: Any = None) -> tuple[Plan, int]:
        """The plan from `session` (by default the ranking's own; a snapshot of it, read in
        another thread, say) and the judgments it was made at, for `take`."""
        session = self.session if session is None else session
        grades = {
            q: {s.frame.doc_ids[i]: int(r) for i, r in s.grades.items()}
            for q, s in session.queries.items()
        }
        judged = sum(session.judged(q) for q in session.queries)
        return study_plan(session, grades, self.pool, self.target, count=self.count), judged

    def take(self, plan: Plan, judged: int) -> None:
        """Follow `plan`, made at `judged` judgments (`compute`), unless a later one is followed."""
        if self.latest is not None and judged < self._at:
            return
        self.latest = plan
        self._order = list(plan.unmeasured) or list(plan.allocation)
        self._at = judged

    def __call__(self) -> list[str]:
        """The ranking; with a `lag`, empty until the first one is computed (the app's to
        compute between grades: on a grade's path it would build every query's index)."""
        if self.latest is None:
            if not self.lag:
                self.refresh()
        elif self._judged() - self._at >= REFRESH + self.lag:
            self.refresh()
        return self._order

    def behind(self) -> int:
        """Judgments made since the followed plan was computed (what the status line counts
        down from its `to_first`)."""
        return self._judged() - self._at
