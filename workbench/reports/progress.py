"""Progress of long stages on stderr, as people expect it from a command line: on a terminal
a bar with count, rate and time left, redrawn in place; in a log (not a terminal) a line when
a stage ends and, for a long one, a line every half minute, so a log shows work going on.

A stage reports `progress(stage, done, total)` (`core.progress.ProgressCallback`); the
command wraps its callable in a `Heartbeat` so that any other silence is said too. A model's
loading is a stage of its own (`loading <model>`, `retrieval.models.loading`): one line with its
time, not a bar."""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from workbench.core.progress import LOADING

LOG_EVERY = 30.0
"""Seconds between a long stage's lines in a log."""
CLEAR_TO_END = "\x1b[K"
"""Erases what a longer line drawn before left on a terminal (never written to a log)."""
REDRAW_EVERY = 0.1
"""Seconds between two redraws of a bar: a stage reporting per query stays cheap."""


def duration(seconds: float) -> str:
    """A short, readable span: 42s, 3m05s, 1h02m."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def rate_and_eta(done: int, total: int, elapsed: float) -> str:
    """'25.3/s, 3m10s left' once the stage has a rate; '' before."""
    if done <= 0 or elapsed <= 0:
        return ""
    rate = done / elapsed
    shown = f"{rate:,.0f}/s" if rate >= 100 else f"{rate:.1f}/s"
    if total and done < total:
        return f"{shown}, {duration((total - done) / rate)} left"
    return shown


def fit(line: str, stream: TextIO) -> str:
    """The line cut to the terminal's width: a wrapped line is not redrawn in place (the
    carriage return reaches only its last row), so copies would pile up."""
    import os

    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return line
    if columns <= 0:  # a pty whose size was never set says 0: its width is unknown
        return line
    return line if len(line) < columns else line[: max(columns - 2, 1)] + "…"


class StageProgress:
    """One line per stage on stderr: a bar with count, rate and time left redrawn in place on
    a terminal; in a log, a line every `log_every` seconds of a long stage and one when it
    ends (logs stay short)."""

    def __init__(
        self,
        stream: TextIO | None = None,
        width: int = 30,
        clock: Callable[[], float] = time.monotonic,
        log_every: float = LOG_EVERY,
    ):
        self.stream = stream or sys.stderr
        self.width = width
        self.clock = clock
        self.log_every = log_every
        self.live = self.stream.isatty()
        self.started: dict[str, float] = {}
        self.first: dict[str, tuple[float, int]] = {}
        """Each stage's first report: the rate is taken from there once a second one comes, so
        a model's loading (before the first report) does not slow the rate or stretch the
        time left."""
        self.finished: set[str] = set()
        self.last_line = 0.0
        self.last_finish = clock()
        """A stage's clock starts when the previous one ended: its first report may come only
        after a model has loaded, and that wait belongs to it."""

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage.startswith(LOADING):
            self._loading(stage, done >= total)
            return
        start = self.started.setdefault(stage, self.last_finish)
        if stage in self.finished and done < total:
            self.finished.discard(stage)
            self.started[stage] = start = self.clock()
            self.first.pop(stage, None)
        complete = total > 0 and done >= total
        if complete and stage in self.finished:
            return
        now = self.clock()
        elapsed = now - start
        new = stage not in self.first  # its first report is drawn at once: the bar shows
        first_at, first_done = self.first.setdefault(stage, (now, done))
        opening = total > 0 and first_done * 100 < total  # a report at the stage's start
        if done > first_done and now > first_at:
            pace = rate_and_eta(done - first_done, total - first_done, now - first_at)
        elif opening:
            pace = ""  # no rate yet: the wait before the start report says nothing of it
        else:
            pace = rate_and_eta(done, total, elapsed)
        if complete and opening and not self.live:  # the log's time and rate agree
            elapsed = now - first_at
            pace = rate_and_eta(done, total, elapsed)
        if self.live:
            if complete or new or now - self.last_line >= REDRAW_EVERY:
                filled = int(self.width * min(done, total) / total) if total else 0
                bar = "#" * filled + "." * (self.width - filled)
                tail = f" {pace}" if pace and not complete else ""
                end = "\n" if complete else ""
                line = f"{stage:<14} [{bar}] {done:,}/{total:,} {duration(elapsed)}{tail}"
                self.stream.write(f"\r{fit(line, self.stream)}{CLEAR_TO_END}{end}")
                self.stream.flush()
                self.last_line = now
        elif complete:
            rate = f" ({pace})" if pace else ""
            self.stream.write(f"{stage:<14} {done:,}/{total:,} in {elapsed:.1f}s{rate}\n")
            self.stream.flush()
        elif elapsed >= self.log_every and now - max(self.last_line, start) >= self.log_every:
            self.stream.write(f"{stage:<14} {done:,}/{total:,} after {duration(elapsed)}"
                              f"{f' ({pace})' if pace else ''}\n")
            self.stream.flush()
            self.last_line = now
        if complete:
            self.finished.add(stage)
            self.last_finish = now

    def _loading(self, stage: str, complete: bool) -> None:
        """`loading <model> ... 2s` redrawn on a terminal while it loads (a line every
        `log_every` seconds in a log); `loading <model> ... 3.1s` once loaded. Its clock starts
        at its own first report: what ran before is no part of the load."""
        now = self.clock()
        new = not complete and (stage in self.finished or stage not in self.started)
        if new:  # drawn at once, however recent the last line
            self.finished.discard(stage)
            self.started[stage] = now
        if complete and stage in self.finished:
            return
        start = self.started.setdefault(stage, now)
        elapsed = now - start
        if complete:
            line = f"{stage} ... {elapsed:.1f}s"
            if self.live:
                line = f"\r{fit(line, self.stream)}{CLEAR_TO_END}"
            self.stream.write(line + "\n")
            self.last_line = now
            self.finished.add(stage)
            self.last_finish = now
        elif self.live and (new or now - self.last_line >= REDRAW_EVERY):
            line = f"{stage} ... {duration(elapsed)}"
            self.stream.write(f"\r{fit(line, self.stream)}{CLEAR_TO_END}")
            self.last_line = now
        elif not self.live and elapsed >= self.log_every and now - max(
            self.last_line, start
        ) >= self.log_every:
            self.stream.write(f"{stage} ... {duration(elapsed)} so far\n")
            self.last_line = now
        else:
            return
        self.stream.flush()


class Heartbeat:
    """Wraps a stage progress callable so that silence is said too: while a stage is under
    way it redraws that stage every few seconds (its clock and time left move on a terminal, a
    log gets its half-minute line though a chunk takes long); between stages (inputs being
    read, a model loading, torch importing) it says that work goes on and for how long."""

    def __init__(
        self,
        progress: Callable[[str, int, int], None],
        stream: TextIO | None = None,
        every: float | None = None,
    ):
        self.progress = progress
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.every = every or (1.0 if self.live else LOG_EVERY)
        self.started = self.last = time.monotonic()
        self.what = "reading the inputs, loading models"
        self.current: tuple[str, int, int] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            self.last = time.monotonic()
            if total and done >= total:
                self.current = None
                done_what = (f"{stage.removeprefix(LOADING)} loaded" if stage.startswith(LOADING)
                             else f"{stage} done")  # fmt: skip
                self.what = f"{done_what}; next stage starting"
            else:
                self.current = (stage, done, total)
            self.progress(stage, done, total)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                now = time.monotonic()
                if now - self.last < self.every:
                    continue
                if self.current is not None:
                    self.progress(*self.current)
                    continue
                line = f"{self.what} ... {duration(now - self.started)} in all"
                self.stream.write(
                    f"\r{fit(line, self.stream)}{CLEAR_TO_END}" if self.live else line + "\n"
                )
                self.stream.flush()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.live:
            self.stream.write(f"\r{CLEAR_TO_END}")
