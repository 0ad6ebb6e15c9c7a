"""Floors on a run's means: `workbench eval --fail-under R@10=0.8` and `assert_eval(min=...)`.
Pure: the specs read and checked against the measures and cutoffs scored, then each run's mean
held to its floor.

The rule, written once here: a run clears a floor when its mean of the measure is defined and
at least the floor; where the mean has a study interval (an adaptive store: R@k, P@k, nDCG@k),
its lower end must clear the floor too, and a scored query without an estimate yet fails it
(a gate never passes with less evidence); elsewhere a floor on recall (`R@k`) must, when the
qrels carry a coverage estimate, also be cleared by the lower end of recall's interval under
the estimated |Rel| (its mean over the measured queries, as `eval` prints it), since recall
against the judged set overstates recall by every relevant document nobody judged."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.display import visible
from workbench.core.measures.measure_key import parse_key
from workbench.core.measures.metrics import Measure, read_measure

if TYPE_CHECKING:
    from workbench.core.audit.audit_coverage import Gate
    from workbench.core.study.intervals import RunStudy

RECALL = "R"
"""The measure whose floor the interval under the estimated |Rel| must clear too."""
_NUMBER = re.compile(r"\+?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", re.ASCII)
"""A floor as written on the command line: plain ASCII decimal (no '_', no 'nan')."""


@dataclass(frozen=True, slots=True)
class FloorCheck:
    """One run's mean of one measure held to its floor. `interval_low` is the mean lower end of
    R@k under the estimated |Rel| over `measured` queries (None: no estimate, or not recall)."""

    run: str
    measure: str
    floor: float
    value: float | None
    interval_low: float | None = None
    measured: int = 0
    study: bool = False
    """`interval_low` is the study interval's lower end (joint draws of every query's unjudged
    relevant), not the mean of the per-query lower ends."""
    unmeasured: tuple[str, ...] = ()
    """Scored queries whose denominator has no estimate yet: the study interval, and so the
    floor, cannot be cleared until they are measured."""

    @property
    def failed_on(self) -> str | None:
        """What failed: 'undefined' (no mean), 'unmeasured' (no study interval yet),
        'interval_low', 'mean'; None when cleared."""
        if self.value is None:
            return "undefined"
        if self.unmeasured:
            return "unmeasured"
        if self.interval_low is not None and self.interval_low < self.floor:
            return "interval_low"
        if self.value < self.floor:
            return "mean"
        return None

    @property
    def passed(self) -> bool:
        return self.failed_on is None

    @property
    def message(self) -> str:
        """One line naming the run, the measure, the figure held to the floor and the floor."""
        run, floor, failed = visible(self.run, one_line=True), f"{self.floor:g}", self.failed_on
        if failed == "undefined":
            return f"{run}: {self.measure} is undefined, so it cannot clear the floor {floor}"
        value = f"{self.value:.4f}"
        if failed == "unmeasured":
            left = ", ".join(visible(q, one_line=True) for q in self.unmeasured[:5])
            more = f" and {len(self.unmeasured) - 5} more" if len(self.unmeasured) > 5 else ""
            return (
                f"{run}: {self.measure} = {value} against the judged set, but {left}{more} "
                f"{'has' if len(self.unmeasured) == 1 else 'have'} no estimate of |Rel| yet, "
                f"so the mean has no study interval to clear the floor {floor} (judge more "
                "of them: `workbench coverage` says how many)"
            )
        if self.interval_low is None:
            verdict = "below the floor" if failed else "clears the floor"
            return f"{run}: {self.measure} = {value}, {verdict} {floor}"
        queries = f"{self.measured} measured quer{'y' if self.measured == 1 else 'ies'}"
        low = (
            f"the lower end of its interval under the estimated |Rel| is "
            f"{self.interval_low:.4f} (mean over {queries})"
        )
        if self.study:
            low = (
                f"the lower end of its study interval (95%, every query's unjudged relevant "
                f"drawn at once, {queries}) is {self.interval_low:.4f}"
            )
        if failed == "interval_low":
            return (
                f"{run}: {self.measure} = {value} against the judged set, but {low}, below the "
                f"floor {floor}: with a coverage estimate the lower end must clear the floor"
            )
        if failed == "mean":
            return f"{run}: {self.measure} = {value}, below the floor {floor} ({low})"
        return f"{run}: {self.measure} = {value} and {low}: both clear the floor {floor}"

    def to_json(self) -> dict[str, object]:
        """Its entry in `eval --json`'s `fail_under` list."""
        return {
            "run": self.run,
            "measure": self.measure,
            "floor": self.floor,
            "value": self.value,
            "interval_low": self.interval_low,
            "measured_queries": self.measured if self.interval_low is not None else None,
            "interval": "study" if self.study else ("per_query" if self.interval_low is not None
                                                    else None),
            "unmeasured": list(self.unmeasured),
            "passed": self.passed,
            "failed_on": self.failed_on,
            "message": self.message,
        }


def parse_floor_specs(values: Iterable[str], option: str = "--fail-under") -> dict[str, float]:
    """MEASURE=FLOOR specs, each value repeatable and comma-separated (`R@10=0.8,nDCG@10=0.5`),
    as measure -> floor. ValueError naming `option` and every malformed spec (a measure given
    twice included); the names and ranges are `floor_problems`' to check."""
    floors: dict[str, float] = {}
    problems: list[str] = []
    values = list(values)
    for value in values:
        for part in value.split(","):
            spec = part.strip()
            if not spec:
                continue
            name, sep, number = (s.strip() for s in spec.partition("="))
            if not sep or not name or not number:
                problems.append(f"{option} {spec}: expected MEASURE=FLOOR, e.g. R@10=0.8")
            elif not _NUMBER.fullmatch(number):
                problems.append(f"{option} {spec}: the floor {number!r} is not a number")
            elif name in floors:
                problems.append(f"{option} {spec}: {name} is given a floor twice")
            else:
                floors[name] = float(number)
    if values and not floors and not problems:
        problems.append(f"{option} needs at least one MEASURE=FLOOR, e.g. R@10=0.8")
    if problems:
        raise ValueError("\n".join(problems))
    return floors


def floor_problems(
    floors: Mapping[str, object],
    ks: Sequence[int],
    measures: Sequence[Measure] | None = None,
    label: str = "--fail-under {name}={value}",
) -> list[str]:
    """Why each floor cannot be checked: a measure not scored (unknown, a cutoff not among `ks`,
    a cutoff missing or extra, one measure twice however written) or a floor that is not a
    number in [0, 1] (every measure is a fraction). `label` names a spec in the messages, as
    the user wrote it."""
    evaluated = ", ".join(map(str, ks))
    problems: list[str] = []
    seen: dict[str, str] = {}
    for name, floor in floors.items():
        shown = f"{floor:g}" if isinstance(floor, float) else repr(floor)
        where = label.format(name=name, value=shown)
        if not isinstance(name, str):
            problems.append(f"{where}: a measure is named by text, e.g. 'R@10'")
            continue
        try:
            measure, cutoff = read_measure(name, measures)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if measure.cutoff and cutoff is None:
            problems.append(f"{where}: {measure.name} takes a cutoff: write {measure.name}@K")
        elif cutoff is not None and cutoff not in ks:
            problems.append(f"{where}: k = {cutoff} is not evaluated (k = {evaluated})")
        elif isinstance(floor, bool) or not isinstance(floor, (int, float)):
            problems.append(f"{where}: the floor must be a number in [0, 1]")
        elif not (math.isfinite(floor) and 0 <= floor <= 1):
            problems.append(f"{where}: the floor must be in [0, 1] (every measure is a fraction)")
        else:
            key = measure.key(cutoff) if cutoff is not None else measure.name
            if key in seen:
                problems.append(f"{where}: {key} is given a floor twice ({seen[key]!r} too)")
            seen[key] = name
    return problems


def canonical_floors(floors: Mapping[str, float]) -> dict[str, float]:
    """The floors under the report's own keys ('ndcg@010' -> 'nDCG@10'); specs already checked
    by `floor_problems`."""
    out: dict[str, float] = {}
    for name, floor in floors.items():
        measure, cutoff = read_measure(name)
        out[measure.key(cutoff) if cutoff is not None else measure.name] = float(floor)
    return out


def check_run(
    run_name: str,
    floors: Mapping[str, float],
    values: Mapping[str, float | None],
    study: RunStudy | None,
    gate: Gate | None,
    covered: Sequence[str],
) -> tuple[FloorCheck, ...]:
    """One run's means (`values`, over the `covered` queries) held to each floor, with its study
    intervals or its recall gate where it has them (specs checked by `floor_problems`)."""
    checks: list[FloorCheck] = []
    for measure, floor in canonical_floors(floors).items():
        key = parse_key(measure)
        low, measured = None, 0
        value = values.get(measure)
        interval = study.intervals.get(measure) if study is not None else None
        if interval is not None:
            checks.append(
                FloorCheck(run_name, measure, float(floor), value, interval.low, interval.queries,
                           True, interval.unmeasured)
            )  # fmt: skip
            continue
        unmeasured: tuple[str, ...] = ()
        if key.name == RECALL and key.cutoff is not None and gate is not None:
            low = gate.mean.recall[key.cutoff].low
            measured = gate.mean.measured
            rows = gate.rows
            unmeasured = tuple(q for q in covered
                               if q in rows and not rows[q].coverage.measured)  # fmt: skip
        checks.append(
            FloorCheck(run_name, measure, float(floor), value, low, measured, False, unmeasured)
        )
    return tuple(checks)
