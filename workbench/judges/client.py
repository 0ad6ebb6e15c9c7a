"""A client for any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp's
server, a hosted API), with what grading a pool needs: a timeout per request, retries with
backoff on 429 and 5xx (honouring Retry-After), on timeouts and on a reply that is not the
expected JSON, and a request budget shared by every thread. The API key is sent as a bearer
token and never appears in what this returns."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

MAX_PAUSE_S = 60.0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error, not followed: following it would send the API key to another
    host."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


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
    """The chat-completions URL of a base URL such as http://127.0.0.1:8000/v1."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


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
        from workbench.core.store_url import mask_url

        self.shown_url = mask_url(self.url)
        self.model = model
        self._key = api_key
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.budget = budget or Budget(None)
        self.max_tokens = max_tokens
        self._sleep = sleep

    def _clean(self, text: str) -> str:
        """A message safe to show: the key, were a server to echo it, masked."""
        return text.replace(self._key, "***") if self._key else text

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
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with _OPENER.open(request, timeout=self.timeout_s) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                why = f"HTTP {exc.code} {exc.reason}"
                if exc.code == 429 or 500 <= exc.code < 600:
                    pause = max(pause, _retry_after(exc.headers.get("Retry-After")))
                    continue
                return Reply("failed", self._clean(why))  # 4xx: asking again will not help
            except TimeoutError:
                why = f"no answer within {self.timeout_s:g} s"
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
            return Reply("answered", text)
        return Reply("failed", self._clean(f"{why}, after {self.retries + 1} tries"))


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0


def _content(raw: bytes) -> str | None:
    """choices[0].message.content of a chat-completions reply, None when it is not one."""
    try:
        payload = json.loads(raw.decode("utf-8"))
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError, RecursionError):
        return None
    return content if isinstance(content, str) else None
