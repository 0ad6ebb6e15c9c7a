"""Progress on stderr: a bar with count, rate and time left on a terminal; lines in a log."""

from __future__ import annotations

import io
import time

from workbench.reports.progress import Heartbeat, StageProgress, duration, rate_and_eta


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_durations_and_rates_read_as_people_write_them():
    assert [duration(s) for s in (0, 42.4, 185, 3720)] == ["0s", "42s", "3m05s", "1h02m"]
    assert rate_and_eta(0, 100, 5.0) == ""
    assert rate_and_eta(50, 200, 2.0) == "25.0/s, 6s left"
    assert rate_and_eta(5000, 5000, 2.0) == "2,500/s"


def test_a_terminal_gets_a_bar_with_count_rate_and_time_left():
    clock, out = Clock(), Terminal()
    progress = StageProgress(out, width=10, clock=clock)
    clock.now = 4.0
    progress("dense encode", 100, 400)
    assert out.getvalue().startswith("\rdense encode   [##........] 100/400 4s 25.0/s, 12s left")
    clock.now = 16.0
    progress("dense encode", 400, 400)
    assert out.getvalue().endswith("[##########] 400/400 16s\x1b[K\n")  # a longer line erased


def test_the_rate_starts_at_the_first_report_not_at_a_model_load():
    clock, out = Clock(), Terminal()
    progress = StageProgress(out, width=10, clock=clock)
    clock.now = 60.0  # a minute loading the model, then the first chunk
    progress("dense encode", 100, 1000)
    clock.now = 70.0
    progress("dense encode", 200, 1000)
    assert "200/1,000 1m10s 10.0/s, 1m20s left" in out.getvalue()


def test_a_log_gets_a_line_per_stage_and_one_every_half_minute_of_a_long_one():
    clock, out = Clock(), io.StringIO()
    progress = StageProgress(out, clock=clock, log_every=30)
    for second in range(0, 100, 5):
        clock.now = float(second)
        progress("dense encode", second * 10, 1000)
    clock.now = 100.0
    progress("dense encode", 1000, 1000)
    progress("dense encode", 1000, 1000)  # said once
    lines = out.getvalue().splitlines()
    assert lines == [
        "dense encode   300/1,000 after 30s (10.0/s, 1m10s left)",
        "dense encode   600/1,000 after 1m00s (10.0/s, 40s left)",
        "dense encode   900/1,000 after 1m30s (10.0/s, 10s left)",
        "dense encode   1,000/1,000 in 100.0s (10.0/s)",
    ]


def test_the_heartbeat_says_what_goes_on_while_nothing_reports():
    stream = io.StringIO()
    seen: list[tuple[str, int, int]] = []
    with Heartbeat(lambda *a: seen.append(a), stream, every=0.02) as beat:
        time.sleep(0.1)
        assert "reading the inputs, loading models ..." in stream.getvalue()
        beat("dense encode", 1, 2)
        time.sleep(0.1)  # a slow chunk: the stage is redrawn (its clock moves on)
        assert seen[0] == ("dense encode", 1, 2) and len(seen) > 1
        assert set(seen) == {("dense encode", 1, 2)}
        beat("dense encode", 2, 2)
        time.sleep(0.1)
    assert "dense encode done; next stage starting" in stream.getvalue()


def test_a_start_report_gives_no_rate_and_the_log_time_agrees_with_its_rate():
    """BM25 reports 1 of 3,000 at its start, after the inputs were read: no rate from that wait,
    and the log's "in" time is the stage's own, so time and rate agree."""
    clock, out = Clock(), Terminal()
    progress = StageProgress(out, width=10, clock=clock)
    clock.now = 2.0
    progress("bm25 tokenize", 1, 3000)
    assert "/s" not in out.getvalue()
    clock, log = Clock(), io.StringIO()
    progress = StageProgress(log, clock=clock)
    clock.now = 1.3
    progress("bm25 tokenize", 1, 3000)
    clock.now = 2.3
    progress("bm25 tokenize", 3000, 3000)
    assert log.getvalue() == "bm25 tokenize  3,000/3,000 in 1.0s (3,000/s)\n"


def test_a_bar_is_cut_to_the_terminal_width(monkeypatch):
    import os

    from workbench.reports import progress as module

    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((40, 20)))
    out = Terminal()
    out.fileno = lambda: 2  # type: ignore[method-assign]
    assert len(module.fit("x" * 100, out)) == 39
    assert module.fit("short", out) == "short"
