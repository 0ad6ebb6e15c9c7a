"""A client for any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp's
server, a hosted API), with what grading a pool needs: a deadline for the whole of each
request (connect, send, every byte of the reply), a cap on a reply's size (read as it comes,
never whole first), retries with backoff on 429 and 5xx (honouring Retry-After), on timeouts
and on a reply that is not the expected JSON, and a request budget shared by every thread. The
API key is sent as a bearer token and never appears in what this returns (nor do the secrets
of the endpoint URL), even when the server echoes them."""

from __future__ import annotations

import functools
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal

MAX_PAUSE_S = 60.0
MAX_REPLY_BYTES = 1_000_000
"""A reply over this is refused while it is read: a grade needs a few bytes."""
_CHUNK = 65536


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error, not followed: following it would send the API key to another
    host."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class _Deadline:
    """One request's time limit, for all of it. A socket timeout bounds each read only, so a
    server sending a byte now and then could hold a request for ever: when the time is up, a
    timer shuts the connection down, which ends whatever read is waiting."""

    def __init__(self, seconds: float):
        self._at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._over = False
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._over = True
            self._sockets.clear()

    def left(self) -> float:
        """Seconds left; TimeoutError when there are none."""
        left = self._at - time.monotonic()
        if left <= 0 or self.expired:
            raise TimeoutError
        return left

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)
                raise TimeoutError

    def _expire(self) -> None:
        with self._lock:
            if self._over:
                return
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    """End the connection under any read waiting on it (the plain socket's shutdown: a TLS
    socket's own would drop its state under the reading thread)."""
    with suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watched:
    """A connection whose connect takes what is left of the deadline, then puts its socket in
    the deadline's watch."""

    def __init__(self, deadline: _Deadline, *args: Any, **kwargs: Any):
        self._deadline = deadline
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]

    def connect(self) -> None:
        self.timeout = self._deadline.left()
        super().connect()  # type: ignore[misc]
        self._deadline.watch(self.sock)  # type: ignore[attr-defined]


class _WatchedHTTP(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, http.client.HTTPSConnection):
    pass


class _Request(urllib.request.Request):
    def __init__(self, deadline: _Deadline, *args: Any, **kwargs: Any):
        self.deadline = deadline
        super().__init__(*args, **kwargs)


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: _Request) -> http.client.HTTPResponse:  # type: ignore[override]
        return self.do_open(functools.partial(_WatchedHTTP, req.deadline), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: _Request) -> http.client.HTTPResponse:  # type: ignore[override]
        return self.do_open(functools.partial(_WatchedHTTPS, req.deadline), req)


_OPENER = urllib.request.build_opener(_NoRedirect, _HTTPHandler, _HTTPSHandler)


class _TooLarge(Exception):
    pass


class BudgetSpent(Exception):
    """The request budget is used up: the item is left for the next run."""


class Budget:
    """At most `limit` requests (None: no limit), counted across threads."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.limit is not None and self.used >= self.limit:
                raise BudgetSpent
            self.used += 1


@dataclass(frozen=True)
class Reply:
    """'answered': `text` is the model's answer; 'failed': why no answer came (after every
    retry); the item is then asked again on the next run."""

    status: Literal["answered", "failed"]
    text: str


def chat_url(endpoint: str) -> str:
    """The chat-completions URL of a base URL such as http://127.0.0.1:8000/v1 (its query, e.g.
    ?key=..., kept after the path)."""
    base, qmark, query = endpoint.partition("?")
    base = base.rstrip("/")
    path = base if base.endswith("/chat/completions") else base + "/chat/completions"
    return path + qmark + query


class ChatClient:
    def __init__(
        self,
        endpoint: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retries: int = 4,
        backoff_s: float = 1.0,
        budget: Budget | None = None,
        max_tokens: int = 100,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = chat_url(endpoint)
        from workbench.core.store_url import mask_url, passwords

        self.shown_url = mask_url(self.url)
        self.model = model
        self._key = api_key
        self._secrets = sorted({api_key, *passwords(self.url)} - {None, ""}, key=len, reverse=True)
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.budget = budget or Budget(None)
        self.max_tokens = max_tokens
        self._sleep = sleep

    def _clean(self, text: str) -> str:
        """Text safe to show and keep: the key and the endpoint's secrets, were a server to
        echo them, masked."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _post(self, body: bytes, headers: dict[str, str]) -> bytes:
        """The reply's body; TimeoutError when the whole exchange took longer than the
        timeout, _TooLarge past MAX_REPLY_BYTES."""
        with _Deadline(self.timeout_s) as deadline:
            request = _Request(deadline, self.url, data=body, headers=headers, method="POST")
            try:
                with _OPENER.open(request, timeout=deadline.left()) as response:
                    raw = _read_capped(response)
            except urllib.error.HTTPError:
                raise
            except (OSError, http.client.HTTPException, ValueError) as exc:
                timed_out = isinstance(getattr(exc, "reason", exc), TimeoutError)
                if deadline.expired or timed_out:  # or whatever the cut connection raised
                    raise TimeoutError from exc
                raise
            if deadline.expired:  # a body cut at the deadline may still parse: not an answer
                raise TimeoutError
            return raw

    def ask(self, prompt: str) -> Reply:
        """The model's answer to one user message (temperature 0), or why there is none.
        Raises BudgetSpent when the budget ends before an answer came."""
        body = json.dumps(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": 0,
                "max_tokens": self.max_tokens,
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        why, pause = "no request made", 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(min(pause, MAX_PAUSE_S))
            self.budget.take()
            pause = self.backoff_s * 2**attempt
            try:
                raw = self._post(body, headers)
            except urllib.error.HTTPError as exc:
                why = f"HTTP {exc.code} {exc.reason}"
                if exc.code == 429 or 500 <= exc.code < 600:
                    pause = max(pause, _retry_after(exc.headers.get("Retry-After")))
                    continue
                return Reply("failed", self._clean(why))  # 4xx: asking again will not help
            except TimeoutError:
                why = f"no whole answer within {self.timeout_s:g} s"
                continue
            except _TooLarge:
                why = f"a reply over {MAX_REPLY_BYTES:,} bytes (a grade needs a few)"
                continue
            except (urllib.error.URLError, ConnectionError, OSError) as exc:
                why = f"cannot reach {self.shown_url} ({getattr(exc, 'reason', exc)})"
                continue
            except http.client.HTTPException as exc:  # not HTTP, or a body cut short
                why = f"a broken reply from {self.shown_url} ({type(exc).__name__})"
                continue
            except ValueError as exc:
                return Reply("failed", self._clean(f"cannot send to {self.shown_url} ({exc})"))
            text = _content(raw)
            if text is None:
                why = "the reply is not a chat completion (malformed JSON or no message)"
                continue
            return Reply("answered", self._clean(text))
        return Reply("failed", self._clean(f"{why}, after {self.retries + 1} tries"))


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0


def _read_capped(response: http.client.HTTPResponse) -> bytes:
    """The body, read a piece at a time; _TooLarge as soon as it passes MAX_REPLY_BYTES."""
    length = response.headers.get("Content-Length", "")
    if length.isascii() and length.strip().isdigit() and int(length) > MAX_REPLY_BYTES:
        raise _TooLarge
    parts, size = [], 0
    while piece := response.read1(_CHUNK):
        size += len(piece)
        if size > MAX_REPLY_BYTES:
            raise _TooLarge
        parts.append(piece)
    return b"".join(parts)


def _content(raw: bytes) -> str | None:
    """choices[0].message.content of a chat-completions reply, None when it is not one."""
    try:
        payload = json.loads(raw.decode("utf-8"))
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError, RecursionError):
        return None
    return content if isinstance(content, str) else None
