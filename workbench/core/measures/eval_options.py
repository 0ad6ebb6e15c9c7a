"""The bounds of a scoring call's options, one place for the CLI (`eval`, `compare`,
`coverage`) and the Python API (`workbench.api`): each check gives the problem as a line
naming the option as the caller wrote it (`-k` or `k`), or None."""

from __future__ import annotations

import math
import numbers

from workbench.core.errors import quoted
from workbench.core.measures.measure_view import GAINS

MAX_CUTOFF = 10**9
"""The deepest cutoff (-k, --fetch-k) taken: deeper than any ranking, and small enough for
every array a measure builds (a larger one exhausted memory or worse)."""
LARGEST = 2**62
"""Any whole-number option beyond this is refused: a store keeps 64-bit integers."""


def is_whole(value: object) -> bool:
    """An integer of any type (numpy's too), never a bool (True is no cutoff or grade)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """A real number of any type (numpy's too) that a float holds finitely; never a bool."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _whole_problem(value: object, label: str, what: str, top: int, note: str = "") -> str | None:
    """Why `value` is not a whole number from 1 to `top`, or None."""
    if not is_whole(value):
        return f"{label} {quoted(value)}: {what} is a whole number"
    if value < 1:  # type: ignore[operator]
        return f"{label} {value}: must be >= 1{note}"
    if value > top:  # type: ignore[operator]
        return f"{label} {quoted(value)}: must be at most {top:_}"
    return None


def cutoff_problem(value: object, label: str) -> str | None:
    return _whole_problem(value, label, "a cutoff", MAX_CUTOFF)


def cutoffs_problems(value: object, label: str) -> tuple[list[int], list[str]]:
    """The cutoffs of `k` (one, or a list or tuple of them; each once, in order), and why any
    cannot be one."""
    many = isinstance(value, (list, tuple, range))
    given = list(value) if many else [value]  # type: ignore[call-overload]
    if many and not given:
        return [], [f"{label}: needs at least one cutoff"]
    problems = [p for k in given if (p := cutoff_problem(k, label)) is not None]
    return ([] if problems else list(dict.fromkeys(int(k) for k in given))), problems


def cutoffs_of_text(values: list[str] | None) -> list[int]:
    """The cutoffs a command line gives (`-k 5 -k 10` or `-k 5,10`; each once, in order;
    default 10): ValueError naming the first that cannot be one."""
    ks: list[int] = []
    for value in values or ["10"]:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                k = int(part)
            except ValueError:
                raise ValueError(f"-k {part!r} is not an integer") from None
            problem = cutoff_problem(k, "-k")
            if problem:
                raise ValueError(problem)
            if k not in ks:
                ks.append(k)
    if not ks:
        raise ValueError("-k needs at least one cutoff")
    return ks


def rel_threshold_problem(value: object, label: str) -> str | None:
    return _whole_problem(value, label, "a grade", LARGEST, " (grade 0 is judged non-relevant)")


def gain_problem(value: object, label: str) -> str | None:
    if isinstance(value, str) and value in GAINS:
        return None
    return f"{label} {quoted(value)}: must be one of {', '.join(GAINS)}"


def complete_at_problem(value: object, label: str) -> str | None:
    """A share of |Rel| (None: the default): a finite number in (0, 1]."""
    if value is None:
        return None
    if not is_real(value) or not 0 < value <= 1:  # type: ignore[operator]
        return f"{label} {quoted(value)}: must be a number in (0, 1]"
    return None
