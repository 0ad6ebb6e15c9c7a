"""The judging app opened on a store, in a terminal (`workbench judge`, `workbench demo`) or in
a browser (`workbench serve`, through `workbench.served_app`). Not a command: the checks before
it are `workbench.flows.app_entry`'s, the app is `workbench.tui.app`'s."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from workbench.core.display import visible
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode
from workbench.core.names import name_problem


def require_terminal() -> None:
    """The app draws on a terminal: without one it would paint into a pipe until killed."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InputError(
            [
                "the judging app needs a terminal (stdin and stdout a TTY); to grade from"
                " a script, use `workbench import-labels` or `workbench simulate`"
            ]
        )


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
    from workbench.flows.app_entry import app_entry
    from workbench.store import open_store

    problem = name_problem(annotator)
    if problem:
        raise InputError([f"--annotator: {problem}"])
    store = open_store(db)
    try:
        # Judging, the pool is read on the app's store thread while the app starts (a second
        # at 100,000 x 500, adaptive), not before it (a thread reading it while Textual starts
        # made the first passage later: 1.69 s against 1.44 s there).
        entry = app_entry(store, db, annotator, adjudicate)
        if entry.disputes is not None and not entry.disputes:
            settled = entry.settled
            print(
                f"Nothing to adjudicate in {visible(str(db), one_line=True)}: no pair's human"
                " grades differ" + (f" ({settled} already adjudicated)." if settled else ".")
            )
            return ExitCode.OK
        if not served:
            require_terminal()
        # Textual paints at most MAX_FPS times a second; at its default 60 a grade waits up to
        # 17 ms for the next paint. 120 cut p95 grade-to-next-passage from ~45 to ~30 ms.
        os.environ.setdefault("TEXTUAL_FPS", "120")
        from workbench.tui.app import JudgeApp

        # The reads above and below run before the app starts and after it ends; while it
        # runs, every store call is made on its store thread, never on the UI thread.
        app = JudgeApp(store, annotator, rel_threshold, notices=notices, disputes=entry.disputes)
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
