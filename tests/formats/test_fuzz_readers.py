"""Every reader, fed hostile files: it returns plain data or raises InputError, never anything
else. Each problem is one line that starts with the path (and `:LINE` where there is one) and
holds no control character that could act on a terminal; the input is left unchanged; and what
a reader accepts, its writer writes back and the reader reads back equal.

Hostile means: a BOM, CRLF and lone CR line ends, NUL bytes, bytes that are not UTF-8, huge
lines, deep nesting, 5,000-digit numbers, lone surrogates, other scripts' digits, nan/inf,
duplicate keys, wrong types, YAML tags, anchors and merge keys, markup and terminal escape
sequences, file names with spaces, '#', '%', escapes and bytes that are not UTF-8, and paths
that are folders, pipes or devices. The examples are derandomized (CI sees the same ones)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
from hostile import BREAKS, CONTROLS, DIGITS, HUGE, MARKUP, NUMBERS, YAMLISH
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from workbench.core.errors import InputError
from workbench.core.model import Doc, Query, Run
from workbench.formats import (
    Golden,
    golden_text,
    read_corpus,
    read_golden,
    read_qrels,
    read_queries,
    read_run,
    read_text_folder,
    write_qrels,
    write_run,
)
from workbench.formats.textio import id_problem

EXAMPLES = 150
"""Hypothesis examples per reader (each a whole hostile file or folder), plus the explicit
regression cases below."""

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

# -- hostile pieces -----------------------------------------------------------------------------

PLAIN = ["q1", "q2", "d1", "d2", "Q0", "0", "1", "2", "3", "0.5", "tag", "a", "%", "%20", "#"]
FRAGMENTS = [*CONTROLS, *BREAKS, *NUMBERS, *MARKUP, *YAMLISH, *PLAIN, "\ufeff", "\u00a0", " "]
RAW_BYTES = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xc0\xaf", b"\xef\xbb\xbf", b"\x00", b"\x80"]

fragment = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.sampled_from(PLAIN),
    st.text(max_size=6),
    st.just(HUGE),
)
word = st.one_of(st.sampled_from(PLAIN), st.sampled_from(FRAGMENTS), st.text(max_size=4))
RATES = st.sampled_from([0, 2, 5, 10, 30, 100])
"""How hostile one example is: the percentage of its slots (values, lines) drawn hostile.
Files of mostly good lines with one bad value reach the code past the first problem."""
PERCENT = st.integers(0, 99)


def chance(draw: st.DrawFn, rate: int) -> bool:
    return draw(PERCENT) < rate


def pick(draw: st.DrawFn, rate: int, good: str | st.SearchStrategy[Any], bad: Any = word) -> Any:
    """A hostile value `rate`% of the time, else `good` (a value, or drawn from a strategy).
    Strategies are built once, at module level: building them per draw is slow."""
    if chance(draw, rate):
        return draw(bad)
    return good if isinstance(good, str) else draw(good)


RAW_BYTE = st.sampled_from(RAW_BYTES)
LINE_ENDS = st.sampled_from(["\r\n", "\r", "\n\n", "\n \n"])


@st.composite
def file_bytes(draw: st.DrawFn, line: Callable[[st.DrawFn, int, int], str]) -> bytes:
    """Lines (`line(draw, rate, index)`) joined by some line end, maybe a BOM, and bytes
    that are not UTF-8 spliced in now and then."""
    rate = draw(RATES)
    lines = [line(draw, rate, i) for i in range(draw(st.integers(0, 8)))]
    end = pick(draw, rate, "\n", LINE_ENDS)
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    if draw(st.booleans()):
        text = "\ufeff" + text
    data = text.encode("utf-8", "surrogatepass")  # a surrogate becomes bytes that are not UTF-8
    return splice_raw_bytes(draw, rate, data)


PER_MILLE = st.integers(0, 1000)


def splice_raw_bytes(draw: st.DrawFn, rate: int, data: bytes) -> bytes:
    """`data` with bytes that are not UTF-8 put in at some places, now and then."""
    while chance(draw, rate // 3):
        at = len(data) * draw(PER_MILLE) // 1000
        data = data[:at] + draw(RAW_BYTE) + data[at:]
    return data


SEPARATORS = st.sampled_from(["\t", "  ", " \x0b", "\u2028", "\x00", "\u00a0", "\x1c"])
WHOLE_LINE = st.one_of(fragment, st.lists(word, max_size=7).map(" ".join))
QIDS = st.sampled_from(["q1", "q2", "10"])
GRADES = st.sampled_from(["-1", "0", "1", "2", "3", "10"])
BAD_NUMBER = st.sampled_from(NUMBERS)
BAD_DOC = st.one_of(word, st.just("d0"))
SCORES = st.floats(-1e6, 1e6).map(repr) | st.sampled_from(["1", "0.5", "-2e-3", "1e308"])
TAGS = st.sampled_from(["t", "bm25"])


def trec_line(draw: st.DrawFn, rate: int, cells: list[str]) -> str:
    comment = "# " if chance(draw, 10) else ""
    return comment + pick(draw, rate, " ", SEPARATORS).join(cells)


def qrels_line(draw: st.DrawFn, rate: int, index: int) -> str:
    if chance(draw, rate // 3):
        return draw(WHOLE_LINE)
    qid, doc = pick(draw, rate, QIDS), pick(draw, rate, f"d{index}", BAD_DOC)
    grade = pick(draw, rate, GRADES, BAD_NUMBER)
    return trec_line(draw, rate, [qid, pick(draw, rate, "0"), doc, grade])


def run_line(draw: st.DrawFn, rate: int, index: int) -> str:
    if chance(draw, rate // 3):
        return draw(WHOLE_LINE)
    qid, doc = pick(draw, rate, QIDS), pick(draw, rate, f"d{index}", BAD_DOC)
    rank, score = pick(draw, rate, str(index + 1), BAD_NUMBER), pick(draw, rate, SCORES, BAD_NUMBER)
    return trec_line(
        draw, rate, [qid, pick(draw, rate, "Q0"), doc, rank, score, pick(draw, rate, TAGS)]
    )


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),  # nan and inf included: json.dumps writes NaN and Infinity
    st.text(max_size=8),  # lone surrogates included: json.dumps writes "\ud800"
    st.sampled_from(FRAGMENTS),
)
json_values = st.one_of(
    json_scalars,
    st.lists(json_scalars, max_size=3),
    st.dictionaries(st.text(max_size=4), json_scalars, max_size=3),
    st.sampled_from([[[[]]], {"narrative": {"a": [1, {"b": None}]}}, {"\ud800": "\udfff"}]),
)  # flat, built once: st.recursive costs more to draw than the readers take to run
JSON_KEYS = st.sampled_from(["_id", "text", "title", "narrative", "metadata", "url", "\ud800", ""])
RAW_JSON = [
    '{"_id": "a", "text": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"_id": ' + DIGITS + ', "text": "x"}',
    '{"_id": "a", "text": "\\ud800"}',
    '{"_id": "a\\udfff", "text": "t", "title": "t"}',
    '{"_id": "a", "_id": "b", "text": "x"}',
    '{"_id": "a", "text": "x", "metadata": {"narrative": "\\ud800", "narrative": 1}}',
    '{"_id": "e\\u001b[2J", "text": "t"}',
    '{"_id": "n", "text": "' + HUGE + '"}',
    '{"_id": 1e400, "text": "t"}',
    '{"_id": -0, "text": NaN}',
    "[1, 2]",
    '"just a string"',
    "{",
    "\x00",
]
JSON_PIECES = ['{"', "_id", '": ', '"a"', ", ", "}", "[", "\\u", "\\ud800", "1e400", "NaN"]
BAD_JSON_LINE = st.sampled_from(RAW_JSON) | st.lists(st.sampled_from(JSON_PIECES)).map("".join)
BAD_ID = st.one_of(word, st.integers(), json_values)
TEXTS = st.sampled_from(["some text", "\u00c0 \u4e2d", "x"])
OPTIONAL_TEXTS = st.sampled_from(["", "A title", "what counts"])


def corpus_line(draw: st.DrawFn, rate: int, index: int) -> str:
    return json_line(draw, rate, index, "title")


def queries_line(draw: st.DrawFn, rate: int, index: int) -> str:
    return json_line(draw, rate, index, "narrative")


def json_line(draw: st.DrawFn, rate: int, index: int, optional: str) -> str:
    """A corpus or queries record: good fields, a hostile value or key now and then, or a raw
    hostile line."""
    if chance(draw, rate // 3):
        return draw(BAD_JSON_LINE)
    record: dict[str, Any] = {
        "_id": pick(draw, rate, f"d{index}", BAD_ID),
        "text": pick(draw, rate, TEXTS, json_values),
    }
    if draw(st.booleans()):
        record[optional] = pick(draw, rate, OPTIONAL_TEXTS, json_values)
    if chance(draw, rate):
        record[draw(JSON_KEYS)] = draw(json_values)
    return json.dumps(record, ensure_ascii=draw(st.booleans()))


YAML_ESCAPES = st.sampled_from(["\\ud800", "\\e", "\\x1b", "\\0", "\\U0001F600", "\\u202e", "\\n"])
BAD_YAML = st.one_of(
    st.sampled_from(NUMBERS),
    word,
    st.builds(lambda a, b: f'"{a}{b}"', st.sampled_from(PLAIN), YAML_ESCAPES),
    st.builds(lambda a: f"'{a}'", word.filter(lambda s: "'" not in s)),
    st.sampled_from(["[a, b]", "{a: 1}", "[]", "{}", "!!str 3", "&x 1", "*x", "[" * 200]),
)
"""A hostile YAML value: plain or quoted hostile text, escapes, a flow collection, a tag, an
anchor or an alias."""
COVERAGE_KEYS = st.lists(
    st.sampled_from(
        ["relevant", "pool", "judged", "est_rel", "est_rel_low", "est_rel_high", "completeness",
         "completeness_low", "status", "other"]
    ),
    max_size=4,
    unique=True,
)  # fmt: skip
HOSTILE_LINE = st.one_of(fragment, st.sampled_from(YAMLISH))


@st.composite
def golden_yaml(draw: st.DrawFn) -> bytes:
    """A golden.yaml whose values (and now and then a line) are hostile."""
    rate = draw(RATES)

    def value(good: str) -> str:
        return pick(draw, rate, good, BAD_YAML)

    lines = ["schema: workbench-golden", f"version: {value('1')}"]
    if draw(st.booleans()):
        lines += [f"name: {value('demo')}", f"description: {value('a: b')}"]
    if draw(st.booleans()):
        lines += ["grade_scale:", "  0: no", f"  {value('1')}: {value('some')}", "  2: yes"]
        lines += ["  3: very"]
    if draw(st.booleans()):
        lines += ["annotators:", f"  - {{name: {value('alice')}, role: {value('human')}}}"]
    if draw(st.booleans()):
        lines += [
            "pool:",
            f"  systems: [{value('bm25')}]",
            f"  depth: {value('20')}",
            f"  strategy: {value('rrf')}",
            f"  seed: {value('7')}",
            f"  params: {{k: {value('60')}, {value('b')}: 1}}",
        ]
    if draw(st.booleans()):
        lines += ["aliases:", f"  {value('d9')}: {value('d0')}"]
    if draw(st.booleans()):
        lines += ["coverage:", "  queries:", f"    {value('q0')}:"]
        for key in draw(COVERAGE_KEYS):
            lines.append(f"      {key}: {value('incomplete' if key == 'status' else '3')}")
        lines += [f"  summary: {{queries: {value('1')}, mean_completeness: {value('0.5')}}}"]
        lines += [f"  thresholds: {{complete_at: {value('0.8')}}}", f"  method: {value('m')}"]
    if draw(st.booleans()):
        lines += ["disagreements:", f"  - {{query: {value('q0')}, grades: {{a: {value('1')}}}}}"]
    lines.append("queries:")
    for q in range(draw(st.integers(0, 3))):
        lines += [f"  - id: {value(f'q{q}')}", f"    text: {value('a query')}"]
        if draw(st.booleans()):
            lines.append(f"    narrative: {value('what counts')}")
        lines.append("    judgments:")
        for d in range(draw(st.integers(0, 3))):
            by = f", by: [{value('alice')}]" if draw(st.booleans()) else ""
            note = f", note: {value('fine')}" if draw(st.booleans()) else ""
            lines.append(f"      - {{doc: {value(f'd{d}')}, grade: {value('2')}{by}{note}}}")
    while chance(draw, rate // 2):  # a hostile line anywhere
        lines.insert(len(lines) * draw(PER_MILLE) // 1000, draw(HOSTILE_LINE))
    end = pick(draw, rate, "\n", LINE_ENDS)
    data = (end.join(lines) + end).encode("utf-8", "surrogatepass")
    return splice_raw_bytes(draw, rate, data)


FILE_NAMES = [
    "a.md", "b.txt", "sub/c.md", "My Notes [draft].md", "a#b.md", "100%.md", "%23.md",
    "#.md", " lead.md", "tail .md", "tab\there.md", "new\nline.md", "esc\x1b[31m.md",
    "bidi\u202e.md", "caf\udce9.md", "\u00c0gb\u1eb9\u0300.md", "x.MD", ".hidden.md",
    "sub dir/d.md", "n" * 200 + ".md", "nbsp\u00a0.txt", "cr\r.md", "del\x7f.md",
]  # fmt: skip
PARAGRAPHS = st.sampled_from(["# A title", "", "Some text here.", "## Sub", "More. Text!"])


def paragraph_line(draw: st.DrawFn, rate: int, index: int) -> str:
    return pick(draw, rate, PARAGRAPHS, fragment)


folder_file = st.tuples(
    st.one_of(st.sampled_from(["a.md", "b.txt", "sub/c.md"]), st.sampled_from(FILE_NAMES)),
    file_bytes(paragraph_line),
)
SPECIALS = ["fifo", "device", "folder", "broken", "loop"]


# -- the property -------------------------------------------------------------------------------

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def snapshot(path: Path) -> Any:
    """The bytes of a file, or of every file under a folder (links and pipes by what they are)."""
    if path.is_dir() and not path.is_symlink():
        return {str(p.relative_to(path)): snapshot(p) for p in sorted(path.rglob("*")) if p != path}
    if path.is_symlink():
        return ("link", os.readlink(path))
    mode = path.stat().st_mode
    return path.read_bytes() if stat.S_ISREG(mode) else ("special", stat.S_IFMT(mode))


def assert_problems_are_named(problems: list[str], path: Path) -> None:
    assert problems, "an InputError without problems"
    head = re.compile(re.escape(str(path)) + r"(/[^:]*)?(:\d+)?: ")
    for problem in problems:
        assert head.match(problem), problem[:200]
        assert not CONTROL.search(problem), problem[:200]
        assert len(problem) < 1000 + len(str(path)) * 2, problem[:200]


def assert_plain(value: Any, where: str = "result") -> None:
    """Only plain data: valid Unicode strings, finite numbers, ids a TREC column can hold."""
    if isinstance(value, str):
        value.encode("utf-8")  # no lone surrogate
    elif isinstance(value, float):
        assert math.isfinite(value), where
    elif isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, int):
        assert -(2**63) <= value < 2**63, where
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            assert_plain(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            assert_plain(key, f"{where} key")
            assert_plain(item, f"{where}.{key}")
    elif is_dataclass(value):
        for f in fields(value):
            assert_plain(getattr(value, f.name), f"{where}.{f.name}")
    else:
        raise AssertionError(f"{where}: {type(value).__name__} is not plain data")
    if isinstance(value, (Doc, Query)):
        ident = value.doc_id if isinstance(value, Doc) else value.query_id
        assert id_problem(ident) is None, ident


def check(reader: Callable[[Path], Any], path: Path) -> Any:
    """Run `reader` on `path` under the property; the data it returned, or None."""
    before = snapshot(path)
    with alarm(20):
        try:
            result = reader(path)
        except InputError as exc:
            assert_problems_are_named(exc.problems, path)
            result = None
    if currently_in_test_context():
        event("refused" if result is None else "read")
    assert snapshot(path) == before, "the reader changed its input"
    if result is not None:
        assert_plain(result)
    return result


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Fail instead of hanging (a reader that waits on a pipe would wait forever)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the reader was still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def write_bytes(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- the readers, fuzzed ------------------------------------------------------------------------


@FUZZ
@given(data=file_bytes(qrels_line))
@example(data=b"q1 0 d1 \xef\xbc\x93\nq1 0 d2 +1\n")  # fullwidth 3, +1
@example(data=b"q1 0 d1 1\nq1\x1b[31m 0 d2 1\n")
@example(data=b"q1 0 d1 " + DIGITS.encode() + b"\n")
@example(data=b"\xef\xbb\xbf\xef\xbb\xbfq1\tq1\td0\t-3")  # found: a 2nd BOM began the qid
def test_fuzz_read_qrels(tmp_path, data):
    path = write_bytes(tmp_path, "fuzz.qrels", data)
    qrels = check(read_qrels, path)
    if qrels is not None:  # what reads, writes and reads back the same
        write_qrels(tmp_path / "back.qrels", qrels)
        assert read_qrels(tmp_path / "back.qrels") == qrels


@FUZZ
@given(data=file_bytes(run_line))
@example(data=b"q1 Q0 d1 1 1e400 t\nq1 Q0 d2 2 inf t\n")
@example(data="q1 Q0 d1 \uff11 1 t\nq1 Q0 d2 1 \u0663 t\n".encode())
@example(data=b"q1 Q0 d1 1 1 t\x00\n")
def test_fuzz_read_run(tmp_path, data):
    path = write_bytes(tmp_path, "fuzz.run", data)
    run = check(read_run, path)
    if run is not None:
        write_run(tmp_path / "back.run", run)
        assert read_run(tmp_path / "back.run").scores == run.scores


@FUZZ
@given(data=file_bytes(corpus_line))
@example(data=RAW_JSON[0].encode())  # nested 100,000 deep
@example(data=RAW_JSON[1].encode())  # a 5,000-digit _id
@example(data=RAW_JSON[2].encode())  # "\ud800" in text
def test_fuzz_read_corpus(tmp_path, data):
    path = write_bytes(tmp_path, "corpus.jsonl", data)
    docs = check(read_corpus, path)
    if docs is not None:
        assert all(isinstance(doc, Doc) for doc in docs)


@FUZZ
@given(data=file_bytes(queries_line))
@example(data=b'{"_id": "q1", "text": "t", "narrative": "\\ud800"}\n')
@example(data=b'{"_id": "q1", "text": "t", "metadata": {"narrative": "\\udc80"}}\n')
def test_fuzz_read_queries(tmp_path, data):
    path = write_bytes(tmp_path, "queries.jsonl", data)
    queries = check(read_queries, path)
    if queries is not None:
        assert all(isinstance(query, Query) for query in queries)


GOLDEN_REGRESSIONS = [
    b"schema: workbench-golden\nversion: " + DIGITS.encode() + b"\nqueries: []\n",
    b"schema: workbench-golden\nversion: 1\ncoverage: {queries: {q1: {est_rel: .nan}}}\n"
    b"queries: []\n",
    b"schema: workbench-golden\nversion: 1\ncoverage: {x: 0b_, y: 2024-13-45}\nqueries: []\n",
    b"schema: workbench-golden\nversion: 1\ncoverage: {<<: {a: 1}}\nqueries: []\n",
    b"schema: workbench-golden\nversion: 1\ncoverage: " + b"{a: " * 900 + b"}" * 900 + b"\n",
    b"schema: workbench-golden\nversion: 1\nqueries:\n  - {id: q, text: t, judgments: "
    b"[{doc: d, grade: \xef\xbc\x93}]}\n",
]


@FUZZ
@given(data=golden_yaml())
@example(data=GOLDEN_REGRESSIONS[0])
@example(data=GOLDEN_REGRESSIONS[1])
@example(data=GOLDEN_REGRESSIONS[2])
@example(data=GOLDEN_REGRESSIONS[3])
@example(data=GOLDEN_REGRESSIONS[4])
@example(data=GOLDEN_REGRESSIONS[5])
def test_fuzz_read_golden(tmp_path, data):
    path = write_bytes(tmp_path, "golden.yaml", data)
    golden = check(read_golden, path)
    if golden is not None:
        assert isinstance(golden, Golden)
        back = tmp_path / "back.yaml"
        back.write_text(golden_text(golden))
        assert read_golden(back) == golden


@FUZZ
@given(
    files=st.lists(folder_file, max_size=4, unique_by=lambda f: f[0]),
    specials=st.lists(st.sampled_from(SPECIALS), max_size=2, unique=True),
)
@example(files=[("My Notes [draft].md", b"text\n"), ("a#b.md", b"x\n")], specials=[])
@example(files=[("esc\x1b[31m.md", b"\xff\n")], specials=["fifo", "device"])
def test_fuzz_read_text_folder(tmp_path_factory, files, specials):
    root = tmp_path_factory.mktemp("folder")
    for name, data in files:
        target = root / name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except (OSError, UnicodeEncodeError):  # a name this file system refuses
            continue
    make_specials(root, specials)
    docs = check(read_text_folder, root)
    if docs is not None:
        assert len({doc.doc_id for doc in docs}) == len(docs)  # ids never collide


def make_specials(root: Path, specials: list[str]) -> None:
    for special in specials:
        if special == "fifo":
            os.mkfifo(root / "fifo.md")
        elif special == "device":
            (root / "zero.md").symlink_to("/dev/zero")
        elif special == "folder":
            (root / "folder.md").mkdir()
        elif special == "broken":
            (root / "broken.md").symlink_to(root / "nowhere")
        elif special == "loop":
            (root / "loop").symlink_to(root)


# -- what a path can be: every reader, every kind of file ---------------------------------------

READERS: dict[str, Callable[[Path], Any]] = {
    "qrels": read_qrels,
    "run": read_run,
    "corpus": read_corpus,
    "queries": read_queries,
    "golden": read_golden,
    "folder": read_text_folder,
}
FILE_READERS = {name: reader for name, reader in READERS.items() if name != "folder"}


@pytest.mark.parametrize("reader", FILE_READERS.values(), ids=FILE_READERS.keys())
@pytest.mark.parametrize("kind", ["folder", "fifo", "link to fifo", "missing"])
def test_only_regular_files_are_read_and_nothing_waits(tmp_path, reader, kind):
    path = tmp_path / "input"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to fifo":
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    with alarm(10), pytest.raises(InputError) as info:
        reader(path)
    [problem] = info.value.problems
    assert problem.startswith(f"{path}: ")
    expected = {"folder": "is a folder", "missing": "no such file"}.get(kind, "not a regular file")
    assert expected in problem


def test_a_device_is_refused_not_read(tmp_path):
    """Reading /dev/zero never ends (and no signal stops it): run in a child whose memory and
    time are bounded, so a regression fails this test instead of exhausting the machine."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from workbench.core.errors import InputError\n"
        "from workbench import formats\n"
        "for name in ('read_qrels', 'read_run', 'read_corpus', 'read_queries', 'read_golden'):\n"
        "    for path in ('/dev/zero', '/dev/null'):\n"
        "        try:\n"
        "            getattr(formats, name)(path)\n"
        "        except InputError as exc:\n"
        "            print(name, exc.problems)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 10
    for line, path in zip(lines, ["/dev/zero", "/dev/null"] * 5, strict=True):
        assert f"['{path}: not a regular file (a pipe or a device is not read)']" in line


HOSTILE_FILES = {
    "empty": b"",
    "only comments": b"# one\n# two\n",
    "only blank lines": b"\n \n\t\n\r\n",
    "NUL bytes": b"\x00" * 64,
    "BOM only": b"\xef\xbb\xbf",
    "two BOMs": b"\xef\xbb\xbf\xef\xbb\xbfq1 0 d1 1\n",
    "not UTF-8": b"q1 0 caf\xe9 1\n",
    "encoded surrogate": b"q1 0 d\xed\xa0\x80 1\n",
    "huge line": HUGE.encode(),
    "lone CR lines": b"q1 0 d1 1\rq1 0 d2 1\r",
    "escape sequences": b"\x1b[2J\x1b]0;title\x07\x9b31m\n",
}


@pytest.mark.parametrize("reader", FILE_READERS.values(), ids=FILE_READERS.keys())
@pytest.mark.parametrize("data", HOSTILE_FILES.values(), ids=HOSTILE_FILES.keys())
def test_every_reader_on_every_hostile_file(tmp_path, reader, data):
    check(reader, write_bytes(tmp_path, "input.yaml", data))
    check(reader, write_bytes(tmp_path, "input.jsonl", data))


def test_a_folder_of_only_specials_and_hidden_files_is_a_problem_not_a_wait(tmp_path):
    make_specials(tmp_path, SPECIALS)
    (tmp_path / ".hidden.md").write_text("hidden\n")
    with alarm(10), pytest.raises(InputError) as info:
        read_text_folder(tmp_path)
    assert info.value.problems == [f"{tmp_path}: no passages (no non-empty .txt or .md files)"]


def test_a_problem_quoting_an_escape_sequence_cannot_act_on_the_terminal(tmp_path):
    path = write_bytes(tmp_path, "esc.run", b"q1 Q0 d1 \x1b]0;pwned\x07 1 t\n")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert "\x1b" not in info.value.problems[0] and "pwned" in info.value.problems[0]
    named = tmp_path / "bad\x1b[31mname.run"
    with pytest.raises(InputError) as info:
        read_run(named)
    assert info.value.problems == [f"{tmp_path}/bad\u241b[31mname.run: no such file"]


def test_writers_refuse_what_the_readers_would_not_read_back(tmp_path):
    run = Run(name="t", scores={"q1": {"d\x1b": 1.0}})
    with pytest.raises(InputError):
        write_run(tmp_path / "r.run", run)
    with pytest.raises(InputError):
        write_qrels(tmp_path / "q.txt", {"#q": {"d": 1}})
    assert list(tmp_path.iterdir()) == []
