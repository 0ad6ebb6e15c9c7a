"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for the judge-llm tests:
`behave(prompt, nth)` says what to send for the nth request carrying a prompt (status,
body, seconds to wait first, extra headers); every request is recorded. A body may be a
`Stream` (hostile servers: endless, huge, dripping); `ChatServer.request_headers()` gives the
headers of the request being answered (a server that echoes them)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Stream:
    """A body sent a piece at a time, `pause` seconds apart: chunked (no length), or with a
    Content-Length of `length` (None: none, the end of the body is the connection's)."""

    pieces: Iterable[bytes]
    pause: float = 0.0
    chunked: bool = True
    length: int | None = None


Behaviour = Callable[[str, int], tuple[int, bytes | Stream, float, dict]]


def endless(piece: bytes = b" " * 65536) -> Iterable[bytes]:
    """A body that never ends (whitespace a JSON parser would skip)."""
    while True:
        yield piece


def drip(body: bytes) -> Iterable[bytes]:
    """A body one byte at a time."""
    return (body[i : i + 1] for i in range(len(body)))


def answer(text: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()


class ChatServer:
    def __init__(self, behave: Behaviour):
        self.behave = behave
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self.sent = 0
        """Bytes of body sent, over every request."""
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
                server._local.headers = dict(self.headers)
                status, body, delay, extra = server.behave(prompt, nth)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    if isinstance(body, Stream):
                        self._stream(body)
                        return
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (a timeout, a reply too large)

            def _stream(self, body: Stream) -> None:
                if body.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                elif body.length is not None:
                    self.send_header("Content-Length", str(body.length))
                self.close_connection = True
                self.end_headers()
                for piece in body.pieces:
                    frame = b"%x\r\n%s\r\n" % (len(piece), piece) if body.chunked else piece
                    self.wfile.write(frame)
                    self.wfile.flush()
                    with server._lock:
                        server.sent += len(piece)
                    time.sleep(body.pause)
                if body.chunked:
                    self.wfile.write(b"0\r\n\r\n")

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def request_headers(self) -> dict:
        """The headers of the request `behave` is answering (in its own thread)."""
        return self._local.headers

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()
