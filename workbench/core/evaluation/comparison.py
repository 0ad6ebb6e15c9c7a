"""Runs compared with a baseline, measure by measure: the means, the delta, a paired test over
the queries, Holm's correction across every run × measure, wins/losses/ties, the queries that
moved most, and for R@k what the uncertainty of |Rel| does to the delta. Pure: an `EvalReport`
in (the scores `workbench eval` computes), a typed `CompareReport` out; `to_json` is the
`workbench compare --json` contract.

Which queries are paired: those every run's mean covers in `workbench eval` (trec_eval -c):
each query of the qrels with a judged relevant document. A query a run does not rank scores 0
there (it is in the pairs, as a loss wherever the baseline found something) and is named in
`missing`; a query with no judged relevant document is in no mean and no pair. So a
comparison's means are exactly the means `workbench eval` prints. Every measure compared is
taken as higher-is-better."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from workbench.core.audit.audit_coverage import GateRow
from workbench.core.audit.figures import ProblemCount, problem_count
from workbench.core.evaluation.eval_report import EvalReport, RunResult
from workbench.core.measures.measure_key import parse_key
from workbench.core.measures.metrics import MEASURES, read_measure
from workbench.core.measures.significance import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    TESTS,
    PairedTest,
    holm,
    paired_test,
    quantized,
)
from workbench.core.study.intervals import StudyInterval, study_delta

DEFAULT_MEASURES = ("nDCG", "R", "P", "MRR")
"""Compared when no --measure is given: each at every k (MRR once)."""
NOT_COMPARED = {
    "judged": "it measures the labels under a run, not the run",
    "ceiling": "it depends on |Rel| alone, the same for every run",
    "pct_of_ceiling": "it is R@k over a ceiling every run shares: compare R@k",
}
"""Registered measures a comparison refuses, and why."""


def chosen_keys(
    specs: Sequence[str] | None, ks: Sequence[int], ks_given: bool
) -> tuple[list[str], list[int], list[str]]:
    """(measure keys, cutoffs to score, problems) from `--measure` values ('nDCG@10', 'R'
    meaning R at every k, 'MRR'; comma-separated or repeated). A cutoff named in a key is
    scored too; without -k and with every cutoff measure named at its k, only those are."""
    names = [part.strip() for spec in specs or [] for part in spec.split(",") if part.strip()]
    problems: list[str] = []
    parsed: list[tuple[str, int | None]] = []
    known = ", ".join(n for n in MEASURES if n not in NOT_COMPARED)
    for spec in names or DEFAULT_MEASURES:
        try:
            measure, cutoff = read_measure(spec)
        except ValueError as exc:
            why = "not a measure" if str(exc).startswith("unknown measure") else str(exc)
            problems.append(
                f"--measure {spec!r}: {why} (compare one of {known}; '@K' for a cutoff)"
            )
            continue
        if measure.name in NOT_COMPARED:
            problems.append(
                f"--measure {spec!r}: {NOT_COMPARED[measure.name]} (compare one of {known})"
            )
            continue
        parsed.append((measure.name, cutoff))
    named_ks = [k for _, k in parsed if k is not None]
    every_k_named = all(k is not None or not MEASURES[n].cutoff for n, k in parsed)
    scored = [] if (named_ks and every_k_named and not ks_given) else list(ks)
    for k in named_ks:
        if k not in scored:
            scored.append(k)
    keys: list[str] = []
    for name, k in parsed:
        measure = MEASURES[name]
        for key in [measure.key(k)] if k is not None else [measure.key(c) for c in scored]:
            if key not in keys:
                keys.append(key)
    return keys, scored, problems


@dataclass(frozen=True, slots=True)
class Moved:
    """One query's score under the baseline and the run, and the change."""

    qid: str
    baseline: float
    run: float
    delta: float


@dataclass(frozen=True, slots=True)
class RelUncertainty:
    """R@k when |Rel| is the coverage estimate's: each run's mean range as `workbench eval`
    shows it (over the `measured` queries), and the range of the mean delta over every paired
    query as each measured query's |Rel| spans its 95% interval (an unmeasured query at its
    judged |Rel|). Both runs share each query's |Rel|, so a query's change keeps its sign; the
    mean's can flip when gains and losses sit on queries of uncertain |Rel|."""

    measured: int
    baseline_low: float | None
    baseline_high: float | None
    run_low: float | None
    run_high: float | None
    delta_low: float
    delta_high: float


@dataclass(frozen=True, slots=True)
class Comparison:
    """One run against the baseline on one measure."""

    run: str
    measure: str
    baseline_mean: float | None
    run_mean: float | None
    test: PairedTest
    wins: int
    losses: int
    ties: int
    most_moved: tuple[Moved, ...]
    p_adjusted: float | None = None
    significant: bool = False
    rel: RelUncertainty | None = None
    study_delta: StudyInterval | None = None
    """The delta's study interval: what these queries' missing judgments leave open, from
    joint draws (an adaptive store's); the paired test asks another question (whether the
    difference would hold on other queries)."""

    @property
    def delta(self) -> float | None:
        if self.baseline_mean is None or self.run_mean is None:
            return None
        return self.run_mean - self.baseline_mean

    @property
    def regression(self) -> bool:
        """A significant drop (after Holm), in the direction the test found: Wilcoxon's can
        differ from the mean's (twenty queries gain a little, one loses much)."""
        return self.significant and self.test.direction < 0

    @property
    def drop_within_rel(self) -> bool:
        """A drop against the judged set that some |Rel| inside the estimate's intervals
        turns into no drop: it may be an artefact of the labels, not of the run."""
        return (self.delta or 0.0) < 0 and self.rel is not None and self.rel.delta_high >= 0

    @property
    def verdict(self) -> str:
        if self.p_adjusted is None:
            return "untested"
        if not self.significant:
            return "no significant change"
        word = "worse" if self.test.direction < 0 else "better"
        delta = self.delta or 0.0
        if delta * self.test.direction < 0:  # the ranks moved one way, the mean the other
            return f"{word} (by ranks; the mean {'rose' if delta > 0 else 'fell'})"
        return word

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "run": self.run,
            "measure": self.measure,
            "baseline_mean": self.baseline_mean,
            "run_mean": self.run_mean,
            "delta": self.delta,
            "p_value": self.test.p_value,
            "p_adjusted": self.p_adjusted,
            "test": self.test.test,
            "significant": self.significant,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "queries": self.test.pairs,
            "statistic": _finite(self.test.statistic),
            "method": self.test.method,
            "verdict": self.verdict,
            "most_moved": [
                {"qid": m.qid, "baseline": m.baseline, "run": m.run, "delta": m.delta}
                for m in self.most_moved
            ],
        }
        if self.study_delta is not None:
            out["study_delta"] = self.study_delta.to_json()
        if self.rel is not None:
            rel = self.rel
            out["rel_uncertainty"] = {
                "measured_queries": rel.measured,
                "baseline_interval": [rel.baseline_low, rel.baseline_high],
                "run_interval": [rel.run_low, rel.run_high],
                "delta_low": rel.delta_low,
                "delta_high": rel.delta_high,
                "drop_within_uncertainty": self.drop_within_rel,
            }
        return out


def _finite(value: float | None) -> float | str | None:
    """A statistic for JSON: an infinite t (a constant difference) as text."""
    return value if value is None or math.isfinite(value) else str(value)


@dataclass(frozen=True, slots=True)
class CompareReport:
    """Every run after the first compared with the first (the baseline)."""

    baseline: str
    runs: tuple[str, ...]
    ks: tuple[int, ...]
    measures: tuple[str, ...]
    test: str
    alpha: float
    permutations: int
    seed: int
    queries: tuple[str, ...]
    """The paired queries: the qrels' queries with a judged relevant document."""
    missing: dict[str, list[str]]
    """Per run, the paired queries it does not rank (they score 0)."""
    comparisons: tuple[Comparison, ...]
    coverage_source: str | None = None
    audit: dict[str, ProblemCount] = field(default_factory=dict)
    """Each run's audit problems counted as `workbench eval` counts them (`core.figures`)."""
    files: dict[str, str] = field(default_factory=dict)

    @property
    def family(self) -> int:
        """How many comparisons Holm's correction spans (those with a p-value)."""
        return sum(1 for c in self.comparisons if c.test.p_value is not None)

    @property
    def regressions(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.regression]

    def to_json(self) -> dict[str, object]:
        return {
            "baseline": self.baseline,
            "runs": list(self.runs),
            "files": dict(self.files),
            "ks": list(self.ks),
            "measures": list(self.measures),
            "test": self.test,
            "permutations": self.permutations if self.test == "randomization" else None,
            "seed": self.seed if self.test == "randomization" else None,
            "alpha": self.alpha,
            "correction": "holm",
            "family": self.family,
            "queries": len(self.queries),
            "missing": {run: list(qids) for run, qids in self.missing.items()},
            "coverage": self.coverage_source,
            "comparisons": [c.to_json() for c in self.comparisons],
            "regressions": [f"{c.run} {c.measure}" for c in self.regressions],
        }


def compare_report(
    report: EvalReport,
    measures: Sequence[str],
    test: str = TESTS[0],
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    top: int = 3,
    files: dict[str, str] | None = None,
) -> CompareReport:
    """Each run of `report` after the first against the first, on each measure key, every
    p-value then adjusted by Holm over all of them."""
    names = list(report.runs)
    baseline = report.runs[names[0]]
    queries = baseline.mean_covers.queries
    comparisons: list[Comparison] = []
    for name in names[1:]:
        run = report.runs[name]
        for key in measures:
            compared = _compare(name, key, baseline, run, queries, test, permutations, seed, top)
            compared = _with_rel(compared, report, baseline, run, queries)
            if run.study is not None and baseline.study is not None:
                delta = study_delta(run.study, baseline.study, key)
                compared = replace(compared, study_delta=delta)
            comparisons.append(compared)
    adjusted = holm([c.test.p_value for c in comparisons])
    comparisons = [
        replace(c, p_adjusted=p, significant=p is not None and p <= alpha)
        for c, p in zip(comparisons, adjusted, strict=True)
    ]
    audit = {name: problem_count(p for p in report.problems if p.run == name) for name in names}
    return CompareReport(
        baseline=names[0],
        runs=tuple(names[1:]),
        ks=report.ks,
        measures=tuple(measures),
        test=test,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        queries=tuple(queries),
        missing={n: list(r.mean_covers.missing_from_run) for n, r in report.runs.items()},
        comparisons=tuple(comparisons),
        coverage_source=report.coverage.source if report.coverage is not None else None,
        audit={name: count for name, count in audit.items() if count.errors or count.warnings},
        files=dict(files or {}),
    )


def _compare(
    name: str,
    key: str,
    baseline: RunResult,
    run: RunResult,
    queries: Sequence[str],
    test: str,
    permutations: int,
    seed: int,
    top: int,
) -> Comparison:
    pairs: list[tuple[str, float, float]] = []
    for qid in queries:
        before = baseline.per_query[qid].values.get(key)
        after = run.per_query[qid].values.get(key) if qid in run.per_query else None
        if before is not None and after is not None:
            pairs.append((qid, float(before), float(after)))
    differences = [after - before for _, before, after in pairs]
    units = quantized(differences)
    wins = sum(1 for u in units if u > 0)
    losses = sum(1 for u in units if u < 0)
    moved = sorted((i for i, u in enumerate(units) if u), key=lambda i: (-abs(units[i]), i))[:top]
    n = len(pairs)
    return Comparison(
        run=name,
        measure=key,
        baseline_mean=math.fsum(b for _, b, _ in pairs) / n if n else None,
        run_mean=math.fsum(a for _, _, a in pairs) / n if n else None,
        test=paired_test(test, differences, permutations, seed),
        wins=wins,
        losses=losses,
        ties=n - wins - losses,
        most_moved=tuple(Moved(pairs[i][0], pairs[i][1], pairs[i][2], differences[i])
                         for i in moved),
    )  # fmt: skip


def _with_rel(
    comparison: Comparison,
    report: EvalReport,
    baseline: RunResult,
    run: RunResult,
    queries: Sequence[str],
) -> Comparison:
    """R@k's comparison with what the coverage estimate's |Rel| does to it (others as given)."""
    measure = parse_key(comparison.measure)
    if measure.name != "R" or measure.cutoff is None or report.coverage is None:
        return comparison
    if baseline.gate is None or run.gate is None:
        return comparison
    k, key = measure.cutoff, comparison.measure
    lows: list[float] = []
    highs: list[float] = []
    measured = 0
    for qid in queries:
        before_judged = baseline.per_query[qid].values.get(key)
        after_judged = run.per_query[qid].values.get(key)
        if before_judged is None or after_judged is None:
            continue
        change = _change_over_rel(baseline.gate.rows.get(qid), run.gate.rows.get(qid), k)
        if change is None:  # no estimate: |Rel| is the judged count
            change = (after_judged - before_judged,) * 2
        else:
            measured += 1
        lows.append(change[0])
        highs.append(change[1])
    if not lows:
        return comparison
    before_mean, after_mean = baseline.gate.mean.recall[k], run.gate.mean.recall[k]
    rel = RelUncertainty(
        measured=measured,
        baseline_low=before_mean.low,
        baseline_high=before_mean.high,
        run_low=after_mean.low,
        run_high=after_mean.high,
        delta_low=math.fsum(lows) / len(lows),
        delta_high=math.fsum(highs) / len(highs),
    )
    return replace(comparison, rel=rel)


def _change_over_rel(
    before: GateRow | None, after: GateRow | None, k: int
) -> tuple[float, float] | None:
    """(lowest, highest) change of one query's R@k as its |Rel| spans the estimate's interval:
    both runs divide by the same |Rel|, so the ends pair up (None: no estimate)."""
    if before is None or after is None:
        return None
    b, a = before.recall[k], after.recall[k]
    if b.low is None or b.high is None or a.low is None or a.high is None:
        return None
    at_high_rel, at_low_rel = a.low - b.low, a.high - b.high
    return min(at_high_rel, at_low_rel), max(at_high_rel, at_low_rel)
