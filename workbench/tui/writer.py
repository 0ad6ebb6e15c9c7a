"""The store thread: commits judgments one at a time, in the order they were made, and tells the
screen that asked. The UI thread never waits on SQLite (fsync, another annotator's lock)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from textual.message import Message
from textual.message_pump import MessagePump

from workbench.model import Judgment
from workbench.store import Store


@dataclass(frozen=True)
class WriteRequest:
    judgment: Judgment
    kind: Literal["grade", "undo", "note"]
    reply_to: MessagePump


class Saved(Message):
    """A judgment row is committed (durable) in the store."""

    def __init__(self, request: WriteRequest, judgment_id: int):
        super().__init__()
        self.request = request
        self.judgment_id = judgment_id


class SaveFailed(Message):
    """A judgment could not be written; nothing was committed for it."""

    def __init__(self, request: WriteRequest, error: str):
        super().__init__()
        self.request = request
        self.error = error


class StoreWriter:
    """A FIFO of judgments served by one thread (`serve`, run in a thread worker)."""

    def __init__(self, store: Store):
        self.store = store
        self._requests: queue.Queue[WriteRequest | None] = queue.Queue()
        self._lock = threading.Lock()
        self._outstanding = 0
        self._idle = threading.Event()
        self._idle.set()

    def submit(self, request: WriteRequest) -> None:
        with self._lock:
            self._outstanding += 1
            self._idle.clear()
        self._requests.put(request)

    def serve(self, is_cancelled: Callable[[], bool]) -> None:
        """Commit requests until `stop` (or cancellation with nothing left to write)."""
        while True:
            try:
                request = self._requests.get(timeout=0.2)
            except queue.Empty:
                if is_cancelled():
                    return
                continue
            if request is None:
                return
            try:
                judgment_id = self.store.add_judgment(request.judgment)
            except Exception as exc:  # reported to the annotator, never silently dropped
                reply: Message = SaveFailed(request, f"{type(exc).__name__}: {exc}")
            else:
                reply = Saved(request, judgment_id)
            with self._lock:
                self._outstanding -= 1
                if not self._outstanding:
                    self._idle.set()
            request.reply_to.post_message(reply)

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until every submitted judgment is committed (or failed)."""
        return self._idle.wait(timeout)

    def stop(self) -> None:
        self._requests.put(None)
