"""Errors that carry every problem found, each naming its file and line (or field).

Every problem is made one line by `display.visible` when the InputError is raised, so a control
character from the data (in a path, an id, a value) is shown, never acted on by a terminal."""

from __future__ import annotations

from workbench.core.display import visible


class InputError(Exception):
    """Unusable input: the CLI prints each problem and exits 2."""

    def __init__(self, problems: list[str]):
        self.problems = [visible(str(problem), one_line=True) for problem in problems]
        super().__init__("\n".join(self.problems))


class ProblemCollector:
    """Collects `path:line: message` problems so a reader reports all of them, then fails."""

    def __init__(self, path: str, limit: int = 50):
        self.path = path
        self.limit = limit
        self.problems: list[str] = []
        self.count = 0

    def add(self, line: int | None, message: str) -> None:
        self.count += 1
        if len(self.problems) < self.limit:
            where = f"{self.path}:{line}" if line is not None else self.path
            self.problems.append(f"{where}: {message}")

    def raise_if_any(self) -> None:
        if self.count:
            problems = list(self.problems)
            if self.count > len(problems):
                problems.append(f"{self.path}: ... and {self.count - len(problems)} more problems")
            raise InputError(problems)


def quoted(value: object, limit: int = 60) -> str:
    """`value` for a problem message: its repr, cut to `limit` characters (a 5,000-digit
    number or a megabyte line is named, not printed)."""
    if isinstance(value, int) and value.bit_length() > 4 * limit:  # repr may refuse it
        return f"an integer of {value.bit_length():,} bits"
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        return f"{text[:limit]!r}… ({len(text):,} characters)"
    return repr(value)
