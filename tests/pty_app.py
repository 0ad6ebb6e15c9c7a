"""Drive a real `workbench judge` process under a pseudo-terminal: send keys, read the screen."""

from __future__ import annotations

import codecs
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ANSI = re.compile(
    rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)"
)
"""CSI, OSC, DCS-like and two-byte escape sequences: what is left is the drawn text."""


class PtyApp:
    """A child process on a pty; `text` is everything it drew, escape sequences removed."""

    def __init__(self, args: list[str], cols: int = 120, rows: int = 35, resizable: bool = False):
        """`resizable`: the size comes from the pty alone (not also COLUMNS and LINES, which
        would win over it), so `resize` reaches the app."""
        env = dict(os.environ, TERM="xterm-256color", HF_HUB_OFFLINE="1", COLUMNS=str(cols))
        env["LINES"] = str(rows)
        if resizable:
            del env["COLUMNS"], env["LINES"]
        env.pop("TEXTUAL", None)
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: a terminal of the given size, then the app
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            os.chdir(REPO)
            os.execve(sys.executable, [sys.executable, "-m", "workbench", *args], env)
        self.pid, self.fd = pid, fd
        self.raw = bytearray()
        self.text = ""
        self._pending = b""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.exit_status: int | None = None

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child is gone
            chunk = b""
        if chunk:
            self.raw += chunk
            data = self._pending + chunk
            cut = data.rfind(b"\x1b")  # an escape sequence may continue in the next chunk
            if cut < 0 or len(data) - cut > 256:
                cut = len(data)
            self._pending = data[cut:]
            self.text += self._decoder.decode(ANSI.sub(b"", data[:cut]))

    def wait_for(self, needle: str, timeout: float = 15.0, start: int = 0) -> int:
        """Read until `needle` appears at or after `start` in the drawn text; its end offset."""
        deadline = time.perf_counter() + timeout
        while True:
            found = self.text.find(needle, start)
            if found >= 0:
                return found + len(needle)
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                tail = self.text[-2000:]
                raise AssertionError(f"{needle!r} not drawn in {timeout}s; screen tail:\n{tail}")
            self._pump(min(remaining, 0.05))

    def resize(self, cols: int, rows: int) -> None:
        """The window resized: the pty's new size, and SIGWINCH (a `resizable` app only)."""
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        os.kill(self.pid, signal.SIGWINCH)

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def drain(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self._pump(0.01)

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind runs in the app."""
        if self.exit_status is None:
            os.kill(self.pid, signal.SIGKILL)
            self.drain(0.05)
            _, self.exit_status = os.waitpid(self.pid, 0)
            os.close(self.fd)

    def wait_exit(self, timeout: float = 10.0) -> int:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            self._pump(0.02)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_status = status
                before = -1
                while len(self.raw) != before:  # what it wrote last, after the app closed
                    before = len(self.raw)
                    self._pump(0.05)
                self.text += self._decoder.decode(ANSI.sub(b"", self._pending))
                self._pending = b""
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        self.kill()
        raise AssertionError("the app did not exit")
