"""`workbench judge-llm` against a real HTTP server on 127.0.0.1: answers, malformed replies,
answers that are not grades, 429 then success, 500s, a reply past the timeout, a budget, and a
kill then resume that asks nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from llm_server import ChatServer, answer
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.judges.llm_grade import parse_grade, render_prompt
from workbench.store import open_store

KEY = "sk-test-secret-1234"


def grade_of(prompt: str) -> int:
    """The server's grade for a passage: fixed by the passage's text."""
    passage = prompt.split("Passage: ", 1)[1].split("\n", 1)[0]
    return zlib.crc32(passage.encode()) % 4


def good(prompt: str, nth: int) -> tuple[int, bytes, float, dict]:
    return 200, answer(f"##final score: {grade_of(prompt)}"), 0.0, {}


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    path = tmp_path / "llm.db"
    build_store(path, queries=2, per_query=5).close()
    return str(path)


def judge(store_path: str, server: ChatServer, *extra: str) -> int:
    return main(
        [
            "judge-llm", "--db", store_path, "--endpoint", server.url, "--model", "m1",
            "--as", "llm", "--backoff", "0", "--retries", "2", *extra,
        ]
    )  # fmt: skip


def labels(store_path: str) -> dict[tuple[str, str], int]:
    with open_store(store_path) as store:
        return {(j.query_id, j.doc_id): j.grade for j in store.current_judgments("llm")}


def test_grades_every_item_once_and_a_rerun_asks_nothing(store_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ChatServer(good)
    try:
        assert judge(store_path, server) == 0
        assert len(server.requests) == 10
        got = labels(store_path)
        assert len(got) == 10
        for r in server.requests:  # the prompt holds the query, its narrative and the passage
            assert "maize pest number" in r["prompt"] and "Relevant: passages" in r["prompt"]
            assert r["path"] == "/v1/chat/completions" and r["model"] == "m1"
            assert r["temperature"] == 0
        assert all(h["Authorization"] == f"Bearer {KEY}" for h in server.headers)
        with open_store(store_path) as store:
            assert store.annotators()["llm"] == "model"
        assert judge(store_path, server) == 0
        assert len(server.requests) == 10  # every answer came from the store
        out = capsys.readouterr()
        assert KEY not in out.out + out.err
        assert KEY.encode() not in Path(store_path).read_bytes()
    finally:
        server.close()


def test_malformed_and_ungraded_answers_are_never_grades(store_path, capsys):
    def behave(prompt: str, nth: int) -> tuple[int, bytes, float, dict]:
        if "Q0-001" in prompt:
            return 200, b"{not json", 0.0, {}
        if "Q0-002" in prompt:
            return 200, answer("It is somewhat relevant, I would say."), 0.0, {}
        if "Q0-003" in prompt:
            return 200, answer("##final score: 7"), 0.0, {}  # outside the scale
        return good(prompt, nth)

    server = ChatServer(behave)
    try:
        assert judge(store_path, server) == 1  # one failed: asked again next time
        got = labels(store_path)
        assert len(got) == 7 and ("q0", "d0-002") not in got and ("q0", "d0-003") not in got
        with open_store(store_path) as store:
            answers = store.llm_answers("m1", next(iter({a for a in _hashes(store)})))
        assert answers[("q0", "d0-002")] == ("unparseable", None)
        assert ("q0", "d0-001") not in answers
        assert sum(1 for r in server.requests if "Q0-001" in r["prompt"]) == 3  # 1 + 2 retries
        before = len(server.requests)
        server.behave = good
        assert judge(store_path, server) == 0
        assert len(server.requests) == before + 1  # only the failed one is asked again
        assert len(labels(store_path)) == 8
        assert "1 failed" in capsys.readouterr().out
    finally:
        server.close()


def _hashes(store) -> set[str]:  # type: ignore[no-untyped-def]
    import json

    return {json.loads(store.get_meta("llm:llm"))["prompt_sha256"]}


def test_429_then_success_500s_and_a_slow_reply(store_path):
    def behave(prompt: str, nth: int) -> tuple[int, bytes, float, dict]:
        if "Q0-000" in prompt and nth == 0:
            return 429, b'{"error": "slow down"}', 0.0, {"Retry-After": "0"}
        if "Q0-001" in prompt:
            return 500, b"oops", 0.0, {}
        if "Q0-002" in prompt and nth == 0:
            return 200, answer("##final score: 1"), 1.5, {}  # past the 0.5 s timeout
        return good(prompt, nth)

    server = ChatServer(behave)
    try:
        assert judge(store_path, server, "--timeout", "0.5") == 1
        got = labels(store_path)
        assert ("q0", "d0-000") in got and ("q0", "d0-002") in got and ("q0", "d0-001") not in got
        asked = [r["prompt"] for r in server.requests]
        assert sum("Q0-000" in p for p in asked) == 2
        assert sum("Q0-001" in p for p in asked) == 3
        assert sum("Q0-002" in p for p in asked) == 2
    finally:
        server.close()


def test_the_budget_stops_requests_and_a_rerun_goes_on(store_path, capsys):
    server = ChatServer(good)
    try:
        assert judge(store_path, server, "--max-requests", "3", "--concurrency", "1") == 1
        assert len(server.requests) == 3 and len(labels(store_path)) == 3
        assert "7 not asked" in capsys.readouterr().out
        assert judge(store_path, server) == 0
        assert len(server.requests) == 10 and len(labels(store_path)) == 10
    finally:
        server.close()


def test_another_prompt_under_the_same_name_is_refused(store_path, tmp_path, capsys):
    server = ChatServer(good)
    try:
        assert judge(store_path, server, "--limit", "2") == 0
        other = tmp_path / "p.txt"
        other.write_text("Grade 0-3.\nQuery: {query}\nPassage: {passage}\n")
        assert judge(store_path, server, "--prompt", str(other)) == 2
        assert "another judge" in capsys.readouterr().err
        bad = tmp_path / "bad.txt"
        bad.write_text("no placeholders here")
        assert main(["judge-llm", "--db", store_path, "--endpoint", server.url, "--model",
                     "m1", "--as", "llm2", "--prompt", str(bad)]) == 2  # fmt: skip
        assert "lacks {query}, {passage}" in capsys.readouterr().err
    finally:
        server.close()


def test_a_killed_run_resumes_without_asking_again(store_path):
    server = ChatServer(lambda p, n: (200, answer(f"##final score: {grade_of(p)}"), 0.15, {}))
    try:
        args = [
            *(sys.executable, "-m", "workbench.cli", "judge-llm", "--db", store_path),
            *("--endpoint", server.url, "--model", "m1", "--as", "llm", "--concurrency", "1"),
        ]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while len(server.requests) < 5 and time.time() < deadline:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        asked_before = len(server.requests)
        kept = len(labels(store_path))
        assert 3 <= kept <= asked_before
        assert judge(store_path, server) == 0
        assert len(labels(store_path)) == 10
        assert len(server.requests) <= 10 + (asked_before - kept)  # only unanswered ones again
    finally:
        server.close()


def test_reading_a_grade_and_filling_a_template():
    scale = {0: "", 1: "", 2: "", 3: ""}
    assert parse_grade("M: 2\nT: 1\n##final score: 3", scale) == 3
    assert parse_grade("**2**", scale) == 2
    assert parse_grade("##final score: 5", scale) is None
    assert parse_grade("relevant", scale) is None
    assert parse_grade("", scale) is None
    text = render_prompt("Q: {query}\nP: {passage}\nN: {narrative}", "a {passage}", "", "p")
    assert text == "Q: a {passage}\nP: p\nN: (none given)"


def test_an_unreachable_server_stops_the_run_early(store_path, capsys):
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    code = main(["judge-llm", "--db", store_path, "--endpoint", f"http://127.0.0.1:{port}/v1",
                 "--model", "m1", "--as", "llm", "--retries", "1", "--backoff", "0",
                 "--concurrency", "1"])  # fmt: skip
    assert code == 1 and time.monotonic() - started < 10
    out = capsys.readouterr().out
    assert "Stopped: the first" in out and "items failed after every retry" in out
    assert "0 not asked" not in out  # the rest were left for a rerun
    assert labels(store_path) == {}


def test_a_redirect_is_not_followed_with_the_key(store_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    elsewhere = ChatServer(good)
    there = elsewhere.url.rsplit(":", 1)[1].split("/")[0]
    server = ChatServer(
        lambda p, n: (302, b"", 0.0, {"Location": f"http://localhost:{there}/v1/chat/completions"})
    )
    try:
        assert judge(store_path, server, "--limit", "1") == 1
        assert elsewhere.requests == [] and labels(store_path) == {}
    finally:
        server.close()
        elsewhere.close()


def test_broken_endpoints_and_absurd_answers_never_crash(store_path, capsys):
    scale = {0: "", 1: "", 2: "", 3: ""}
    assert parse_grade("##final score: " + "9" * 5000, scale) is None
    assert parse_grade("9" * 5000, scale) is None
    for endpoint in ("http://[::1", "http://h/v 1"):
        code = main(["judge-llm", "--db", store_path, "--endpoint", endpoint, "--model", "m",
                     "--as", "llm"])  # fmt: skip
        assert code == 2, endpoint
    assert "not a usable URL" in capsys.readouterr().err
