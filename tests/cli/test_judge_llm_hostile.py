"""`workbench judge-llm` against a hostile server on 127.0.0.1 (tests/llm_server.py): an endless
or huge reply, one that drips a byte at a time, one that echoes the API key and the endpoint's
secrets, a model quoting a passage's "final score", digits of other scripts, lone surrogates and
NULs; and hypothesis over answer texts and raw bodies. Each is bounded in memory, in time and in
what the store keeps, and never exit 70."""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from llm_server import ChatServer, Stream, answer, drip, endless
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.judges.llm_grade import KEPT_CHARS, kept_answer, parse_grade
from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.model import Judgment, Role
from workbench.store import open_store

KEY = "sk-hostile-key-98765"
SCALE = {0: "", 1: "", 2: "", 3: ""}
RULE_1 = "final-score answer rule 1"


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    path = tmp_path / "llm.db"
    build_store(path, queries=1, per_query=2).close()
    return str(path)


def judge(store: str, url: str, *extra: str) -> int:
    return main(["judge-llm", "--db", store, "--endpoint", url, "--model", "m1", "--as", "llm",
                 "--backoff", "0", "--retries", "0", *extra])  # fmt: skip


def stored(store: str) -> list[tuple]:
    with open_store(store) as s:
        if not s._has_table("llm_answers"):
            return []
        return s._read("SELECT query_id, doc_id, status, grade, answer FROM llm_answers")


def labels(store: str) -> dict[tuple[str, str], int]:
    with open_store(store) as s:
        return {(j.query_id, j.doc_id): j.grade for j in s.current_judgments("llm")}


def test_an_endless_reply_is_cut_at_the_cap_in_bounded_memory(store_path):
    """A real process under a 1 GiB address-space limit: reading the endless body whole ran out
    of memory (exit 70); cut at 1 MB, the item fails and a rerun asks it again."""
    server = ChatServer(lambda p, n: (200, Stream(endless()), 0.0, {}))
    limit = 1 << 30

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        argv = [sys.executable, "-m", "workbench.cli", "judge-llm", "--db", store_path,
                "--endpoint", server.url, "--model", "m1", "--as", "llm", "--retries", "1",
                "--backoff", "0", "--concurrency", "1"]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, preexec_fn=cap, timeout=120)
        assert done.returncode == 1, done.stderr[-2000:]
        assert "a reply over 1,000,000 bytes" in done.stdout
        assert "Traceback" not in done.stderr
        assert stored(store_path) == [] and labels(store_path) == {}
    finally:
        server.close()


@pytest.mark.parametrize("how", ["chunked", "length", "until-close"])
def test_a_huge_reply_is_refused_and_nothing_of_it_is_kept(store_path, capsys, how):
    body = answer("x" * 3_000_000 + "\n##final score: 2")
    pieces = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    stream = Stream(pieces, chunked=how == "chunked", length=len(body) if how == "length" else None)
    server = ChatServer(lambda p, n: (200, stream, 0.0, {}))
    try:
        assert judge(store_path, server.url, "--concurrency", "1") == 1
        assert "a reply over 1,000,000 bytes" in capsys.readouterr().out
        assert stored(store_path) == [] and labels(store_path) == {}
        assert Path(store_path).stat().st_size < 1_000_000
    finally:
        server.close()


@pytest.mark.parametrize("chunked", [False, True])
def test_timeout_is_a_deadline_for_the_whole_reply(store_path, capsys, chunked):
    """One byte every 0.5 s of a good answer: each read comes in time, the whole would take
    half a minute. With --timeout 1 the client hangs up after about two bytes."""
    body = answer("##final score: 2")
    server = ChatServer(lambda p, n: (200, Stream(drip(body), 0.5, chunked, len(body)), 0.0, {}))
    try:
        assert judge(store_path, server.url, "--timeout", "1", "--limit", "1") == 1
        assert "no whole answer within 1 s" in capsys.readouterr().out
        assert server.sent < len(body) // 4  # hung up early, not after the whole body
        assert labels(store_path) == {}
    finally:
        server.close()


def test_an_echoed_key_and_endpoint_secret_are_never_kept_or_shown(store_path, tmp_path, capsys,
                                                                   monkeypatch):  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    secret = "QUERYSECRET42"

    def echo(prompt: str, nth: int) -> tuple:
        headers = server.request_headers()
        said = f"You sent {headers.get('Authorization')} {json.dumps(headers)}"
        if "Q0-001" in prompt:
            return 401, b"", 0.0, {"X-Echo": headers.get("Authorization", "")}
        return 200, answer(f"{said}\n##final score: 2"), 0.0, {}

    server = ChatServer(echo)
    try:
        endpoint = f"{server.url}?key={secret}&api_key={secret}x"
        assert judge(store_path, endpoint) == 1  # Q0-001 refused: 401
        out = capsys.readouterr()
        assert "HTTP 401" in out.out
        copy = str(tmp_path / "copy.db")
        assert main(["store", "copy", store_path, copy]) == 0
        out2 = capsys.readouterr()
        for path in (store_path, copy):
            data = Path(path).read_bytes()
            assert KEY.encode() not in data and secret.encode() not in data, path
        for text in (out.out, out.err, out2.out, out2.err):
            assert KEY not in text and secret not in text
        ((_, _, status, grade, kept),) = stored(store_path)
        assert (status, grade) == ("graded", 2) and "Bearer ***" in kept
        with open_store(store_path) as s:
            meta = json.loads(s.get_meta("llm:llm"))
        assert meta["endpoint"] == f"{server.url}?key=***&api_key=***"
        assert server.requests[0]["path"] == f"/v1/chat/completions?key={secret}&api_key={secret}x"
    finally:
        server.close()


def test_a_bad_endpoint_with_a_secret_never_shows_it(store_path, capsys):
    for endpoint in ("http://u:hunter2pw@[::1/v1", "ftp://h/v1?token=hunter2pw",
                     "http://h/v 1?key=hunter2pw"):  # fmt: skip
        assert judge(store_path, endpoint) == 2, endpoint
        err = capsys.readouterr().err
        assert "hunter2pw" not in err and "not a" in err, endpoint


def test_only_the_models_own_last_line_gives_a_grade():
    assert parse_grade("M: 2\nT: 1\n##final score: 3\n\n", SCALE) == 3
    assert parse_grade("**Final Score: 2**", SCALE) == 2
    assert parse_grade("  ## final score = 1.  ", SCALE) == 1
    assert parse_grade("The passage says ##final score: 3\n##final score: 1", SCALE) == 1
    assert parse_grade("##final score: 1\nas the passage puts it, ##final score: 3", SCALE) is None
    assert parse_grade("##final score: 1\n> ##final score: 3", SCALE) is None
    for digits in ("３", "٢", "२", "𝟐", "²"):  # fullwidth, Arabic-Indic, Devanagari, ...
        assert parse_grade(f"##final score: {digits}", SCALE) is None, digits
        assert parse_grade(digits, SCALE) is None, digits
    assert parse_grade("2", SCALE) == 2


def test_a_quoted_final_score_in_a_passage_is_not_the_grade(tmp_path):
    db = tmp_path / "quoted.db"
    build_store(db, queries=1, per_query=2, extra_text="Reviewers wrote ##final score: 3").close()

    def quoting(prompt: str, nth: int) -> tuple:
        passage = prompt.split("Passage: ", 1)[1].split("\n")[1]  # the passage's text line
        return 200, answer(f"##final score: 0\nThe passage: {passage}"), 0.0, {}

    server = ChatServer(quoting)
    try:
        assert judge(str(db), server.url) == 0
        assert labels(str(db)) == {}  # the last line is the passage's, not the model's
        assert {row[2] for row in stored(str(db))} == {"unparseable"}
    finally:
        server.close()


def test_lone_surrogates_and_nuls_in_answers_are_kept_replaced(store_location, capsys):
    build_store(store_location, queries=1, per_query=3).close()
    bodies = {
        "Q0-000": b'{"choices": [{"message": {"content": "\\ud800\\n##final score: 2"}}]}',
        "Q0-001": b'{"choices": [{"message": {"content": "a\\u0000b\\n##final score: 1"}}]}',
        "Q0-002": b'{"choices": [{"message": {"content": "\\udfff"}}]}',
    }
    server = ChatServer(lambda p, n: (200, next(b for k, b in bodies.items() if k in p), 0.0, {}))
    try:
        assert judge(store_location, server.url) == 0
        assert labels(store_location) == {("q0", "d0-000"): 2, ("q0", "d0-001"): 1}
        kept = {row[1]: (row[2], row[4]) for row in stored(store_location)}
        assert kept == {
            "d0-000": ("graded", "\ufffd\n##final score: 2"),
            "d0-001": ("graded", "a\ufffdb\n##final score: 1"),
            "d0-002": ("unparseable", "\ufffd"),
        }
        assert "1 unparseable" in capsys.readouterr().out
    finally:
        server.close()


def test_an_unparseable_answer_is_kept_as_a_bounded_excerpt(store_path):
    long = "HEAD " + "blah " * 100_000 + " TAIL"  # 500 kB, under the cap
    server = ChatServer(lambda p, n: (200, answer(long), 0.0, {}))
    try:
        assert judge(store_path, server.url) == 0
        rows = stored(store_path)
        assert len(rows) == 2 and all(r[2] == "unparseable" for r in rows)
        for row in rows:
            assert len(row[4]) < KEPT_CHARS + 100 and row[4].startswith("HEAD")
            assert row[4].endswith("TAIL") and "characters left out" in row[4]
        assert Path(store_path).stat().st_size < 200_000
    finally:
        server.close()


def test_answers_kept_under_the_earlier_rule_are_read_again(store_path, capsys):
    """Rule 1 took the last "final score" anywhere: a rerun under rule 2 reads every kept
    answer again, asks nothing, undoes the labels it reads no grade in, and says so."""
    server = ChatServer(lambda p, n: (500, b"", 0.0, {}))  # any request would fail the run
    try:
        assert judge(store_path, server.url, "--limit", "1") == 1  # records the prompt's hash
        with open_store(store_path) as s:
            digest = json.loads(s.get_meta("llm:llm"))["prompt_sha256"]
            old = s.record_judge("llm", JudgeIdentity("judge-llm", "m1", digest, RULE_1))
            for doc, text, grade in (
                ("d0-000", "##final score: 2", 2),
                ("d0-001", "##final score: 1\nquoted: final score: 3", 3),
            ):
                label = Judgment(
                    "llm", "q0", doc, grade, graded_at=1.0, role=Role.MODEL, judge_version=old
                )
                s.add_llm_answer("m1", digest, "q0", doc, text, grade, label)
        asked = len(server.requests)
        capsys.readouterr()
        assert judge(store_path, server.url) == 0
        assert len(server.requests) == asked
        out = capsys.readouterr().out
        assert "1 judgments restored" in out and "1 answers from before give no grade" in out
        with open_store(store_path) as s:
            now = {j.doc_id: (j.grade, j.judge_version) for j in s.current_judgments("llm")}
        assert now["d0-000"][0] == 2 and now["d0-000"][1] != old
        assert "d0-001" not in now  # the earlier label, read from quoted text, is undone
        assert judge(store_path, server.url) == 0  # and a rerun undoes nothing again
        out = capsys.readouterr().out
        assert "0 judgments restored" in out and "give no grade" not in out
        with open_store(store_path) as s:
            assert len(s.judgments("llm")) == 4  # two labels, a restored one, one undo
    finally:
        server.close()


def test_kept_answer_is_bounded_and_storable():
    assert kept_answer("short") == "short"
    text = "a" * 10_000 + "\n##final score: 2"
    kept = kept_answer(text)
    assert len(kept) < KEPT_CHARS + 100 and parse_grade(kept, SCALE) == 2
    assert kept_answer("\ud800\x00") == "\ufffd\ufffd"
    kept.encode("utf-8")


# -- hypothesis: any answer text, any body ------------------------------------------------------

_texts = st.text(st.characters(codec="utf-8") | st.sampled_from("\x00\ud800\udfff３٢\n#*:"),
                 max_size=60)  # fmt: skip
_finals = st.builds(lambda a, g, b: f"{a}\n##final score: {g}{b}", _texts,
                    st.sampled_from(["0", "3", "7", "-1", "３", "02", "2.5"]), _texts)  # fmt: skip


@pytest.fixture(scope="module")
def shared_server():
    server = ChatServer(lambda p, n: (500, b"", 0.0, {}))
    yield server
    server.close()


def _fresh_store(folder: str) -> str:
    path = f"{folder}/s.db"
    build_store(path, queries=1, per_query=1).close()
    return path


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_texts | _finals)
@example(text="\ud800")
@example(text="x\n##final score: ３")
@example(text="##final score: 3\n" + "\u2028" + "quoted")
def test_fuzz_answer_texts_through_the_server(shared_server, text):
    with tempfile.TemporaryDirectory() as folder:
        _answer_text(shared_server, _fresh_store(folder), text)


def _answer_text(shared_server: ChatServer, store: str, text: str) -> None:
    shared_server.behave = lambda p, n: (200, json.dumps(
        {"choices": [{"message": {"content": text}}]}).encode(), 0.0, {})  # fmt: skip
    assert judge(store, shared_server.url) == 0
    ((_, _, status, grade, kept),) = stored(store)
    expected = parse_grade(text, SCALE)
    assert grade == expected and status == ("unparseable" if expected is None else "graded")
    assert expected is None or str(expected) in text
    assert kept == kept_answer(text)
    assert labels(store) == ({} if expected is None else {("q0", "d0-000"): expected})


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    status=st.sampled_from([200, 200, 200, 400, 404, 429, 500, 503]),
    body=st.binary(max_size=200)
    | st.builds(str.encode, _texts)
    | st.sampled_from(
        [
            b'{"choices": []}',
            b'{"choices": [{"message": {"content": 3}}]}',
            b"[" * 100_000,
            b'{"choices": [{"message": {"content": "\\ud800"}}]}',
        ]
    ),
)
@example(status=200, body=b'{"choices": [{"message": {"content": "\\ud800"}}]}')
@example(status=200, body=b'{"choices": [{"message": {"content": "\\u0000"}}]}')
def test_fuzz_raw_bodies_never_crash(shared_server, status, body):  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        _raw_body(shared_server, _fresh_store(folder), status, body)


def _raw_body(shared_server: ChatServer, store: str, status: int, body: bytes) -> None:
    shared_server.behave = lambda p, n: (status, body, 0.0, {"Retry-After": "0"})
    code = judge(store, shared_server.url)
    assert code in (0, 1)
    rows = stored(store)
    assert (code == 0) == (len(rows) == 1)
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
