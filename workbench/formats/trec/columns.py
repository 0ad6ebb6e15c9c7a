"""What the TREC readers share: the column layouts and the check of a line's ids."""

from __future__ import annotations

from workbench.core.errors import ProblemCollector, quoted
from workbench.formats.textio import id_problem

QRELS_COLUMNS = "'qid iter docid grade'"
RUN_COLUMNS = "'qid Q0 docid rank score tag'"


def id_problems(problems: ProblemCollector, lineno: int, *ids: tuple[str, str]) -> bool:
    """Add a problem for each (what, value) of a line's ids that `id_problem` refuses (in a
    column, only a control character can be wrong); True if one was."""
    found = False
    for what, value in ids:
        problem = id_problem(value)
        if problem:
            problems.add(lineno, f"{what} {quoted(value)} {problem}")
            found = True
    return found
