"""Numbers of a whole column at once (numpy), for the vectorised run reader: each column is an
(n, width) byte matrix, one ASCII token per row, zero-padded. Exactness comes first: a score is
taken only where one IEEE operation on exact operands gives Python's `float()` of the token;
every other token is left to `float()` itself. Counts and scores without an exponent (the
common case) take a few whole-row operations a byte position; other scores a state machine
whose byte-to-byte tables go through `bytes.translate`, the fastest lookup there is."""

from __future__ import annotations

import numpy as np

# Byte classes, and the states of `-?D+(.D+)?([eE][+-]?D+)?` followed by zero padding.
_PAD, _DIGIT, _MINUS, _PLUS, _DOT, _EXP, _OTHER = range(7)
_START, _SIGN, _INT, _DOT_SEEN, _FRAC, _E, _E_SIGN, _E_DIGITS, _END, _BAD = range(10)


def _table(values: np.ndarray) -> bytes:
    """A `bytes.translate` table: byte b becomes values[b] (256 entries, 0 past the end)."""
    full = np.zeros(256, np.uint8)
    full[: len(values)] = values
    return full.tobytes()


def _classes() -> np.ndarray:
    classes = np.full(256, _OTHER, np.uint8)
    classes[0] = _PAD
    classes[ord("0") : ord("9") + 1] = _DIGIT
    classes[ord("-")], classes[ord("+")], classes[ord(".")] = _MINUS, _PLUS, _DOT
    classes[ord("e")] = classes[ord("E")] = _EXP
    return classes


def _transitions() -> np.ndarray:
    """The next state, indexed by state * 8 + class."""
    after = np.full((16, 8), _BAD, np.uint8)
    after[_START, _DIGIT], after[_START, _MINUS] = _INT, _SIGN
    after[_SIGN, _DIGIT] = _INT
    after[_INT, [_DIGIT, _DOT, _EXP, _PAD]] = [_INT, _DOT_SEEN, _E, _END]
    after[_DOT_SEEN, _DIGIT] = _FRAC
    after[_FRAC, [_DIGIT, _EXP, _PAD]] = [_FRAC, _E, _END]
    after[_E, [_DIGIT, _PLUS, _MINUS]] = [_E_DIGITS, _E_SIGN, _E_SIGN]
    after[_E_SIGN, _DIGIT] = _E_DIGITS
    after[_E_DIGITS, [_DIGIT, _PAD]] = [_E_DIGITS, _END]
    after[_END, _PAD] = _END
    return after.ravel()


_CLASS = _classes()
_CLASS_OF = _table(_CLASS)
_NEXT = _transitions()
_NEXT_OF = _table(_NEXT)
_IS_DIGIT_STEP = np.arange(128) % 8 == _DIGIT
_MANTISSA_DIGIT = _table(np.isin(_NEXT, (_INT, _FRAC)) & _IS_DIGIT_STEP)
_FRACTION_DIGIT = _table((_NEXT == _FRAC) & _IS_DIGIT_STEP)
_DIGIT_VALUE = _table(np.where(_CLASS == _DIGIT, np.arange(256) - ord("0"), 0))
_TIMES_TEN = _table(np.where(np.isin(_NEXT, (_INT, _FRAC)) & _IS_DIGIT_STEP, 10, 1))

_EXACT_MANTISSA = 2**53
"""Integers below 2^53 are exact doubles."""
_EXACT_POWER = 22
"""10^22 is the largest exact power of ten: m * 10^p or m / 10^p rounds once, as float() does."""
_POWERS = 10.0 ** np.arange(_EXACT_POWER + 1)


def _lookup(table: bytes, values: np.ndarray) -> np.ndarray:
    """table[values] for a uint8 array."""
    return np.frombuffer(values.tobytes().translate(table), np.uint8).reshape(values.shape)


def parse_scores(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, exact): each row read as a plain decimal (`-?D+(.D+)?([eE][+-]?D+)?`); `exact`
    is False where the row is not one or its value needs more than one rounding (then the
    caller asks `float()`). Exact rows equal `float(token)`, bit for bit (-0.0 included)."""
    found = _fixed_point(matrix)
    return found if found is not None else _scientific(matrix)


def _fixed_point(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`parse_scores` for a matrix of digits, points and a leading '-' (no exponent, the common
    case), a few whole-column operations a byte position; None when another byte is there."""
    rows, width = matrix.shape
    columns = np.ascontiguousarray(matrix.T)
    digit = columns - np.uint8(ord("0"))
    is_digit = digit < 10
    is_point = columns == ord(".")
    minus = columns[0] == ord("-")
    plain = is_digit | is_point | (columns == 0)
    if not plain[1:].all() or not (plain[0] | minus).all():
        return None
    digit *= is_digit
    times = is_digit * np.uint8(9) + np.uint8(1)  # 10 at a digit, else 1
    mantissa = np.zeros(rows, np.int64)
    digits = np.zeros(rows, np.uint16)
    fraction = np.zeros(rows, np.uint16)
    seen_point = is_point[0].copy()
    points = seen_point.view(np.uint8).copy()
    # Not -?D+(.D+)?: a point first, after the sign or not before a digit; a sign alone.
    bad = is_point[0] | (minus & ~is_digit[1]) if width > 1 else is_point[0] | minus
    for position in range(width):
        mantissa *= times[position]  # wraps past 18 digits: such rows are not exact
        mantissa += digit[position]
        digits += is_digit[position]
        if position:
            fraction += seen_point & is_digit[position]
            seen_point |= is_point[position]
            points += is_point[position]
        if position + 1 < width:
            bad |= is_point[position] & ~is_digit[position + 1]
        else:
            bad |= is_point[position]
    exact = (
        ~bad
        & (points <= 1)
        & (digits <= 18)
        & (mantissa < _EXACT_MANTISSA)
        & (fraction <= _EXACT_POWER)
    )
    result = mantissa.astype(np.float64) / _POWERS[np.minimum(fraction, _EXACT_POWER)]
    return np.where(minus, -result, result), exact


def _scientific(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`parse_scores` for any matrix: a state machine stepped a byte position at a time."""
    rows = matrix.shape[0]
    state = np.zeros(rows, np.uint8)
    mantissa = np.zeros(rows, np.int64)
    digits = np.zeros(rows, np.uint16)
    fraction = np.zeros(rows, np.uint16)
    padded = np.zeros((matrix.shape[1] + 1, rows), np.uint8)
    padded[:-1] = matrix.T
    classes = _lookup(_CLASS_OF, padded)
    values = _lookup(_DIGIT_VALUE, padded)
    has_exponent = bool((classes == _EXP).any())
    steps = []
    for position in range(len(padded)):
        step = (state << 3) | classes[position]
        state = _lookup(_NEXT_OF, step)
        taken = _lookup(_MANTISSA_DIGIT, step)
        if position < 20:  # 18 digits, a sign and a point; a row with more digits is ruled out
            mantissa *= _lookup(_TIMES_TEN, step)
            mantissa += values[position] * taken
        digits += taken
        fraction += _lookup(_FRACTION_DIGIT, step)
        if has_exponent:
            steps.append(step)
    power = -fraction.astype(np.int64)
    exponent_ok = np.ones(rows, bool)
    if has_exponent:
        exponent, exponent_ok = _exponents(padded, values, steps)
        power += exponent
    exact = (
        (state == _END)
        & (digits <= 18)
        & exponent_ok
        & (mantissa < _EXACT_MANTISSA)
        & (np.abs(power) <= _EXACT_POWER)
    )
    scale = _POWERS[np.minimum(np.abs(power), _EXACT_POWER)]
    as_float = mantissa.astype(np.float64)
    result = np.where(power < 0, as_float / scale, as_float * scale)
    return np.where(matrix[:, 0] == ord("-"), -result, result), exact


def _exponents(
    padded: np.ndarray, values: np.ndarray, steps: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """(signed exponent, at most 3 digits) of each row."""
    rows = padded.shape[1]
    exponent = np.zeros(rows, np.int64)
    digit_count = np.zeros(rows, np.int64)
    negative = np.zeros(rows, bool)
    for position, step in enumerate(steps):
        state = _lookup(_NEXT_OF, step)
        in_exponent = (state == _E_DIGITS) & (digit_count < 4)
        exponent = np.where(in_exponent, exponent * 10 + values[position], exponent)
        digit_count += state == _E_DIGITS
        negative |= (state == _E_SIGN) & (padded[position] == ord("-"))
    return np.where(negative, -exponent, exponent), digit_count <= 3


def parse_counts(matrix: np.ndarray) -> np.ndarray | None:
    """Each row as a non-negative integer of 1-18 ASCII digits, or None if one row is not.
    Rows are non-empty and zero-padded, with no zero byte inside."""
    if matrix.shape[1] > 18:
        return None
    columns = np.ascontiguousarray(matrix.T)
    digit = columns - np.uint8(ord("0"))
    is_digit = digit < 10
    if not (is_digit | (columns == 0)).all():
        return None
    digit *= is_digit
    times = is_digit * np.uint8(9) + np.uint8(1)  # 10 at a digit, 1 in the padding
    values = np.zeros(matrix.shape[0], np.int64)
    for position in range(len(columns)):
        values *= times[position]
        values += digit[position]
    return values
