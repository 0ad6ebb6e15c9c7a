"""`workbench judge`: open the judging app on one annotator's queue, or (--adjudicate) on the
pairs whose human annotators disagree."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from workbench.commands import (
    add_judge_covariate_option,
    add_rel_threshold_option,
    add_store_option,
    store_judge_choice,
)
from workbench.core.display import visible
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode
from workbench.core.model import Role
from workbench.core.names import NAME_RULE, annotator_name, name_problem

FALLBACK_ANNOTATOR = "annotator"


def default_annotator() -> str:
    """$USER when it is a valid annotator name, else 'annotator': a default is never refused."""
    user = os.environ.get("USER", "")
    return user if name_problem(user) is None else FALLBACK_ANNOTATOR


def add_annotator_option(parser: argparse.ArgumentParser) -> None:
    """`--annotator NAME`, checked where it enters (exit 2 on a bad name)."""
    parser.add_argument(
        "--annotator",
        type=annotator_name,
        default=default_annotator(),
        help=f"your name, {NAME_RULE} (default: $USER when it is one, else 'annotator')",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    add_annotator_option(parser)
    add_rel_threshold_option(parser)
    parser.add_argument(
        "--adjudicate",
        action="store_true",
        help="walk the disagreements between human annotators; your grade (role"
        " 'adjudicator') decides the pair in exports",
    )
    add_judge_covariate_option(parser, "the queue")


def check_role(store, annotator: str, wanted: str) -> None:  # type: ignore[no-untyped-def]
    """One name, one role: an adjudicator's rows under a human's name would replace that
    human's grades in the agreement figures (and the reverse would show up in a queue). Under
    an annotator's own login, the database writes that annotator's rows in its role only:
    anything else is refused here, not at the first grade."""
    own = store.own_login()
    if own is not None and (own.annotator, own.role) != (annotator, wanted):
        how = "--adjudicate" if own.role == Role.ADJUDICATOR else "without --adjudicate"
        raise InputError(
            [
                f"--annotator {annotator}{' --adjudicate' if wanted == Role.ADJUDICATOR else ''}:"
                f" {store.location} is {own.annotator}'s own login ({own.login}), which writes"
                f" {own.annotator}'s {own.role} rows only; run it as --annotator"
                f" {own.annotator} {how}, or connect as {annotator}'s login"
            ]
        )
    roles = {j.role for j in store.judgments(annotator)}
    other = sorted(roles - {wanted})
    if other:
        hint = f"{annotator}-adj" if wanted == Role.ADJUDICATOR else f"{annotator}-2"
        raise InputError(
            [
                f"--annotator {annotator}: this name already holds {'/'.join(other)} judgments"
                f" in {store.location}; use another name for {wanted} work (e.g. {hint})"
            ]
        )


def require_terminal() -> None:
    """The app draws on a terminal: without one it would paint into a pipe until killed."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InputError(
            [
                "the judging app needs a terminal (stdin and stdout a TTY); to grade from"
                " a script, use `workbench import-labels` or `workbench simulate`"
            ]
        )


def open_disputes(store, db: Path) -> list:  # type: ignore[no-untyped-def]
    """The disputes to adjudicate, in pool order; none: said on stdout."""
    from workbench.core.adjudication import disputes as find_disputes

    order = {(e.query_id, e.doc_id): i for i, e in enumerate(store.pool())}
    history = store.judgments()
    disputes = find_disputes(history, order)
    if not disputes:
        settled = len(find_disputes(history, order, include_settled=True))
        print(
            f"Nothing to adjudicate in {visible(str(db), one_line=True)}: no pair's human"
            " grades differ" + (f" ({settled} already adjudicated)." if settled else ".")
        )
    return disputes


def open_app(
    db: Path,
    annotator: str,
    rel_threshold: int = 1,
    notices: tuple[str, ...] = (),
    adjudicate: bool = False,
    served: bool = False,
) -> int:
    """Run the app on an existing, pooled store; returns the exit code. `served`: in a
    browser (`workbench serve`): no terminal, and the closing words are the page's."""
    from workbench.store import open_store

    problem = name_problem(annotator)
    if problem:
        raise InputError([f"--annotator: {problem}"])
    store = open_store(db)
    try:
        if not store.has_pool():
            raise InputError([f"{db}: the store has no pool yet (build one with `workbench pool`)"])
        # Judging, the pool is read on the app's store thread while the app starts (a second
        # at 100,000 x 500, adaptive), not before it (a thread reading it while Textual starts
        # made the first passage later: 1.69 s against 1.44 s there).
        disputes = None
        if adjudicate:
            check_role(store, annotator, Role.ADJUDICATOR)
            disputes = open_disputes(store, db)
            if not disputes:
                return ExitCode.OK
        else:
            check_role(store, annotator, Role.HUMAN)
        if not served:
            require_terminal()
        # Textual paints at most MAX_FPS times a second; at its default 60 a grade waits up to
        # 17 ms for the next paint. 120 cut p95 grade-to-next-passage from ~45 to ~30 ms.
        os.environ.setdefault("TEXTUAL_FPS", "120")
        from workbench.tui.app import JudgeApp

        # The reads above and below run before the app starts and after it ends; while it
        # runs, every store call is made on its store thread, never on the UI thread.
        app = JudgeApp(store, annotator, rel_threshold, notices=notices, disputes=disputes)
        app.run()
        if app.damaged is not None:
            raise InputError([app.damaged])
        if served:
            return ExitCode.OK
        graded = len(store.current_judgments(annotator))
        print(
            f"{annotator}: {graded} current grade(s) in {visible(str(db), one_line=True)}, every"
            " one saved as you went; open the app again to go on where you stopped.",
            file=sys.stderr,
        )
        for notice in notices:  # whole here: the app's message line may have cut it
            print(f"note: {visible(notice, one_line=True)}", file=sys.stderr)
    finally:
        store.close()
    return ExitCode.OK


def run(args: argparse.Namespace) -> int:
    if args.judge is not None:
        store_judge_choice(args.db, args.judge, args.rel_threshold, "judge")
    return open_app(args.db, args.annotator, args.rel_threshold, adjudicate=args.adjudicate)
