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
from typing import TYPE_CHECKING

from workbench.commands import add_store_option, finite_number
from workbench.commands.shared_options import add_judge_name_option
from workbench.core.exit_codes import ExitCode
from workbench.core.store_url import mask_url

if TYPE_CHECKING:
    from workbench.flows.llm_round import Progress

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--endpoint", required=True, help="the server's base URL, e.g. http://127.0.0.1:8000/v1"
    )
    parser.add_argument("--model", required=True, help="the model name the server knows")
    add_judge_name_option(parser, "the judge's name")
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
    from workbench.core.judges.llm_grade import prompt_hash, template_problems
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
    from workbench.commands import say
    from workbench.core.display import visible
    from workbench.core.judges.llm_grade import ANSWER_RULE
    from workbench.flows.annotator_roles import check_model_name
    from workbench.flows.llm_round import LlmRequest, run_llm_round
    from workbench.store import open_store

    template, digest = _checked(args)
    request = LlmRequest(
        name=args.name, model=args.model, endpoint=args.endpoint, template=template,
        digest=digest, api_key=os.environ.get(args.api_key_env) or None, timeout=args.timeout,
        retries=args.retries, backoff=args.backoff, max_requests=args.max_requests,
        concurrency=args.concurrency, limit=args.limit,
    )  # fmt: skip
    with open_store(args.db) as store:
        check_model_name(store, args.name, "an LLM judge needs a name of its own")
        done = run_llm_round(store, request, _say_progress, where=str(args.db))
    counts = done.counts
    for line in done.failures[:10]:
        say(f"  failed {visible(line, one_line=True)}")
    if done.gave_up:
        say(f"Stopped: the first {counts.failed} items failed after every retry.")
    if done.no_longer:
        say(
            f"{done.no_longer} answers from before give no grade under {ANSWER_RULE} (it reads"
            " only the model's own last line, in ASCII digits): their earlier labels are undone."
        )
    say(
        f"judge-llm {args.name} ({args.model}, prompt {digest}, version {done.version}):"
        f" {done.items} items;"
        f" {counts.graded} graded and {counts.unparseable} unparseable now,"
        f" {done.cached} answered before (no request; {done.restored} judgments restored);"
        f" {counts.failed} failed and {counts.unasked} not asked (the budget, or a stop):"
        f" a rerun asks only those. {done.requests} requests."
    )
    return ExitCode.FAILED if counts.failed or counts.unasked else ExitCode.OK


def _say_progress(progress: Progress) -> None:
    """One stderr line a second: items done, by outcome, requests, rate and time left."""
    counts, done, total = progress.counts, progress.done, progress.total
    rate = done / max(progress.seconds, 1e-9)
    left = total - done
    eta = f", ETA {left / rate:.0f} s" if rate > 0 and left > 0 else ""
    print(
        f"judge-llm: {done}/{total} items ({counts.graded} graded,"
        f" {counts.unparseable} unparseable, {counts.failed} failed),"
        f" {progress.requests} requests, {rate:.1f}/s{eta}",
        file=sys.stderr,
        flush=True,
    )
