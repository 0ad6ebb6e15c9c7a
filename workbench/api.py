"""The Python API for a user's own tests: `evaluate` scores runs with the audit beside them,
`assert_eval` fails a test with that audit as its message when a floor or the denominator
is not met. Both take paths (TREC qrels, a golden.yaml or a judgments store; TREC run files),
in-memory data (qid -> docid -> grade; qid -> docid -> score), or a golden.yaml read once
(`load_golden`, what the pytest plugin's `workbench_golden` fixture gives)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.audit.audit import Problem
    from workbench.core.evaluation.eval_report import EvalReport
    from workbench.core.model import Query
    from workbench.flows.api_inputs import Options
    from workbench.flows.judged import Judgments
    from workbench.formats import Golden

Qrels = Mapping[str, Mapping[str, int]]
Scores = Mapping[str, Mapping[str, float]]
PathLike = str | os.PathLike


@dataclass(frozen=True, slots=True)
class GoldenSet:
    """A golden.yaml read once, to score many runs against without reading it again."""

    path: str
    golden: Golden

    def __repr__(self) -> str:  # short: pytest prints it beside a failing test's arguments
        return f"GoldenSet({self.path!r}: {len(self.golden.queries)} queries)"

    @property
    def queries(self) -> list[Query]:
        """Its queries (id, text, narrative): what a retriever under test is asked."""
        return self.golden.queries

    def evaluate(
        self, run: PathLike | Scores | Sequence[PathLike] | Mapping[str, Scores],
        k: int | Sequence[int] = 10, **options: Any,
    ) -> EvalReport:  # fmt: skip
        """`workbench.evaluate` against this golden set."""
        __tracebackhide__ = True
        return evaluate(self, run, k, **options)

    def check(
        self,
        run: PathLike | Scores | Sequence[PathLike] | Mapping[str, Scores],
        k: int | Sequence[int] = 10,
        min: Mapping[str, float] | None = None,  # noqa: A002 - the name users write
        require_complete: bool = False,
        **options: Any,
    ) -> EvalReport:
        """`workbench.assert_eval` against this golden set."""
        __tracebackhide__ = True  # pytest shows the user's line, not ours
        return assert_eval(self, run, k, min, require_complete, **options)


def load_golden(path: PathLike) -> GoldenSet:
    """A golden.yaml read (strictly) once. Raises `workbench.core.errors.InputError` naming
    every problem of the file."""
    from workbench.core.errors import InputError
    from workbench.flows.api_inputs import path_problem
    from workbench.formats import read_golden

    problem = path_problem(path, "path")
    if problem:
        raise InputError([problem])
    return GoldenSet(os.fspath(path), read_golden(path))


# long: the public door: every keyword option and its docstring, then one read of each input
def evaluate(
    qrels: PathLike | Qrels | GoldenSet,
    run: PathLike | Scores | Sequence[PathLike] | Mapping[str, Scores],
    k: int | Sequence[int] = 10,
    *,
    rel_threshold: int = 1,
    gain: str = "linear",
    complete_at: float | None = None,
    assume_complete: bool = False,
    chunks: PathLike | Sequence[PathLike] | None = None,
    corpus: PathLike | None = None,
    text_by_grade: bool = False,
) -> EvalReport:
    """The report `workbench eval --json` prints (`report.to_json()`), for one run or several
    (a list of paths, or name -> scores). Every argument is checked first by the CLI's rules
    (`workbench.flows.api_inputs`); unusable input raises `workbench.core.errors.InputError`
    naming every problem (the argument, and the query and document inside data). Judgments
    that carry no completeness measure (TREC qrels, grades in memory) are an error-level
    problem unless `assume_complete` states that they are complete (`eval --assume-complete`).
    `chunks` (a JSONL, or one per run) and `corpus` (the text folder): the runs rank their own
    chunks of it, as `eval --chunks FILE --corpus FOLDER` scores them (`report.chunking`)."""
    __tracebackhide__ = True  # an InputError under pytest points at the user's line
    from workbench.core.errors import InputError
    from workbench.core.evaluation.eval_report import eval_report
    from workbench.flows.api_inputs import checked_chunks, checked_options
    from workbench.flows.judged import read_judgments
    from workbench.flows.runs import read_runs

    options = checked_options(k, rel_threshold, gain, complete_at)
    misuse = checked_chunks(chunks, corpus, text_by_grade, isinstance(qrels, Mapping))
    if not isinstance(assume_complete, bool):
        misuse.append(f"assume_complete: {assume_complete!r} is not True or False")
    if misuse:
        raise InputError(misuse)
    judged, run_paths, runs = _checked_data(qrels, run, options.gain)
    problems: list[str] = []
    found = None
    aliases: dict[str, str] = {}
    coverage = judges = None
    if not isinstance(qrels, Mapping):
        golden = qrels.golden if isinstance(qrels, GoldenSet) else None
        path = qrels.path if isinstance(qrels, GoldenSet) else os.fspath(qrels)
        found = read_judgments(
            path, rel_threshold=options.rel_threshold, gain=options.gain,
            complete_at=options.complete_at, golden=golden,
        )  # fmt: skip
        judged, aliases, coverage, judges = found.qrels, found.aliases, found.coverage, found.judges
        problems += found.problems
    warnings: dict[str, list[str]] = {}
    if run_paths:
        read = read_runs(run_paths)
        runs, warnings = read.runs, read.warnings
        problems += read.problems
    if problems or judged is None:
        raise InputError(problems or ["no judgments read"])
    if chunks is not None and found is not None:
        return _chunked(found, path, runs, warnings, options, chunks, corpus, text_by_grade,
                        assume_complete)  # fmt: skip
    return eval_report(
        judged,
        runs,
        options.ks,
        rel_threshold=options.rel_threshold,
        gain=options.gain,
        run_warnings=warnings,
        coverage=coverage,
        strict=True,
        aliases=aliases,
        judges=judges,
        assume_complete=assume_complete,
    )


def _chunked(
    found: Judgments,
    qrels: str,
    runs: Mapping[str, Any],
    warnings: dict[str, list[str]],
    options: Options,
    chunks: PathLike | Sequence[PathLike],
    corpus: PathLike | None,
    text_by_grade: bool,
    assume_complete: bool,
) -> EvalReport:
    """`evaluate` of runs over their own chunks (`flows.chunked`)."""
    from workbench.flows.chunked import evaluate_chunked
    from workbench.flows.evaluation import EvalRequest
    from workbench.flows.runs import RunsRead

    listed = [chunks] if isinstance(chunks, (str, os.PathLike)) else list(chunks)
    request = EvalRequest(
        qrels=qrels, runs=list(runs), ks=options.ks, rel_threshold=options.rel_threshold,
        gain=options.gain, complete_at=options.complete_at, strict=True,
        corpus=os.fspath(corpus) if corpus is not None else None,
        chunks=[os.fspath(c) for c in listed], text_by_grade=text_by_grade,
        assume_complete=assume_complete,
    )  # fmt: skip
    return evaluate_chunked(request, found, RunsRead(dict(runs), warnings))


def _checked_data(
    qrels: object, run: object, gain: str
) -> tuple[dict[str, dict[str, int]] | None, list[str], dict[str, Any]]:
    """(in-memory judgments or None for a file or golden set, run files to read, in-memory
    runs), every problem of both arguments in one InputError."""
    from workbench.core.errors import InputError
    from workbench.flows.api_inputs import checked_qrels, checked_runs, path_problem

    problems: list[str] = []
    judged = None
    run_paths: list[str] = []
    runs: dict[str, Any] = {}
    try:
        if isinstance(qrels, Mapping):
            judged = checked_qrels(qrels, gain)
        elif not isinstance(qrels, GoldenSet) and (problem := path_problem(qrels, "qrels")):
            problems.append(problem)
    except InputError as exc:
        problems += exc.problems
    try:
        run_paths, runs = checked_runs(run)
    except InputError as exc:
        problems += exc.problems
    if problems:
        raise InputError(problems)
    return judged, run_paths, runs


def assert_eval(
    qrels: PathLike | Qrels | GoldenSet,
    run: PathLike | Scores | Sequence[PathLike] | Mapping[str, Scores],
    k: int | Sequence[int] = 10,
    min: Mapping[str, float] | None = None,  # noqa: A002 - the name users write
    require_complete: bool = False,
    **options: Any,
) -> EvalReport:
    """`evaluate`, then AssertionError when a run's mean of a measure ("R@10", "nDCG@10") is
    below its `min` or undefined (with a coverage estimate, a floor on R@k must be cleared by
    the lower end of its interval too: `workbench.core.evaluation.floors`, as `eval --fail-under`),
    or,
    with `require_complete`, when the audit found an error-level problem (an incomplete judged
    set, duplicates, a broken denominator). Either gate fails on judgments that carry no
    completeness measure (TREC qrels, grades in memory) unless `assume_complete=True` (an
    option of `evaluate`) states that they are complete. The message is the failing figures,
    then the audit as `workbench eval` prints it. A floor on a measure not scored at `k`, or
    one outside [0, 1], raises InputError, as every argument `evaluate` refuses does."""
    __tracebackhide__ = True  # pytest shows the user's line, not ours
    from workbench.core.audit.audit_coverage import NOT_MEASURED
    from workbench.core.errors import InputError, quoted
    from workbench.core.evaluation.eval_report import with_floors
    from workbench.core.evaluation.floors import floor_problems
    from workbench.core.measures.eval_options import cutoffs_problems
    from workbench.core.model import Level
    from workbench.flows.api_inputs import unknown_options
    from workbench.reports.evaluation import render

    misuse = unknown_options(options)
    if min is not None and not isinstance(min, Mapping):
        misuse.append(f"min: {quoted(min)} is not a mapping of measures to floors")
    if not isinstance(require_complete, bool):
        misuse.append(f"require_complete: {quoted(require_complete)} is not True or False")
    floors = dict(min) if isinstance(min, Mapping) else {}
    ks, _ = cutoffs_problems(k, "k")
    if not misuse and ks:
        misuse = floor_problems(floors, ks, label="min[{name!r}] = {value}")
    if misuse:
        raise InputError(misuse)
    report = evaluate(qrels, run, k, **options)
    checked = with_floors(report, floors)
    failures = [check.message for check in checked.floors if not check.passed]
    errors = [p for p in report.problems if p.level == Level.ERROR]
    if require_complete:
        failures += _error_lines(errors)
    elif floors:  # a floor is a gate: it never passes on a denominator nothing measured
        failures += _error_lines([p for p in errors if p.code == NOT_MEASURED])
    if failures:
        raise AssertionError("\n".join(failures) + "\n\n" + render(report, "table"))
    return checked


def _error_lines(problems: list[Problem]) -> list[str]:
    """One line per run and kind of error: the audit under the message spells each one out,
    so twelve incomplete queries read as one line naming them, not twelve copies."""
    groups: dict[tuple[str, str], list[Problem]] = {}
    for problem in problems:
        groups.setdefault((problem.run or "all runs", problem.code), []).append(problem)
    lines = []
    for (run, code), group in groups.items():
        if len(group) == 1:
            only = group[0]
            lines.append(f"{run}: {only.qid or 'the judgments'}: {only.message}")
            continue
        qids = [p.qid for p in group if p.qid]
        shown = ", ".join(qids[:10]) + (f" and {len(qids) - 10} more" if len(qids) > 10 else "")
        lines.append(
            f"{run}: {len(group)} errors [{code}] (require_complete): {shown or 'every query'}; "
            f"the first ({group[0].qid or 'every query'}): {group[0].message}"
        )
    return lines
