"""Run files read for scoring: each under a name of its own, with its reader's warnings; read
column-wise and reduced against the qrels where nothing needs every line of a ranking."""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from workbench.core.measures.measure_view import JudgedRanking
    from workbench.core.model import Run

Scores = Mapping[str, "Mapping[str, float] | JudgedRanking"]
"""A run's rankings: doc scores per query, or each query reduced against the qrels."""


class ReducedRun(NamedTuple):
    """A run read column-wise, each ranking reduced against the qrels (as `Run` is read)."""

    name: str
    scores: dict[str, JudgedRanking]
    warnings: list[str]


@dataclass(frozen=True)
class RunsRead:
    """The runs read (name -> scores), each run's reader warnings, and the problems of the
    files that could not be read."""

    runs: dict[str, Scores]
    warnings: dict[str, list[str]]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stages:
    """A two-stage system's runs (`--stage1`, `--stage2`): scores and names, or None."""

    scores: tuple[Scores, Scores] | None
    names: tuple[str, str] = ("stage1", "stage2")
    problems: tuple[str, ...] = ()


def read_runs(
    paths: list[str],
    reduce_with: tuple[Mapping[str, Mapping[str, int]], int] | None = None,
) -> RunsRead:
    """Each run's scores under a name of its own (its tag, else tag and file), and its reader
    warnings. With `reduce_with` = (qrels, top), a well-formed run file is read column-wise
    and each ranking reduced against the qrels (`run_table.judged_rankings`): what the
    measures and the audit read, without an object per line."""
    from workbench.core.errors import InputError
    from workbench.formats import read_run

    runs: dict[str, Scores] = {}
    warnings: dict[str, list[str]] = {}
    problems: list[str] = []
    for path in paths:
        try:
            loaded = _read_reduced(path, reduce_with) if reduce_with else None
            if loaded is None:
                loaded = read_run(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        name = _unique(loaded.name, path, runs)
        runs[name] = loaded.scores  # ranked by the ordering rule inside metrics
        warnings[name] = list(loaded.warnings)
    return RunsRead(runs, warnings, tuple(problems))


def read_stages(stage1: str | None, stage2: str | None) -> Stages:
    """The two stages' scores and names, when both files are given."""
    from workbench.core.errors import InputError
    from workbench.formats import read_run

    if not stage1 or not stage2:
        return Stages(None)
    try:
        first, second = read_run(stage1), read_run(stage2)
    except InputError as exc:
        return Stages(None, problems=tuple(exc.problems))
    names = (first.name, second.name if second.name != first.name else stage2)
    return Stages((first.scores, second.scores), names)


def _unique(name: str, path: str, taken: Container[str]) -> str:
    """`name`, or `name (path)` (then numbered) when another run already has it."""
    if name not in taken:
        return name
    candidate = f"{name} ({path})"
    i = 2
    while candidate in taken:
        candidate = f"{name} ({path} #{i})"
        i += 1
    return candidate


def _read_reduced(
    path: str, reduce_with: tuple[Mapping[str, Mapping[str, int]], int]
) -> Run | ReducedRun | None:
    """The run at `path` read by the vectorised reader and reduced, or None when the file is
    not well-formed (the strict reader then names its problems)."""
    from workbench.core.measures.run_table import judged_rankings
    from workbench.formats.trec.table import read_run_table

    table = read_run_table(path)
    if table is None:
        return None
    reduced = judged_rankings(table, *reduce_with)
    if reduced is None:
        return table.to_run()
    return ReducedRun(table.name, reduced, table.warnings)
