"""The app process of `workbench serve` (`python -m workbench.served_app`): the judging app of
`workbench judge` for the annotator the server checked the token of, named with the store in
this process's environment (`workbench.web.server.SERVED_ENV`), so neither the store's
password nor anything about the annotator shows in a process list."""

from __future__ import annotations

import os
import sys

from workbench.core.display import visible
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode, exit_code_for
from workbench.core.model import Role

ENV_DB = "WORKBENCH_SERVED_DB"
ENV_ANNOTATOR = "WORKBENCH_SERVED_ANNOTATOR"
ENV_ROLE = "WORKBENCH_SERVED_ROLE"
ENV_REL_THRESHOLD = "WORKBENCH_SERVED_REL_THRESHOLD"


ORPHAN_POLL_S = 0.5


def quit_when_orphaned(parent: int) -> None:
    """A server killed outright (SIGKILL, a crash) leaves its app processes running with
    nobody to serve: once the server is gone, quit as Ctrl+C would (the grade in flight is
    saved first, the claim given back)."""
    import signal
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_POLL_S)
        os.kill(os.getpid(), signal.SIGTERM)  # the web driver's handler exits the app

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


def main() -> int:
    from workbench.commands.app_launch import open_app
    from workbench.core.store_url import StoreLocation

    try:
        location = StoreLocation(os.environ.pop(ENV_DB))
        annotator = os.environ.pop(ENV_ANNOTATOR)
        role = os.environ.pop(ENV_ROLE, Role.HUMAN.value)
        rel_threshold = int(os.environ.pop(ENV_REL_THRESHOLD, "1"))
    except (KeyError, ValueError):
        print("error: started without its server (run `workbench serve`)", file=sys.stderr)
        return ExitCode.USAGE
    quit_when_orphaned(os.getppid())
    try:
        return open_app(
            location,  # type: ignore[arg-type]
            annotator,
            rel_threshold,
            adjudicate=role == Role.ADJUDICATOR,
            served=True,
        )
    except (Exception, KeyboardInterrupt) as exc:  # one line in the server's log
        for problem in exc.problems if isinstance(exc, InputError) else [repr(exc)]:
            print(f"error: {annotator}'s app: {visible(problem, one_line=True)}", file=sys.stderr)
        return exit_code_for(exc)


if __name__ == "__main__":
    sys.exit(main())
