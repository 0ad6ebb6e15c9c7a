"""The store thread: the one thread of the app that calls the store. It commits judgments and
claims one at a time, in the order they were made, and runs the screens' reads (the queue at
start, passages ahead of the cursor) in the same order; each reply goes to the screen that asked
as a message, writes with what other annotators did meanwhile. The UI thread never calls the
store, so it never waits on SQLite (fsync, another annotator's lock) or on the network.

When a team store's server goes away, a grade is not dropped: the thread says so
(`Disconnected`, the grade still on screen) and sends it again, with growing pauses, until the
server takes it; the store adds a stamped judgment once however often it is sent. A read that
meets an unreachable server is tried again the same way (a passage is never taken as unreadable
for it). While a request waits (a SQLite lock another process holds, a server gone), the screen
reads `stalled_s` and `retrying` to say why it waits."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.message import Message
from textual.message_pump import MessagePump

from workbench.core.adaptive.estimate import Draw
from workbench.core.errors import InputError
from workbench.core.model import Judgment
from workbench.flows.judging_requests import Claim, GradeWrite, JudgmentWrite, Look, StoreWrite
from workbench.store import JudgmentStore, StoreUnavailable

CLAIM_LOOK_S = 1.0
"""A claim served this soon after a judgment's reply (the next item's, sent as that reply came)
takes no look of its own at what others did: the reply just brought it."""
RETRY_PAUSES_S = (0.5, 1.0, 2.0, 4.0, 5.0)
"""Pauses between tries of a write while the store's server is unreachable (the last repeats)."""


@dataclass(frozen=True)
class SharedUpdate:
    """What the store says others did since the last look: their new rows (oldest first) and
    every live claim (annotator -> (query_id, doc_id))."""

    rows: tuple[Judgment, ...]
    claims: dict[str, tuple[str, str]]


class Saved(Message):
    """A judgment row (a grade, an undo, a note) is committed (durable) in the store."""

    def __init__(self, write: JudgmentWrite, judgment_id: int, update: SharedUpdate | None = None):
        super().__init__()
        self.write = write
        self.judgment_id = judgment_id
        self.update = update


class Claimed(Message):
    """A claim was decided: `won` False means the item no longer needs this annotator."""

    def __init__(self, claim: Claim, won: bool, update: SharedUpdate | None = None):
        super().__init__()
        self.claim = claim
        self.won = won
        self.update = update


class Looked(Message):
    """What others did since the last look (a look writes nothing)."""

    def __init__(self, update: SharedUpdate | None):
        super().__init__()
        self.update = update


class Disconnected(Message):
    """A write or read could not reach the store; it is kept and tried again after
    `pause_s`."""

    def __init__(self, request: StoreWrite | ReadRequest, error: str, attempt: int, pause_s: float):
        super().__init__()
        self.request = request
        self.error = error
        self.attempt = attempt
        self.pause_s = pause_s


@dataclass(frozen=True)
class ReadRequest:
    """A read for the store thread: `read(store)` runs there and its value comes back as
    ReadDone (or ReadFailed). `what` names it for the screen that asked."""

    read: Callable[[JudgmentStore], Any]
    what: str


class ReadDone(Message):
    """A read ran on the store thread; `value` is what it returned."""

    def __init__(self, request: ReadRequest, value: Any):
        super().__init__()
        self.request = request
        self.value = value


class ReadFailed(Message):
    """A read raised on the store thread (a damaged or busy store). `damaged`: what it raised
    is an input error (the store holds what no workbench wrote), said with its row."""

    def __init__(self, request: ReadRequest, error: str, damaged: bool = False):
        super().__init__()
        self.request = request
        self.error = error
        self.damaged = damaged


class SaveFailed(Message):
    """A judgment could not be written (or a claim, a look made); nothing was committed."""

    def __init__(self, request: StoreWrite, error: str):
        super().__init__()
        self.request = request
        self.error = error


class StoreWriter:
    """A FIFO of writes and reads served by one thread (`serve`, run in a thread worker)."""

    def __init__(self, store: JudgmentStore):
        self.store = store
        self._requests: queue.Queue[tuple[StoreWrite | ReadRequest, MessagePump] | None] = (
            queue.Queue()
        )
        self._lock = threading.Lock()
        self._outstanding = 0
        self._idle = threading.Event()
        self._idle.set()
        self._stopped = threading.Event()
        self._stopping = threading.Event()
        """Set when the app gives up on writes still retrying (it quits for good)."""
        self.retrying = False
        """A write is waiting for the store's server to come back."""
        self._follow: str | None = None
        self._seen = 0
        self._written_at: float | None = None
        """When the last judgment's reply looked at what others did (`_write_once`)."""
        self._serving_since: float | None = None
        self.serving: StoreWrite | ReadRequest | None = None
        """The request the thread is on now (None while it waits for one)."""

    def follow(self, annotator: str, after_id: int) -> None:
        """Report other annotators' rows after `after_id` (and live claims) with every reply,
        and release the annotator's claim when the thread ends. Called on the store thread."""
        self._follow = annotator
        self._seen = after_id

    def _update(self) -> SharedUpdate | None:
        """None when not following, or when the look failed (the next reply catches up)."""
        if self._follow is None:
            return None
        try:
            seen, rows = self.store.judgments_since(self._seen)
            claims = self.store.claims()
        except Exception:  # a read that failed changes nothing; the write itself stands
            return None
        self._seen = seen
        claims = {a: k for a, k in claims.items() if a != self._follow}
        return SharedUpdate(tuple(r for r in rows if r.annotator != self._follow), claims)

    def submit(self, request: StoreWrite | ReadRequest, reply_to: MessagePump) -> None:
        """Serve `request` after those before it; its answer goes to `reply_to` as a message."""
        with self._lock:
            self._outstanding += 1
            self._idle.clear()
        self._requests.put((request, reply_to))

    def serve(self, is_cancelled: Callable[[], bool]) -> None:
        """Serve requests until `stop` (or cancellation with nothing left to do); then give
        back the followed annotator's claim, so others need not wait for it to expire."""
        try:
            while True:
                try:
                    asked = self._requests.get(timeout=0.2)
                except queue.Empty:
                    if is_cancelled():
                        return
                    continue
                if asked is None:
                    return
                request, reply_to = asked
                self.serving, self._serving_since = request, time.monotonic()
                try:
                    reply = self._patiently(request, reply_to)
                finally:
                    self.serving, self._serving_since = None, None
                with self._lock:
                    self._outstanding -= 1
                    if not self._outstanding:
                        self._idle.set()
                reply_to.post_message(reply)
        finally:
            self._release()
            self._stopped.set()

    def _read(self, request: ReadRequest) -> Message:
        try:
            return ReadDone(request, request.read(self.store))
        except StoreUnavailable:
            raise
        except InputError as exc:  # the store's own words: which table, which row
            return ReadFailed(request, str(exc), damaged=True)
        except Exception as exc:  # said on screen, never a crash of the store thread
            return ReadFailed(request, f"{type(exc).__name__}: {exc}")

    def _patiently(self, request: StoreWrite | ReadRequest, reply_to: MessagePump) -> Message:
        """One request; a read, grade, undo or note that meets an unreachable server is kept
        and tried again (claims and looks are not: the next one replaces them)."""
        attempt = 0
        try:
            while True:
                try:
                    if isinstance(request, ReadRequest):
                        return self._read(request)
                    return self._write_once(request)
                except StoreUnavailable as exc:
                    if isinstance(request, ReadRequest):
                        failed: Message = ReadFailed(request, str(exc))
                    else:
                        failed = SaveFailed(request, str(exc))
                        if isinstance(request, Claim | Look):
                            return failed
                    if self._stopping.is_set():
                        return failed
                    pause = RETRY_PAUSES_S[min(attempt, len(RETRY_PAUSES_S) - 1)]
                    attempt += 1
                    self.retrying = True
                    reply_to.post_message(Disconnected(request, str(exc), attempt, pause))
                    if self._stopping.wait(pause):
                        return failed
        finally:
            self.retrying = False

    def _write_once(self, request: StoreWrite) -> Message:
        try:
            if isinstance(request, Claim):
                won = self.store.claim(request.annotator, *request.key)
            elif isinstance(request, Look):
                if self._follow is not None:
                    self.store.renew_claim(self._follow)
            else:
                judgment_id = self.store.add_judgment(request.judgment, draw=_draw(request))
        except StoreUnavailable:
            raise
        except Exception as exc:  # reported to the annotator, never silently dropped
            return SaveFailed(request, f"{type(exc).__name__}: {exc}")
        if isinstance(request, Claim):
            # The claim of the next item, sent as a grade's reply came: that reply looked at
            # what others did a moment ago, so this one needs no look of its own.
            written_at, self._written_at = self._written_at, None
            fresh = written_at is not None and time.monotonic() - written_at < CLAIM_LOOK_S
            return Claimed(request, won, None if fresh else self._update())
        self._written_at = None
        update = self._update()
        if isinstance(request, Look):
            return Looked(update)
        self._written_at = time.monotonic()
        return Saved(request, judgment_id, update)

    def _release(self) -> None:
        if self._follow is None:
            return
        try:
            self.store.release_claim(self._follow)
        except Exception:  # the claim then expires on its own (store.CLAIM_TTL_S)
            pass

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    @property
    def stalled_s(self) -> float:
        """How long the thread has been on its current request (0 when it is on none): a
        grade's write takes milliseconds, so a long one waits on a lock or on the network."""
        since = self._serving_since
        return 0.0 if since is None else time.monotonic() - since

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until every submitted request is served."""
        return self._idle.wait(timeout)

    @property
    def abandoned(self) -> bool:
        return self._stopping.is_set()

    def abandon(self) -> None:
        """Stop retrying writes the server did not take (the app quits without them)."""
        self._stopping.set()

    def stop(self, timeout: float = 0.0) -> bool:
        """End the thread after the requests already submitted; wait up to `timeout` for it
        (and its claim release) to finish. False when it has not."""
        self._requests.put(None)
        return self._stopped.wait(timeout) if timeout else self._stopped.is_set()


def _draw(write: JudgmentWrite) -> Draw | None:
    """The draw record saved with a grade (a grade's only)."""
    return write.draw if isinstance(write, GradeWrite) else None
