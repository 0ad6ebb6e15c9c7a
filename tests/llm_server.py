"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for the judge-llm tests:
`behave(prompt, nth)` says what to send for the nth request carrying a prompt (status,
body, seconds to wait first, extra headers); every request is recorded."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Behaviour = Callable[[str, int], tuple[int, bytes, float, dict]]


def answer(text: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()


class ChatServer:
    def __init__(self, behave: Behaviour):
        self.behave = behave
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                prompt = payload["messages"][0]["content"]
                with server._lock:
                    nth = sum(1 for r in server.requests if r["prompt"] == prompt)
                    server.requests.append({"prompt": prompt, "path": self.path, **payload})
                    server.headers.append(dict(self.headers))
                status, body, delay, extra = server.behave(prompt, nth)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (a timeout)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()
