"""`workbench judge-llm`: grade the pool with an LLM behind any OpenAI-compatible
chat-completions endpoint, as a model judge of its own name.

Every answer is kept in the store by (model, prompt hash, item) the moment it arrives, with its
grade as a judgment in the same transaction: a rerun, or a resume after a kill, asks nothing
already answered. An answer that is not a grade is kept as unparseable, never as a grade. A
name is tied to one model and one prompt: labels from another prompt are another judge."""

from __future__ import annotations

import argparse
import os
import sys
import time

from workbench.commands import add_store_option, finite_number
from workbench.core.exit_codes import ExitCode
from workbench.core.names import annotator_name
from workbench.core.store_url import mask_url

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
FAIL_FAST = 3
"""Stop when this many items failed (after every retry) before any was answered."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--endpoint", required=True, help="the server's base URL, e.g. http://127.0.0.1:8000/v1"
    )
    parser.add_argument("--model", required=True, help="the model name the server knows")
    parser.add_argument(
        "--as", dest="name", required=True, type=annotator_name, help="the judge's name"
    )
    parser.add_argument(
        "--prompt", metavar="FILE", help="prompt template ({query}, {narrative}, {passage})"
    )
    parser.add_argument(
        "--api-key-env",
        default=DEFAULT_KEY_ENV,
        metavar="VAR",
        help=f"environment variable holding the API key (default {DEFAULT_KEY_ENV}; unset: none)",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="requests at once (4)")
    parser.add_argument(
        "--timeout", type=finite_number, default=60.0, help="seconds for a whole request (60)"
    )
    parser.add_argument("--retries", type=int, default=4, help="retries of a failed request (4)")
    parser.add_argument(
        "--backoff",
        type=finite_number,
        default=1.0,
        help="first pause before a retry, doubling (1 s)",
    )
    parser.add_argument(
        "--max-requests", type=int, help="request budget for this run (retries count)"
    )
    parser.add_argument("--limit", type=int, help="grade at most this many new items")


def _checked(args: argparse.Namespace) -> tuple[str, str]:
    """(template, hash), after the options are checked; InputError names every problem."""
    from importlib.resources import files

    from workbench.core.errors import InputError
    from workbench.core.llm_grade import prompt_hash, template_problems
    from workbench.formats.textio import read_text

    problems = []
    for option, value, low in (
        ("--concurrency", args.concurrency, 1),
        ("--retries", args.retries, 0),
        ("--max-requests", args.max_requests, 1),
        ("--limit", args.limit, 1),
    ):
        if value is not None and value < low:
            problems.append(f"{option}: must be at least {low}")
    for option, value in (("--timeout", args.timeout), ("--backoff", args.backoff)):
        if not (value >= 0 and value < float("inf")) or (option == "--timeout" and value == 0):
            problems.append(f"{option}: must be a positive number of seconds")
    if not args.endpoint.startswith(("http://", "https://")):
        problems.append(f"--endpoint: {mask_url(args.endpoint)[:60]!r} is not an http(s) URL")
    else:
        import urllib.request

        from workbench.judges.client import chat_url

        try:
            if any(c.isspace() or not c.isprintable() for c in args.endpoint):
                raise ValueError("whitespace or a control character")
            urllib.request.Request(chat_url(args.endpoint), method="POST").host.encode("idna")
        except (ValueError, UnicodeError):
            problems.append(f"--endpoint: {mask_url(args.endpoint)[:60]!r} is not a usable URL")
    if args.prompt:
        template = read_text(args.prompt)
        source = args.prompt
    else:
        template = (files("workbench.judges") / "umbrela.txt").read_text(encoding="utf-8")
        source = "the default prompt"
    problems += [f"{source}: {p}" for p in template_problems(template)]
    if problems:
        raise InputError(problems)
    return template, prompt_hash(template)


def run(args: argparse.Namespace) -> int:
    import json
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from workbench.commands import say
    from workbench.commands.import_labels import check_model_name
    from workbench.core.display import visible
    from workbench.core.errors import InputError
    from workbench.core.judge_versions import JudgeIdentity
    from workbench.core.llm_grade import ANSWER_RULE, parse_grade, render_prompt
    from workbench.core.model import Judgment, Role
    from workbench.judges.client import Budget, BudgetSpent, ChatClient
    from workbench.store import open_store

    template, digest = _checked(args)
    key = os.environ.get(args.api_key_env) or None
    with open_store(args.db) as store:
        check_model_name(store, args.name, "an LLM judge needs a name of its own")
        identity = {"model": args.model, "prompt_sha256": digest}
        known = json.loads(store.get_meta(f"llm:{args.name}", "null") or "null")
        if known is not None and {k: known.get(k) for k in identity} != identity:
            raise InputError(
                [
                    f"--as {args.name}: already grades with model {known.get('model')!r} and"
                    f" prompt {known.get('prompt_sha256')}; a new model or prompt is another"
                    " judge: give it another name"
                ]
            )
        endpoint = mask_url(args.endpoint)
        store.set_meta(f"llm:{args.name}", json.dumps({**identity, "endpoint": endpoint}))
        pinned = JudgeIdentity("judge-llm", args.model, digest, ANSWER_RULE)
        version = pinned.version
        pool = store.pool()
        if not pool:
            raise InputError([f"{args.db}: the pool is empty (build one with `workbench pool`)"])
        queries = {q.query_id: q for q in store.queries()}
        scale = store.grade_scale()
        answered = store.llm_answers(args.model, digest)
        # A label of an earlier version (another answer rule, or none recorded) is given again
        # from its stored answer, read again under this rule, so every current label names the
        # version that gave it; one this rule reads no grade in is undone (an earlier rule read
        # quoted text). An answer no earlier rule read as a grade is none under this one.
        current = {
            (j.query_id, j.doc_id): j.judge_version for j in store.current_judgments(args.name)
        }
        mine = {item for item, of in current.items() if of == version}
        items = list(dict.fromkeys((e.query_id, e.doc_id) for e in pool))
        stale = [
            item for item in items if answered.get(item, ("",))[0] == "graded" and item not in mine
        ]
        texts = store.llm_answer_texts(args.model, digest, stale)
        regraded = {item: parse_grade(texts.get(item, ""), scale) for item in stale}

        def judgment(item: tuple[str, str], grade: int | None) -> Judgment:
            return Judgment(
                args.name,
                item[0],
                item[1],
                grade,
                graded_at=time.time(),
                role=Role.MODEL,
                judge_version=version,
            )

        # Answers are kept per (model, prompt), not per name: one stored by another run (or
        # under another name with this model and prompt) still lacks this name's judgment.
        missing = [
            judgment(item, grade)
            for item, grade in regraded.items()
            if grade is not None or item in current  # None: an undo of the earlier label
        ]
        no_longer = sum(grade is None and item in current for item, grade in regraded.items())
        store.record_judge(args.name, pinned)  # before the first label that names it
        restored = (store.add_judgments(missing) - no_longer) if missing else 0
        todo = [item for item in items if item not in answered]
        if args.limit is not None:
            todo = todo[: args.limit]
        docs = store.docs(d for _, d in todo)
        budget = Budget(args.max_requests)
        client = ChatClient(
            args.endpoint, args.model, key, args.timeout, args.retries, args.backoff, budget
        )

        def ask(item: tuple[str, str]):  # type: ignore[no-untyped-def]
            query = queries.get(item[0])
            doc = docs.get(item[1])
            prompt = render_prompt(
                template,
                query.text if query else "",
                query.narrative if query else "",
                (f"{doc.title}\n{doc.text}" if doc.title else doc.text) if doc else "",
            )
            return client.ask(prompt)

        counts = {"graded": 0, "unparseable": 0, "failed": 0, "unasked": 0}

        def giving_up() -> bool:
            """The first items all failed after every retry: the server is down or refuses
            (a wrong endpoint or model); asking the rest would only wait the same way."""
            answered = counts["graded"] + counts["unparseable"]
            failed = counts["failed"]
            return not answered and failed > 0 and failed >= min(FAIL_FAST, len(todo))

        failures: list[str] = []
        started = last_said = time.monotonic()
        done = 0
        pool_ = ThreadPoolExecutor(max_workers=args.concurrency)
        pending = {}
        queue = iter(todo)
        try:
            for item in queue:
                pending[pool_.submit(ask, item)] = item
                if len(pending) >= args.concurrency * 2:
                    break
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    item = pending.pop(future)
                    done += 1
                    following = None if giving_up() else next(queue, None)
                    if following is not None:  # the budget, once spent, refuses it unasked
                        pending[pool_.submit(ask, following)] = following
                    try:
                        reply = future.result()
                    except BudgetSpent:
                        counts["unasked"] += 1
                        continue
                    if reply.status == "failed":
                        counts["failed"] += 1
                        failures.append(f"{item[0]}/{item[1]}: {reply.text}")
                        continue
                    grade = parse_grade(reply.text, scale)
                    store.add_llm_answer(
                        args.model,
                        digest,
                        *item,
                        reply.text,
                        grade,
                        judgment(item, grade) if grade is not None else None,
                    )
                    counts["graded" if grade is not None else "unparseable"] += 1
                now = time.monotonic()
                if now - last_said >= 1.0 or not pending:
                    last_said = now
                    rate = done / max(now - started, 1e-9)
                    left = len(todo) - done
                    eta = f", ETA {left / rate:.0f} s" if rate > 0 and left > 0 else ""
                    print(
                        f"judge-llm: {done}/{len(todo)} items ({counts['graded']} graded,"
                        f" {counts['unparseable']} unparseable, {counts['failed']} failed),"
                        f" {budget.used} requests, {rate:.1f}/s{eta}",
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            pool_.shutdown(wait=True, cancel_futures=True)
        counts["unasked"] += sum(1 for _ in queue)
    cached = sum(1 for item in items if item in answered)
    for line in failures[:10]:
        say(f"  failed {visible(line, one_line=True)}")
    if giving_up():
        say(f"Stopped: the first {counts['failed']} items failed after every retry.")
    if no_longer:
        say(
            f"{no_longer} answers from before give no grade under {ANSWER_RULE} (it reads only"
            " the model's own last line, in ASCII digits): their earlier labels are undone."
        )
    say(
        f"judge-llm {args.name} ({args.model}, prompt {digest}, version {version}):"
        f" {len(items)} items;"
        f" {counts['graded']} graded and {counts['unparseable']} unparseable now,"
        f" {cached} answered before (no request; {restored} judgments restored);"
        f" {counts['failed']} failed and {counts['unasked']} not asked (the budget, or a stop):"
        f" a rerun asks only those. {budget.used} requests."
    )
    return ExitCode.FAILED if counts["failed"] or counts["unasked"] else ExitCode.OK
