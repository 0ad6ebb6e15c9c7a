"""The Python API for a user's own tests: `evaluate` scores runs with the audit beside them,
`assert_eval` fails a test with that audit as its message when a threshold or the denominator
is not met. Both take paths (TREC qrels, a golden.yaml or a judgments store; TREC run files)
or in-memory data (qid -> docid -> grade; qid -> docid -> score)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.eval_report import EvalReport

Qrels = Mapping[str, Mapping[str, int]]
Scores = Mapping[str, Mapping[str, float]]
PathLike = str | os.PathLike


def evaluate(
    qrels: PathLike | Qrels,
    run: PathLike | Scores | Sequence[PathLike] | Mapping[str, Scores],
    k: int | Sequence[int] = 10,
    *,
    rel_threshold: int = 1,
    gain: str = "linear",
    complete_at: float | None = None,
) -> EvalReport:
    """The report `workbench eval --json` prints (`report.to_json()`), for one run or several
    (a list of paths, or name -> scores). Raises `workbench.core.errors.InputError` naming every
    problem of unusable input."""
    from workbench.commands.eval import _judgments, read_runs
    from workbench.core.errors import InputError
    from workbench.core.eval_report import eval_report

    ks = [k] if isinstance(k, int) else list(k)
    problems: list[str] = []
    aliases: dict[str, str] = {}
    coverage = judges = None
    if isinstance(qrels, Mapping):
        judged: Any = {q: dict(docs) for q, docs in qrels.items()}
    else:
        args = argparse.Namespace(
            qrels=os.fspath(qrels), rel_threshold=rel_threshold, gain=gain, complete_at=complete_at
        )
        judged, aliases, coverage, judges = _judgments(args, problems)
    if isinstance(run, (str, os.PathLike)):
        runs, warnings = read_runs([os.fspath(run)], problems)
    elif (
        isinstance(run, Mapping)
        and all(isinstance(v, Mapping) for v in run.values())
        and any(isinstance(d, Mapping) for v in run.values() for d in v.values())
    ):
        runs, warnings = {name: dict(s) for name, s in run.items()}, {}  # name -> scores
    elif isinstance(run, Mapping):
        runs, warnings = {"run": dict(run)}, {}
    else:
        runs, warnings = read_runs([os.fspath(p) for p in run], problems)
    if problems or judged is None:
        raise InputError(problems or ["no judgments read"])
    return eval_report(
        judged,
        runs,
        ks,
        rel_threshold=rel_threshold,
        gain=gain,
        run_warnings=warnings,
        coverage=coverage,
        strict=True,
        aliases=aliases,
        judges=judges,
    )


def assert_eval(
    qrels: PathLike | Qrels,
    run: PathLike | Scores | Sequence[PathLike] | Mapping[str, Scores],
    k: int | Sequence[int] = 10,
    min: Mapping[str, float] | None = None,  # noqa: A002 - the name users write
    require_complete: bool = False,
    **options: Any,
) -> EvalReport:
    """`evaluate`, then AssertionError when a run's mean of a measure ("R@10", "nDCG@10") is
    below its `min` (or undefined), or, with `require_complete`, when the audit found an
    error-level problem (an incomplete judged set, duplicates, a broken denominator). The
    message is the failing figures, then the audit as `workbench eval` prints it."""
    from workbench.core.model import Level
    from workbench.reports.evaluation import render

    report = evaluate(qrels, run, k, **options)
    failures = []
    for name, result in report.runs.items():
        for measure, floor in (min or {}).items():
            value = result.mean.values.get(measure)
            if measure not in result.mean.values:
                failures.append(f"{name}: {measure} is not a measure of this report (k={k})")
            elif value is None or value < floor:
                shown = "undefined" if value is None else f"{value:.4f}"
                failures.append(f"{name}: {measure} = {shown}, below the floor {floor}")
    if require_complete:
        failures += [
            f"{p.run or 'all runs'}: {p.qid or 'every query'}: {p.message}"
            for p in report.problems
            if p.level == Level.ERROR
        ]
    if failures:
        raise AssertionError("\n".join(failures) + "\n\n" + render(report, "table"))
    return report
