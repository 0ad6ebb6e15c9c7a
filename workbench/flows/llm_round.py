"""One round of an LLM judge over a store's pool (`workbench judge-llm`'s use case): the judge's
identity pinned, earlier answers read again under the current answer rule, then every item not
yet answered asked, each answer kept (with its grade as a judgment) the moment it arrives. A
rerun, or a resume after a kill, asks nothing already answered."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.judges.llm_grade import ANSWER_RULE, parse_grade, render_prompt
from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.model import Doc, Judgment, Query, Role
from workbench.core.store_url import mask_url

if TYPE_CHECKING:
    from workbench.judges.client import ChatClient, Reply
    from workbench.store import JudgmentStore

Item = tuple[str, str]

FAIL_FAST = 3
"""Stop when this many items failed (after every retry) before any was answered."""


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """What the round asks of which server: the judge's name, its model and prompt, and how
    requests are made (the command's options, checked)."""

    name: str
    model: str
    endpoint: str
    template: str
    digest: str
    """The prompt template's hash: with the model, the judge's identity."""
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    max_requests: int | None = None
    concurrency: int = 4
    limit: int | None = None


@dataclass(slots=True)
class Counts:
    """Items of this round by outcome (a cached answer is none of them)."""

    graded: int = 0
    unparseable: int = 0
    failed: int = 0
    unasked: int = 0

    def answered(self) -> int:
        return self.graded + self.unparseable


@dataclass(frozen=True, slots=True)
class Progress:
    """Where the asking stands, for a progress line."""

    done: int
    total: int
    counts: Counts
    requests: int
    seconds: float


@dataclass(frozen=True, slots=True)
class LlmRound:
    """What the round did."""

    version: str
    items: int
    """Pooled items."""
    counts: Counts
    cached: int
    """Items answered before this round (no request)."""
    restored: int
    """Judgments given again from stored answers (an earlier version's, or another name's)."""
    no_longer: int
    """Earlier labels undone: their stored answer gives no grade under the current rule."""
    requests: int
    gave_up: bool
    """The first items all failed after every retry: the rest were not asked."""
    failures: list[str] = field(default_factory=list)
    """`query/doc: why` of each failed item."""


def pin_identity(store: JudgmentStore, request: LlmRequest) -> JudgeIdentity:
    """The judge's identity recorded in the store; a name already tied to another model or
    prompt is refused (a new model or prompt is another judge)."""
    identity = {"model": request.model, "prompt_sha256": request.digest}
    known = json.loads(store.get_meta(f"llm:{request.name}", "null") or "null")
    if known is not None and {k: known.get(k) for k in identity} != identity:
        raise InputError(
            [
                f"--as {request.name}: already grades with model {known.get('model')!r} and"
                f" prompt {known.get('prompt_sha256')}; a new model or prompt is another"
                " judge: give it another name"
            ]
        )
    endpoint = mask_url(request.endpoint)
    store.set_meta(f"llm:{request.name}", json.dumps({**identity, "endpoint": endpoint}))
    return JudgeIdentity("judge-llm", request.model, request.digest, ANSWER_RULE)


def _judgment(name: str, item: Item, grade: int | None, version: str) -> Judgment:
    return Judgment(
        name, item[0], item[1], grade, graded_at=time.time(), role=Role.MODEL,
        judge_version=version,
    )  # fmt: skip


def restore_earlier(
    store: JudgmentStore,
    request: LlmRequest,
    items: list[Item],
    answered: Mapping[Item, tuple],
    version: str,
    scale: Mapping[int, str],
) -> tuple[int, int]:
    """(restored, undone). A label of an earlier version (another answer rule, or none
    recorded) is given again from its stored answer, read again under this rule, so every
    current label names the version that gave it; one this rule reads no grade in is undone (an
    earlier rule read quoted text). Answers are kept per (model, prompt), not per name: one
    stored by another run (or under another name) still lacks this name's judgment."""
    judged = store.current_judgments(request.name)
    current = {(j.query_id, j.doc_id): j.judge_version for j in judged}
    mine = {item for item, of in current.items() if of == version}
    stale = [i for i in items if answered.get(i, ("",))[0] == "graded" and i not in mine]
    texts = store.llm_answer_texts(request.model, request.digest, stale)
    regraded = {item: parse_grade(texts.get(item, ""), scale) for item in stale}
    missing = [
        _judgment(request.name, item, grade, version)
        for item, grade in regraded.items()
        if grade is not None or item in current  # None: an undo of the earlier label
    ]
    no_longer = sum(grade is None and item in current for item, grade in regraded.items())
    return (store.add_judgments(missing) - no_longer) if missing else 0, no_longer


def _prompt(template: str, query: Query | None, doc: Doc | None) -> str:
    passage = (f"{doc.title}\n{doc.text}" if doc.title else doc.text) if doc else ""
    return render_prompt(
        template, query.text if query else "", query.narrative if query else "", passage
    )


class _Asking:
    """The items asked `concurrency` at a time; each answer stored as it arrives (on the
    caller's thread: the store is not shared with the workers)."""

    def __init__(
        self,
        store: JudgmentStore,
        request: LlmRequest,
        client: ChatClient,
        version: str,
        todo: list[Item],
        scale: Mapping[int, str],
    ) -> None:
        self.store, self.request, self.client, self.version = store, request, client, version
        self.todo = todo
        self.queries = {q.query_id: q for q in store.queries()}
        self.docs = store.docs(d for _, d in todo)
        self.scale = scale
        self.counts = Counts()
        self.failures: list[str] = []

    def giving_up(self) -> bool:
        """The first items all failed after every retry: the server is down or refuses (a
        wrong endpoint or model); asking the rest would only wait the same way."""
        failed = self.counts.failed
        first = min(FAIL_FAST, len(self.todo))
        return not self.counts.answered() and failed > 0 and failed >= first

    def _ask(self, item: Item) -> Reply:
        query, doc = self.queries.get(item[0]), self.docs.get(item[1])
        return self.client.ask(_prompt(self.request.template, query, doc))

    def _keep(self, item: Item, future: Future[Reply]) -> None:
        from workbench.judges.client import BudgetSpent

        try:
            reply = future.result()
        except BudgetSpent:
            self.counts.unasked += 1
            return
        if reply.status == "failed":
            self.counts.failed += 1
            self.failures.append(f"{item[0]}/{item[1]}: {reply.text}")
            return
        grade = parse_grade(reply.text, self.scale)
        name, version = self.request.name, self.version
        judgment = None if grade is None else _judgment(name, item, grade, version)
        self.store.add_llm_answer(
            self.request.model, self.request.digest, *item, reply.text, grade, judgment
        )
        if grade is not None:
            self.counts.graded += 1
        else:
            self.counts.unparseable += 1

    def run(self, progress: Callable[[Progress], None] | None) -> None:
        request, total = self.request, len(self.todo)
        started = last_said = time.monotonic()
        done = 0
        workers = ThreadPoolExecutor(max_workers=request.concurrency)
        pending: dict[Future[Reply], Item] = {}
        queue = iter(self.todo)
        try:
            for item in queue:
                pending[workers.submit(self._ask, item)] = item
                if len(pending) >= request.concurrency * 2:
                    break
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    item = pending.pop(future)
                    done += 1
                    following = None if self.giving_up() else next(queue, None)
                    if following is not None:  # the budget, once spent, refuses it unasked
                        pending[workers.submit(self._ask, following)] = following
                    self._keep(item, future)
                now = time.monotonic()
                if progress is not None and (now - last_said >= 1.0 or not pending):
                    last_said = now
                    used = self.client.budget.used
                    progress(Progress(done, total, self.counts, used, now - started))
        finally:
            workers.shutdown(wait=True, cancel_futures=True)
        self.counts.unasked += sum(1 for _ in queue)


def run_llm_round(
    store: JudgmentStore,
    request: LlmRequest,
    progress: Callable[[Progress], None] | None = None,
    where: str = "the store",
) -> LlmRound:
    """One round over the store's pool (see the module docstring); InputError when the name is
    another judge's or the pool is empty (`where`: the store, as messages name it)."""
    from workbench.judges.client import Budget, ChatClient

    pinned = pin_identity(store, request)
    version = pinned.version
    pool = store.pool()
    if not pool:
        raise InputError([f"{where}: the pool is empty (build one with `workbench pool`)"])
    answered = store.llm_answers(request.model, request.digest)
    items = list(dict.fromkeys((e.query_id, e.doc_id) for e in pool))
    store.record_judge(request.name, pinned)  # before the first label that names it
    scale = store.grade_scale()  # read once: both the restored labels and the new ones use it
    restored, no_longer = restore_earlier(store, request, items, answered, version, scale)
    todo = [item for item in items if item not in answered]
    if request.limit is not None:
        todo = todo[: request.limit]
    client = ChatClient(
        request.endpoint, request.model, request.api_key, request.timeout, request.retries,
        request.backoff, Budget(request.max_requests),
    )  # fmt: skip
    asking = _Asking(store, request, client, version, todo, scale)
    asking.run(progress)
    return LlmRound(
        version=version,
        items=len(items),
        counts=asking.counts,
        cached=sum(1 for item in items if item in answered),
        restored=restored,
        no_longer=no_longer,
        requests=client.budget.used,
        gave_up=asking.giving_up(),
        failures=asking.failures,
    )
