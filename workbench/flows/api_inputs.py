"""The Python API's door (`workbench.api`): every argument checked by the rules the CLI applies
to the same input (`core.eval_options` for the options, the readers' rules for ids, grades and
scores) before anything is read or scored. Each problem is one InputError line naming the
argument and, inside data, the query and document (`run['q1']['d3']: score nan ...`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.core.errors import InputError, ProblemCollector, quoted
from workbench.core.measures.eval_options import (
    complete_at_problem,
    cutoffs_problems,
    gain_problem,
    is_real,
    is_whole,
    rel_threshold_problem,
)
from workbench.core.measures.measure_view import grade_problem
from workbench.formats.textio import id_problem, nfc

OPTIONS = ("rel_threshold", "gain", "complete_at", "assume_complete", "chunks", "corpus",
           "text_by_grade")  # fmt: skip
"""The keyword options `evaluate` takes (and `assert_eval` passes on)."""


@dataclass(frozen=True)
class Options:
    """`evaluate`'s options, checked."""

    ks: list[int]
    rel_threshold: int
    gain: str
    complete_at: float | None


def checked_options(k: object, rel_threshold: object, gain: object, complete_at: object) -> Options:
    """The options, or InputError naming each one outside the CLI's bounds."""
    ks, problems = cutoffs_problems(k, "k")
    problems += [
        p
        for p in (
            rel_threshold_problem(rel_threshold, "rel_threshold"),
            gain_problem(gain, "gain"),
            complete_at_problem(complete_at, "complete_at"),
        )
        if p
    ]
    if problems:
        raise InputError(problems)
    share = None if complete_at is None else float(complete_at)  # type: ignore[arg-type]
    return Options(ks, int(rel_threshold), str(gain), share)  # type: ignore[call-overload]


def checked_chunks(
    chunks: object, corpus: object, text_by_grade: object, in_memory: bool = False
) -> list[str]:
    """`chunks` (a path, or one per run) and the `corpus` folder their offsets point into,
    as paths: the problems (`eval --chunks FILE --corpus FOLDER`'s rules). `in_memory`: the
    judgments are grades in memory, which say nothing of where their passages lie."""
    problems: list[str] = []
    if chunks is not None and in_memory:
        problems.append("chunks: give the judgments as a store, a golden.yaml or a qrels file: "
                        "grades in memory do not say where their passages lie")  # fmt: skip
    if chunks is None:
        if corpus is not None or text_by_grade:
            problems.append("corpus, text_by_grade: go with chunks (a run's own chunks JSONL)")
        return problems
    listed = chunks if isinstance(chunks, Sequence) and not isinstance(chunks, str) else [chunks]
    labels = ["chunks"] if listed is not chunks else [f"chunks[{i}]" for i in range(len(listed))]
    problems += filter(
        None, (path_problem(c, label) for c, label in zip(listed, labels, strict=True))
    )
    if not listed:
        problems.append("chunks: an empty list (give a chunks JSONL, or one per run)")
    problems += filter(None, [path_problem(corpus, "corpus")])
    if not isinstance(text_by_grade, bool):
        problems.append(f"text_by_grade: {quoted(text_by_grade)} is not True or False")
    return problems


def unknown_options(options: Mapping[str, object]) -> list[str]:
    return [
        f"{name}: not an option of evaluate (it takes {', '.join(OPTIONS)})"
        for name in options
        if name not in OPTIONS
    ]


def path_problem(value: object, label: str) -> str | None:
    """A path is a str or an os.PathLike giving one (bytes are refused: ids and names are text)."""
    if isinstance(value, str):
        return None if value else f"{label}: an empty path"
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        return None
    what = _DATA.get(label, "")
    return f"{label}: {quoted(value)} is not a path (a str or os.PathLike){what}"


_DATA = {
    "qrels": ", nor a mapping of query ids to {doc id: grade}",
    "run": ", nor a mapping of query ids to {doc id: score} (or of run names to such mappings)",
}


def _id(collector: ProblemCollector, where: str, value: object) -> str | None:
    """The id in NFC, as the readers take it; None (and the problem said) when it is none."""
    if not isinstance(value, str):
        collector.add(None, f"{where}: the id {quoted(value)} is not a str")
        return None
    value = nfc(value)
    problem = id_problem(value)
    if problem:
        collector.add(None, f"{where}: the id {quoted(value)} {problem}")
        return None
    return value


def _nested(
    collector: ProblemCollector, label: str, data: object, value_ok, what: str
) -> dict[str, dict[str, object]]:
    """`data` as {query id: {doc id: value}}, each id and value checked, each problem named."""
    out: dict[str, dict[str, object]] = {}
    if not isinstance(data, Mapping):
        collector.add(None, f"{label}: {quoted(data)} is not a mapping of query ids to {what}s")
        return out
    for given_qid, docs in data.items():
        where = f"{label}[{quoted(given_qid)}]"
        qid = _id(collector, label, given_qid)
        if qid is None:
            continue
        if qid in out:
            collector.add(None, f"{where}: the same query id as another in NFC ({quoted(qid)})")
            continue
        if not isinstance(docs, Mapping):
            collector.add(None, f"{where}: {quoted(docs)} is not a mapping of doc ids to {what}s")
            continue
        kept: dict[str, object] = {}
        for given_doc, value in docs.items():
            doc_id = _id(collector, where, given_doc)
            problem = value_ok(value)
            if doc_id is None:
                continue
            if doc_id in kept:
                problem = f"is given for the same doc id as another in NFC ({quoted(doc_id)})"
            if problem:
                cell = f"{where}[{quoted(given_doc)}]"
                collector.add(None, f"{cell}: {what} {quoted(value)} {problem}")
            else:
                kept[doc_id] = value
        out[qid] = kept
    return out


def checked_qrels(qrels: Mapping[object, object], gain: str) -> dict[str, dict[str, int]]:
    """In-memory judgments: ids as the readers take them, each grade a whole number its gain
    can score (a float, a bool or a str is refused, as in a qrels file)."""

    def grade(value: object) -> str | None:
        if not is_whole(value):
            return "is not a whole number"
        return grade_problem(int(value), gain)  # type: ignore[call-overload]

    collector = ProblemCollector("qrels")
    found = _nested(collector, "qrels", qrels, grade, "grade")
    collector.raise_if_any()
    return {q: {d: int(g) for d, g in docs.items()} for q, docs in found.items()}  # type: ignore[call-overload]


def _score(value: object) -> str | None:
    return None if is_real(value) else "is not a finite number"


def checked_runs(run: object) -> tuple[list[str], dict[str, dict[str, dict[str, float]]]]:
    """`run` as (paths to read, in-memory runs by name): one path, a list of paths, one run's
    scores (named "run"), or run names -> scores. InputError names each problem."""
    if isinstance(run, (str, os.PathLike)):
        problem = path_problem(run, "run")
        if problem:
            raise InputError([problem])
        return [os.fspath(run)], {}
    if isinstance(run, Mapping):
        named = all(isinstance(v, Mapping) for v in run.values()) and any(
            isinstance(d, Mapping) for v in run.values() for d in v.values()
        )
        collector = ProblemCollector("run")
        runs: dict[str, dict[str, dict[str, float]]] = {}
        for name, scores in run.items() if named else [("run", run)]:
            if not (isinstance(name, str) and name):
                collector.add(None, f"run: the run name {quoted(name)} is not a non-empty str")
                continue
            label = f"run[{quoted(name)}]" if named else "run"
            found = _nested(collector, label, scores, _score, "score")
            runs[name] = {q: {d: float(s) for d, s in docs.items()} for q, docs in found.items()}  # type: ignore[arg-type]
        collector.raise_if_any()
        return [], runs
    if isinstance(run, Sequence) and not isinstance(run, (bytes, bytearray)):
        said = [path_problem(path, f"run[{i}]") for i, path in enumerate(run)]
        problems = [problem for problem in said if problem]
        if not run:
            problems.append("run: an empty list (give at least one run file)")
        if problems:
            raise InputError(problems)
        return [os.fspath(p) for p in run], {}
    raise InputError([path_problem(run, "run") or f"run: {quoted(run)} is not a run"])
