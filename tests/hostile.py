"""Hostile input files for the fuzz suites: a well-formed sample of each format, and mutations
that break it the ways real files (and attackers) do, and the fragments hostile files are made
of. Hypothesis draws them; `render` applies named mutations as plain data, for subprocess runs
and regressions."""

from __future__ import annotations

import json

from hypothesis import strategies as st

# Fragments a hostile file is made of (the reader fuzz suite builds whole files from them).
HUGE = "x" * 300_000
DIGITS = "9" * 5000
CONTROLS = ["\x00", "\x1b[31m", "\x1b]0;pwned\x07", "\x9b2J", "\x7f", "\x08", "\u202e", "\u2066"]
BREAKS = ["\r", "\r\n", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c"]
NUMBERS = [
    "\uff13", "\u0662", "\u0663.5", "+1", "1_0", "-0", "007", "nan", "NaN", "inf", "-inf",
    "Infinity", "1e400", "-1e400", "1.0e+400", "1e-400", ".nan", ".inf", "-.Inf", "0x1F", "0b_",
    "0o7", "1:30", DIGITS, "-" + DIGITS, "9223372036854775808", "-9223372036854775809", "1.5",
    "-3", "true", "null", "~", "",
]  # fmt: skip
MARKUP = [
    "[@click=app.quit]q", "d[/]", "<script>alert(1)</script>", "[bold red]x[/]", "**x**",
    "{{x}}", "%s%n", "${HOME}", "`rm -rf /`", "a|b", "\\", "\"", "'",
]  # fmt: skip
YAMLISH = [
    "!!python/object:os.system", "!binary", "&a", "*a", "<<", "? ", "- ", ": ", "---", "...",
    "%YAML 1.1", "|", ">", "#", "{", "[", "]", "}", ",", "@", "`", "2024-13-45", "2024-01-05",
    "=",
]  # fmt: skip

SAMPLES: dict[str, str] = {
    "qrels": "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n",
    "run": "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 0.5 sys\n",
    "corpus": "".join(
        json.dumps({"_id": f"d{i}", "title": f"title {i}", "text": f"maize pest {i} scouting"})
        + "\n"
        for i in range(1, 6)
    ),
    "queries": '{"_id": "q1", "text": "maize pest", "narrative": "pests only"}\n'
    '{"_id": "q2", "text": "scouting"}\n',
    "labels": '{"qid": "q1", "docid": "d1", "grade": 2}\n'
    '{"qid": "q2", "docid": "d3", "grade": 0}\n',
    "comparisons": '{"qid": "q1", "a": "d1", "b": "d2", "first": "a", "preferred": "a"}\n'
    '{"qid": "q1", "a": "d1", "b": "d2", "first": "b", "preferred": "b"}\n',
    "golden": (
        "schema: workbench-golden\nversion: 1\nname: g\ngrade_scale:\n  0: no\n  1: yes\n"
        "annotators:\n  - {name: alice, role: human}\naliases: {}\ncoverage: null\n"
        "queries:\n  - id: q1\n    text: maize pest\n    judgments:\n"
        "      - {doc: d1, grade: 1, by: [alice]}\n      - {doc: d2, grade: 0, by: [alice]}\n"
        "  - id: q2\n    text: scouting\n    judgments:\n      - {doc: d3, grade: 1}\n"
    ),
}


def _replace_first_number(text: str, new: str) -> str:
    for token in text.replace('"', " ").replace(",", " ").replace("}", " ").split():
        if token.lstrip("-").replace(".", "", 1).isdigit():
            return text.replace(token, new, 1)
    return text + new


def _replace_id(text: str, new: str) -> str:
    return text.replace("d1", new, 1)


def _json_new(value: str) -> str:
    return json.dumps(value)[1:-1]  # as it would sit inside a JSON string


MUTATIONS = {
    "bom": lambda t: "\ufeff" + t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "nul": lambda t: t[: len(t) // 2] + "\x00" + t[len(t) // 2 :],
    "truncated": lambda t: t[: len(t) * 2 // 3],
    "empty": lambda t: "",
    "comments_only": lambda t: "# nothing here\n#\n",
    "blank_lines": lambda t: "\n\n" + t.replace("\n", "\n\n"),
    "huge_line": lambda t: t + "x" * 300_000 + "\n",
    "deep_json": lambda t: '{"_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n" + t,
    "deep_yaml": lambda t: t + "extra: " + "[" * 5_000 + "]" * 5_000 + "\n",
    "long_digits": lambda t: _replace_first_number(t, "9" * 5000),
    "fullwidth_digit": lambda t: _replace_first_number(t, "３"),
    "arabic_digit": lambda t: _replace_first_number(t, "٢"),
    "plus_sign": lambda t: _replace_first_number(t, "+1"),
    "huge_float": lambda t: _replace_first_number(t, "1e400"),
    "nan": lambda t: _replace_first_number(t, "nan"),
    "inf": lambda t: _replace_first_number(t, "-inf"),
    "surrogate_escape": lambda t: _replace_id(t, "\\ud800"),
    "duplicate_line": lambda t: t + t.splitlines(keepends=True)[0] if t else t,
    "wrong_type": lambda t: (
        t.replace('"maize pest', '["maize pest"], "x": "', 1)
        .replace('"d1"', "1.5", 1)
        .replace("grade: 1", "grade: [1]", 1)
    ),
    "null_values": lambda t: t.replace('"d1"', "null", 1).replace("text: ", "text: null #", 1),
    "yaml_tag": lambda t: t.replace("name: g", "name: !!python/object/apply:os.system [ls]", 1),
    "yaml_anchor": lambda t: t.replace("text: scouting", "text: &a scouting\n    narrative: *a", 1),
    "extra_columns": lambda t: t.replace("\n", " extra\n", 1),
    "missing_columns": lambda t: t.replace(" 0 ", " ", 1),
    "id_with_space": lambda t: _replace_id(t, "d 1"),
    "id_hash": lambda t: t.replace("q1", "#q1", 1),
    "markup_id": lambda t: _replace_id(t, "d[/]"),
    "click_id": lambda t: _replace_id(t, "[@click=app.quit]q"),
    "escape_id": lambda t: _replace_id(t, _json_new("x\x1b]2;PWNED\x07")),
    "escape_text": lambda t: t.replace("maize", _json_new("\x1b]52;c;aGk=\x07\x1b[2J"), 1),
    "raw_escape": lambda t: t.replace("d2", "d\x1b[31m2", 1),
    "c1_control": lambda t: t.replace("d2", "d\x9b2J", 1),
    "big_grade": lambda t: t.replace(" 2\n", " 5000\n", 1).replace('"grade": 2', '"grade": 5000'),
    "negative": lambda t: _replace_first_number(t, "-3"),
}

BYTE_MUTATIONS = {
    "invalid_utf8": lambda b: b[: len(b) // 2] + b"\xff\xfe\xc3\x28" + b[len(b) // 2 :],
    "cesu_surrogate": lambda b: b.replace(b"d1", b"d\xed\xa0\x801", 1),
    "latin1": lambda b: b.replace(b"maize", "maïze".encode("latin-1"), 1),
}


def render(kind: str, mutations: list[str]) -> bytes:
    """The sample of `kind` with `mutations` applied in order, as the bytes of a file."""
    text = SAMPLES[kind]
    byte_steps = [m for m in mutations if m in BYTE_MUTATIONS]
    for name in mutations:
        if name in MUTATIONS:
            text = MUTATIONS[name](text)
    data = text.encode("utf-8", "surrogatepass")
    for name in byte_steps:
        data = BYTE_MUTATIONS[name](data)
    return data


ALL_MUTATIONS = sorted(MUTATIONS) + sorted(BYTE_MUTATIONS)


def hostile_files(kind: str) -> st.SearchStrategy[tuple[list[str], bytes]]:
    """(mutation names, file bytes): one to three mutations of the `kind` sample."""
    return st.lists(st.sampled_from(ALL_MUTATIONS), min_size=1, max_size=3).map(
        lambda names: (names, render(kind, names))
    )
