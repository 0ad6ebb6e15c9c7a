"""The rules every reader shares (textio): what an id may hold, what an integer is, which
characters count as control characters, and problems that cannot act on a terminal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.core.display import has_control
from workbench.core.errors import InputError, ProblemCollector, quoted
from workbench.formats import textio
from workbench.formats.textio import has_token_control, id_problem, int_problem, plain_int


def test_the_control_patterns_are_display_has_control_and_the_bom():
    """textio's regexes (fast, for whole files) flag exactly what display.has_control does,
    and U+FEFF (a byte-order mark: invisible, and stripped when it starts a file)."""
    for code in range(0x10000):  # has_control flags nothing above the surrogates
        char = chr(code)
        refused = has_control(char) or char == "\ufeff"
        assert bool(textio._CONTROL.search(char)) == refused, hex(code)
        in_token = refused and not char.isspace() and not 0xD800 <= code < 0xE000
        assert bool(textio._CONTROL_IN_TOKEN.search(char)) == in_token, hex(code)


@pytest.mark.parametrize(
    "text, expected",
    [("a b", False), ("a\tb\r\n\x0b\x0c\x1c\x85\u2028", False), ("é 中", False),
     ("a\x00b", True), ("\x1b[31m", True), ("é\x9b", True), ("x\u202e", True), ("", False),
     ("\ufeffq1", True)],
)  # fmt: skip
def test_has_token_control(text, expected):
    assert has_token_control(text) is expected


@pytest.mark.parametrize(
    "value, problem",
    [("d1", None), ("My%20Notes%20[draft].md#1", None), ("Àgbẹ̀", None),
     ("", "must be non-empty without spaces"), ("a b", "must be non-empty without spaces"),
     ("a\u00a0b", "must be non-empty without spaces"), ("a\x1b", "has a control character"),
     ("a\u2066", "has a control character"), ("a\ud800", "is not valid Unicode (lone surrogate)"),
     ("\ufeffq1", "has a byte-order mark (U+FEFF)")],
)  # fmt: skip
def test_id_problem(value, problem):
    assert id_problem(value) == problem


@pytest.mark.parametrize(
    "text, value, problem",
    [("0", 0, None), ("-12", -12, None), ("007", 7, None),
     ("9223372036854775807", 2**63 - 1, None), ("-9223372036854775808", -(2**63), None),
     ("9223372036854775808", None, "is out of range (a 64-bit integer)"),
     ("9" * 5000, None, "is out of range (a 64-bit integer)"),
     ("+1", None, "is not a plain integer (ASCII digits, an optional leading '-')"),
     ("\uff13", None, "is not a plain integer (ASCII digits, an optional leading '-')"),
     ("1_0", None, "is not a plain integer (ASCII digits, an optional leading '-')"),
     (" 1", None, "is not a plain integer (ASCII digits, an optional leading '-')"),
     ("1.0", None, "is not an integer"), ("", None, "is not an integer")],
)  # fmt: skip
def test_plain_int(text, value, problem):
    assert plain_int(text) == value
    if problem:
        assert int_problem(text) == problem


def test_problems_are_one_visible_line_whoever_builds_them():
    problems = ProblemCollector("f\x1b.txt")
    problems.add(3, "id 'a\x1b[2J' bad\nsecond line\t\ud800")
    with pytest.raises(InputError) as info:
        problems.raise_if_any()
    assert info.value.problems == ["f␛.txt:3: id 'a␛[2J' bad␊second line␉\ufffd"]
    assert InputError(["p\x9b\u202e\r\n"]).problems == ["p\\x9b\\u202e␊"]


def test_quoted_names_long_values_without_printing_them():
    assert quoted("d1") == "'d1'"
    assert quoted("x" * 5000) == "'" + "x" * 60 + "'… (5,000 characters)"
    assert quoted(10**5000) == "an integer of 16,610 bits"
    assert quoted(float("inf")) == "inf"


@given(st.text(alphabet=st.sampled_from(["a", "\n", " ", "é", "\r"]), max_size=40))
def test_lines_one_at_a_time_are_split_on_newlines(text: str) -> None:
    from workbench.formats.textio import _lines

    assert list(_lines(text)) == text.split("\n")
