"""The eval report as typed results: each run's scores, means and audit, the problems, the
coverage gate and the two-stage view. `eval_report` builds it (pure); `EvalReport.to_json` is
its one serialisation edge, the `workbench eval --json` contract:

{"k": first k, "ks": [...], "rel_threshold", "gain", "runs": {NAME: {"per_query": {QID: row},
"mean": {... "queries": n}, "mean_covers": {...}, "audit": {QID: ...}}}, "problems": [{"qid",
"level", "code", "message", "run"}], "coverage" when the qrels carry a coverage summary (then
each row also holds R@k_low / R@k_est / R@k_high, est_rel(_low, _high), completeness(_low) and
coverage_status, and each mean their means over the measured queries), "two_stage" when two
stages were given, "fail_under" when floors were checked (`workbench.core.evaluation.floors`)}. A
row
holds every measure's key (`P@5`, `MRR`), `rel`, and `ceiling` and `pct_of_ceiling` (the first
k's, under the names the contract gives them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from workbench.core.audit.audit import UNDEFINED_CODES, Problem, QueryAudit, audit, fold_aliases
from workbench.core.audit.audit_coverage import (
    NOT_MEASURED,
    Gate,
    coverage_gate,
    no_relevant_coverage_note,
    not_measured_problem,
    unmeasured_judgments,
)
from workbench.core.audit.audit_stages import TwoStage, two_stage
from workbench.core.audit.judged_coverage import Coverage
from workbench.core.evaluation.chunk_report import ChunkingReport
from workbench.core.evaluation.eval_json import record, run_json
from workbench.core.evaluation.floors import FloorCheck, check_run
from workbench.core.exit_codes import ExitCode
from workbench.core.judgments.judge_versions import JudgeLabels, mixing_problems
from workbench.core.measures.measure_view import RankingLike
from workbench.core.measures.metrics import (
    MeanScores,
    Measure,
    QueryScores,
    chosen_measures,
    evaluate,
)
from workbench.core.model import Level
from workbench.core.study.intervals import STUDY_MEASURES, RunStudy


@dataclass(frozen=True, slots=True)
class MeanCovers:
    """Which queries a run's means cover, and which they leave out and why."""

    queries: list[str]
    missing_from_run: list[str]
    left_out_no_relevant: list[str]
    not_in_qrels: list[str]
    undefined: dict[str, list[str]]


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run: per-query scores, means, what the means cover, the audit's rows, and recall
    under the estimated |Rel| when coverage is known."""

    per_query: dict[str, QueryScores]
    mean: MeanScores
    mean_covers: MeanCovers
    audit: dict[str, QueryAudit]
    gate: Gate | None = None
    study: RunStudy | None = None
    """The study intervals of its means under every query's unjudged relevant at once (an
    adaptive store's coverage), and the per-draw figures deltas are taken from."""


@dataclass(frozen=True, slots=True)
class StagesResult:
    """The two-stage view: which runs, fetch-K (None: each ranking's depth), keep-n."""

    stage1: str
    stage2: str
    fetch_k: int | None
    keep_n: int
    result: TwoStage

    @property
    def label(self) -> str:
        """What its problems carry as `run`."""
        return f"{self.stage1} -> {self.stage2}"


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Every run scored and audited at `ks`, with the problems of all of them."""

    ks: tuple[int, ...]
    rel_threshold: int
    gain: str
    measures: tuple[Measure, ...]
    runs: dict[str, RunResult]
    problems: list[Problem]
    coverage: Coverage | None = None
    two_stage: StagesResult | None = None
    floors: tuple[FloorCheck, ...] = ()
    """Each run's means held to the floors asked for (`with_floors`), when any were."""
    assumed_complete: bool = False
    """The user stated that the judgments are complete (`--assume-complete`): nothing measured
    it, and the output says so."""
    chunking: ChunkingReport | None = None
    """The runs rank chunks of another chunking (`--chunks`): the rule and the text figures."""

    @property
    def k(self) -> int:
        """The first cutoff: the audit's, the gate's and keep-n."""
        return self.ks[0]

    def to_json(self) -> dict[str, object]:
        """The `--json` object (plain dicts, lists, strings, numbers and None)."""
        out: dict[str, object] = {
            "k": self.k,
            "ks": list(self.ks),
            "rel_threshold": self.rel_threshold,
            "gain": self.gain,
            "runs": {name: run_json(run, self.ks) for name, run in self.runs.items()},
            "problems": [record(p) for p in self.problems],
        }
        if self.coverage is not None:
            out["coverage"] = {
                "source": self.coverage.source,
                "complete_at": self.coverage.complete_at,
                "thresholds": dict(self.coverage.thresholds),
                "method": self.coverage.method,
                "status": {qid: str(q.status) for qid, q in self.coverage.queries.items()},
            }
        if self.two_stage is not None:
            staged = self.two_stage
            out["two_stage"] = {
                "stage1": staged.stage1,
                "stage2": staged.stage2,
                "fetch_k": staged.fetch_k,
                "keep_n": staged.keep_n,
                "per_query": {q: record(r) for q, r in staged.result.rows.items()},
                "mean": record(staged.result.mean),
            }
        if self.floors:
            out["fail_under"] = [check.to_json() for check in self.floors]
        if self.assumed_complete:
            out["assume_complete"] = True
        if self.chunking is not None:
            out["chunks"] = self.chunking.to_json()
        return out


def with_floors(report: EvalReport, floors: Mapping[str, float]) -> EvalReport:
    """The report with each run's means held to `floors` (specs checked by `floor_problems`);
    a floor is a gate, so judgments that carry no completeness measure are an error."""
    checks = (
        check
        for name, run in report.runs.items()
        for check in check_run(
            name, floors, run.mean.values, run.study, run.gate, run.mean_covers.queries
        )
    )
    problems = report.problems
    unmeasured = report.coverage is None and not report.assumed_complete
    if floors and unmeasured and all(p.code != NOT_MEASURED for p in problems):
        problems = [*problems, not_measured_problem()]
    return replace(report, floors=tuple(checks), problems=problems)


def exit_code(report: EvalReport, strict: bool = False) -> int:
    """1 when a figure is undefined (always), a floor is not cleared, or any error was found
    (with `strict`), else 0."""
    return ExitCode.FAILED if exit_reasons(report, strict) else ExitCode.OK


def exit_reasons(report: EvalReport, strict: bool = False) -> list[str]:
    """Why `exit_code` is 1, each reason once (empty: it is 0)."""
    reasons = []
    if any(not check.passed for check in report.floors):
        reasons.append("a floor not cleared: see floors above")
    if any(
        p.level == Level.ERROR and (strict or p.code in UNDEFINED_CODES or p.code == NOT_MEASURED)
        for p in report.problems
    ):
        reasons.append("error-level problems above")
    return reasons


# --- building it -----------------------------------------------------------------------------


def eval_report(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, RankingLike]],
    ks: Sequence[int] | int,
    rel_threshold: int = 1,
    gain: str = "linear",
    corpus_size: int | None = None,
    passages: Mapping[str, str] | None = None,
    stages: tuple[Mapping[str, RankingLike], Mapping[str, RankingLike]] | None = None,
    stage_names: tuple[str, str] = ("stage1", "stage2"),
    fetch_k: int | None = None,
    run_warnings: Mapping[str, Sequence[str]] | None = None,
    coverage: Coverage | None = None,
    strict: bool = False,
    aliases: Mapping[str, str] | None = None,
    measures: Iterable[str] | None = None,
    judges: JudgeLabels | None = None,
    assume_complete: bool = False,
) -> EvalReport:
    """Score and audit each run (name -> qid -> ranking) at every k on `measures` (default:
    every registered one); audit problems are collected per run at the first k. `stages` =
    (stage-1 rankings, stage-2 rankings) adds the two-stage view with keep-n = the first k.
    `coverage` adds recall under the estimated |Rel| and the gate (`strict`: an incomplete
    scored query is an error). `aliases` (alias id -> canonical id, from a golden.yaml or a
    store) makes identical passages one document. `judges` (the judged set's non-human labels)
    adds a warning, for the whole set, per judge whose labels come from several versions.
    Without `coverage` the judgments carry no completeness measure: an error when `strict` (a
    gate), unless `assume_complete` states that they are complete."""
    ks = [ks] if isinstance(ks, int) else list(ks)
    chosen = chosen_measures(measures)
    scoring = _Scoring(
        qrels, ks, rel_threshold, gain, chosen, corpus_size, passages, coverage, strict, aliases
    )
    results: dict[str, RunResult] = {}
    problems: list[Problem] = []
    for name, rankings in runs.items():
        warnings = [
            Problem(None, Level.WARNING, "run_file", message, name)
            for message in (run_warnings or {}).get(name, ())
        ]
        result, found = scoring.run(rankings)
        results[name] = result
        problems += warnings + [Problem(p.qid, p.level, p.code, p.message, name) for p in found]
    staged = None
    if stages is not None:
        first, second = stages
        if aliases:
            first = {q: fold_aliases(r, aliases) for q, r in first.items()}
            second = {q: fold_aliases(r, aliases) for q, r in second.items()}
        view = two_stage(qrels, first, second, ks[0], fetch_k, rel_threshold)
        staged = StagesResult(stage_names[0], stage_names[1], fetch_k, ks[0], view)
        problems += [replace(p, run=staged.label) for p in view.problems]
    problems += mixing_problems(judges)
    problems += unmeasured_judgments(coverage, strict, assume_complete)
    if coverage is not None and coverage.study is not None:
        results = _with_study(results, runs, qrels, ks, rel_threshold, gain, coverage, aliases)
    return EvalReport(
        tuple(ks), rel_threshold, gain, chosen, results, problems, coverage, staged,
        assumed_complete=assume_complete,
    )  # fmt: skip


def _with_study(
    results: dict[str, RunResult],
    runs: Mapping[str, Mapping[str, RankingLike]],
    qrels: Mapping[str, Mapping[str, int]],
    ks: Sequence[int],
    rel_threshold: int,
    gain: str,
    coverage: Coverage,
    aliases: Mapping[str, str] | None,
) -> dict[str, RunResult]:
    """Each run with its study intervals, from one set of joint draws for all of them (so the
    deltas between runs are taken draw by draw), over the queries each mean covers."""
    from workbench.core.study import study

    assert coverage.study is not None
    folded = {
        name: {q: fold_aliases(r, aliases) for q, r in rankings.items()} if aliases else rankings
        for name, rankings in runs.items()
    }
    scored = {}
    for name, result in results.items():
        keys = [f"{m}@{k}" for m in STUDY_MEASURES for k in ks if f"{m}@{k}" in result.mean.values]
        scored[name] = {
            key: [q for q in result.mean_covers.queries
                  if q not in result.mean_covers.undefined.get(key, ())]
            for key in keys
        }  # fmt: skip
    studies = study(coverage.study, qrels, folded, ks, scored, rel_threshold, gain)
    return {name: replace(result, study=studies[name]) for name, result in results.items()}


@dataclass(frozen=True, slots=True)
class _Scoring:
    """What every run of a report is scored, audited and gated with."""

    qrels: Mapping[str, Mapping[str, int]]
    ks: Sequence[int]
    rel_threshold: int
    gain: str
    measures: Sequence[Measure]
    corpus_size: int | None
    passages: Mapping[str, str] | None
    coverage: Coverage | None
    strict: bool
    aliases: Mapping[str, str] | None

    def run(self, rankings: Mapping[str, RankingLike]) -> tuple[RunResult, list[Problem]]:
        """One run scored (aliases folded), audited and gated; its problems in report order."""
        qrels, ks, threshold, aliases = self.qrels, self.ks, self.rel_threshold, self.aliases
        scored = {q: fold_aliases(r, aliases) for q, r in rankings.items()} if aliases else rankings
        names = [m.name for m in self.measures]
        result = evaluate(qrels, scored, ks, threshold, self.gain, names)
        checked = audit(qrels, rankings, ks[0], threshold, self.corpus_size, self.passages, aliases)
        problems = checked.problems
        gate = None
        coverage = self.coverage
        if coverage is not None:
            gate = coverage_gate(coverage, rankings, ks, result.in_mean, threshold, self.strict)
            noted = [_with_coverage_note(p, coverage, ks[0]) for p in problems]
            problems = noted + gate.problems
        covers = MeanCovers(
            queries=result.in_mean,
            missing_from_run=result.missing_from_run,
            left_out_no_relevant=[q for q in result.no_relevant if q in result.per_query],
            not_in_qrels=result.not_in_qrels,
            undefined=result.undefined,
        )
        return RunResult(result.per_query, result.mean, covers, checked.rows, gate), problems


def _with_coverage_note(problem: Problem, coverage: Coverage, k: int) -> Problem:
    """A `no_relevant` problem with what the coverage estimate says about |Rel|."""
    info = coverage.queries.get(str(problem.qid))
    note = no_relevant_coverage_note(info, k) if info else None
    if problem.code != "no_relevant" or not note:
        return problem
    return replace(problem, message=f"{problem.message}; {note}")
