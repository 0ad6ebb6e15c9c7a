"""A real `workbench serve` process and a real browser (Debian's chromium, driven by
playwright) on 127.0.0.1: what the served-app tests and `bench/serve_latency.py` stand on.

The page's websocket stream is the app's terminal output: an init script keeps it as text
(escape sequences removed, as `pty_app` does), so a test waits for a passage's title to reach
the browser, and the bench times a grade key to it in the page's own clock."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

WATCH_STREAM = r"""
(() => {
  const state = {text: "", at: []};
  window.__wb = state;
  const decoder = new TextDecoder();
  const ansi = /\x1b(?:\[[0-?]*[ -\/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)/g;
  let pending = "";
  const Native = window.WebSocket;
  function Watched(...args) {
    const socket = new Native(...args);
    state.sockets = (state.sockets || 0) + 1;
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") return;
      let data = pending + decoder.decode(event.data, {stream: true});
      const cut = data.lastIndexOf("\x1b");
      pending = cut >= 0 && data.length - cut < 64 ? data.slice(cut) : "";
      if (pending) data = data.slice(0, cut);
      state.text += data.replace(ansi, "");
      state.at.push([performance.now(), state.text.length]);
    });
    return socket;
  }
  Watched.prototype = Native.prototype;
  Object.assign(Watched, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = Watched;
  state.keyAt = 0;
  window.addEventListener("keydown", () => { state.keyAt = performance.now(); }, true);
  state.next = (prefix, pattern, current, from) => {
    // the first passage title after `from` that is not `current` (the next passage drawn)
    const re = new RegExp(pattern, "g");
    re.lastIndex = from;
    let match;
    while ((match = re.exec(state.text)) !== null) {
      if (match[0] !== current) {
        const end = match.index + match[0].length;
        const arrived = state.at.find(([, length]) => length >= end);
        return [end, arrived ? arrived[0] : performance.now(), match[0]];
      }
    }
    return null;
  };
  state.find = (needle, from) => {
    const index = state.text.indexOf(needle, from);
    if (index < 0) return null;
    const end = index + needle.length;
    const arrived = state.at.find(([, length]) => length >= end);
    return [end, arrived ? arrived[0] : performance.now()];
  };
})();
"""


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    if not Path(CHROMIUM).exists():
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (the test extra)"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def workbench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m workbench ARGS` in a real process, from this checkout."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=env or served_env(),
        cwd=REPO,
        timeout=120,
    )


def served_env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1"}


def token_url(db: str, annotator: str, port: int, *args: str) -> str:
    """`serve token`'s URL for `annotator` on the server at `port`."""
    done = workbench("serve", "token", "--db", db, "--annotator", annotator,
                     "--url", f"http://127.0.0.1:{port}/", *args)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Server:
    """`workbench serve --db DB --port PORT` as a child process; its log kept in a file."""

    def __init__(self, db: str, port: int, log: Path, *extra: str) -> None:
        self.port = port
        self.log_path = log
        self._log = open(log, "a", encoding="utf-8")  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "workbench", "serve", "--db", db, "--port", str(port), *extra],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=served_env(),
            cwd=REPO,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.log()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"the server did not listen: {self.log()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the server (SIGKILL: it alone, as a crash would) and wait for it."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=20)
        finally:
            self._log.close()
        return code


class Browser:
    """Headless chromium; each `page()` a context of its own (as two people's browsers)."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path=CHROMIUM, headless=True)

    def page(self, width: int = 1280, height: int = 800) -> Any:
        context = self._browser.new_context(viewport={"width": width, "height": height})
        context.add_init_script(WATCH_STREAM)
        return context.new_page()

    def close(self) -> None:
        self._browser.close()
        self._playwright.stop()


def wait_text(page: Any, needle: str, start: int = 0, timeout: float = 30) -> tuple[int, float]:
    """Wait until `needle` reaches the page's terminal after offset `start`: (its end offset,
    when it arrived, in the page's clock, ms)."""
    page.wait_for_function(
        "([n, s]) => window.__wb && window.__wb.find(n, s) !== null",
        arg=[needle, start],
        timeout=timeout * 1000,
        polling=5,
    )
    end, arrived = page.evaluate("([n, s]) => window.__wb.find(n, s)", [needle, start])
    return int(end), float(arrived)


def text_length(page: Any) -> int:
    return int(page.evaluate("window.__wb.text.length"))


def wait_next(page: Any, pattern: str, current: str, start: int, timeout: float = 30) -> tuple:
    """Wait for a title matching `pattern` other than `current` after offset `start`: (its end
    offset, when it arrived in the page's clock (ms), the title)."""
    page.wait_for_function(
        "([p, c, s]) => window.__wb.next('', p, c, s) !== null",
        arg=[pattern, current, start],
        timeout=timeout * 1000,
        polling=2,
    )
    end, arrived, title = page.evaluate("([p, c, s]) => window.__wb.next('', p, c, s)",
                                        [pattern, current, start])  # fmt: skip
    return int(end), float(arrived), str(title)
