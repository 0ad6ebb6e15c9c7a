"""Store rows made typed values, checked: what a damaged or hand-edited store holds (a grade
'abc', an inclusion probability 0, unparseable JSON, a NULL where a value is needed) is one
InputError naming the store, the table, the row and the field, never a crash further on.

Each table group reads through `typed` with its columns' kinds, once per table; SQLite's
loose typing is why (an INTEGER column keeps the text 'abc'), PostgreSQL's types make most of
these checks pass at once."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence

from workbench.core.errors import InputError, quoted

Kind = Callable[[object], object]
"""A column's check: the value as the model wants it, or `Bad` saying what it is not."""


class Bad(Exception):
    """A value that its column's kind refuses; the message says what it should be."""


def text(value: object) -> str:
    if type(value) is str:
        return value
    raise Bad("is not text")


def integer(value: object) -> int:
    if type(value) is int:
        return value
    raise Bad("is not an integer")


def optional_integer(value: object) -> int | None:
    return None if value is None else integer(value)


def real(value: object) -> float:
    if type(value) in (float, int) and math.isfinite(value):  # type: ignore[arg-type]
        return float(value)  # type: ignore[arg-type]
    raise Bad("is not a finite number")


def probability(value: object) -> float:
    number = real(value)
    if 0.0 < number <= 1.0:
        return number
    raise Bad("is not a probability in (0, 1]")


def positive_integer(value: object) -> int:
    number = integer(value)
    if number >= 1:
        return number
    raise Bad("is not a positive integer")


def _json(value: object) -> object:
    try:
        return json.loads(text(value))
    except (ValueError, RecursionError):
        raise Bad("is not JSON") from None


def json_object(value: object) -> dict:
    found = _json(value)
    if isinstance(found, dict):
        return found
    raise Bad("is not a JSON object")


def json_texts(value: object) -> list[str]:
    """A JSON list of strings (names of systems, ids)."""
    found = _json(value)
    if isinstance(found, list) and all(type(item) is str for item in found):
        return found
    raise Bad("is not a JSON list of strings")


def typed(
    location: str,
    table: str,
    columns: Sequence[tuple[str, Kind]],
    rows: Iterable[Sequence[object]],
    key: int = 1,
) -> list[tuple]:
    """`rows` (as read, one value per column) with each value checked and converted by its
    column's kind; the first `key` columns name the row in a message."""
    rows = [tuple(row) for row in rows]
    kinds = [kind for _, kind in columns]
    if rows and all(map(_sound, kinds, zip(*rows, strict=True))):
        return rows  # the common case: every value already what its kind gives
    out = []
    for row in rows:
        try:
            out.append(tuple([kind(value) for kind, value in zip(kinds, row, strict=True)]))
        except Bad:
            raise _problem(location, table, columns, row, key) from None
    return out


def _sound(kind: Kind, column: tuple) -> bool:
    """Whether every value of `column` is already what `kind` would give (checked a column
    at a time: a pool of 100,000 rows costs milliseconds, not a call per value)."""
    types = set(map(type, column))
    if kind is text:
        return types <= {str}
    if kind is integer:
        return types <= {int}
    if kind is optional_integer:
        return types <= {int, type(None)}
    if kind is real or kind is probability:
        if not types <= {float} or not all(map(math.isfinite, column)):
            return False
        return kind is real or (min(column) > 0.0 and max(column) <= 1.0)
    return False


def _problem(
    location: str, table: str, columns: Sequence[tuple[str, Kind]], row: Sequence[object],
    key: int,
) -> InputError:  # fmt: skip
    """The first bad value of `row`, as one line."""
    ids = ", ".join(
        f"{name} {quoted(value)}" for (name, _), value in zip(columns[:key], row[:key], strict=True)
    )
    for (name, kind), value in zip(columns, row, strict=True):
        try:
            kind(value)
        except Bad as exc:
            shown = "NULL" if value is None else quoted(value)
            return InputError(
                [f"{location}: table {table}, row ({ids}): {name} {shown} {exc}; the store is"
                 " damaged or was edited by hand"]
            )  # fmt: skip
    raise AssertionError("no bad value in a row that failed")
