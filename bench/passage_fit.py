"""How many passages show their end without scrolling: a real `workbench judge` in a tmux
terminal of the given size, on a copy of the store, over its first N passages (each graded 0
to move on, on the copy only). A passage fits when its "end of passage" line is on the first
screen drawn for it. Prints one line a passage and the count (not a timed test).

Run: PYTHONPATH=. .venv/bin/python bench/passage_fit.py STORE.db [--size 100x30] [-n 10]
     (needs tmux; PYTHONPATH chooses which checkout's app runs)"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

END = "end of passage"
_TITLE = re.compile(r"─ (\S+) ─")


def screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip


def passage_id(text: str) -> str | None:
    """The id in the passage box's top border (the first border title after the query's)."""
    for line in text.splitlines():
        if line.startswith("╭─ "):
            match = _TITLE.search(line)
            if match:
                return match.group(1)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--size", default="100x30")
    parser.add_argument("-n", type=int, default=10)
    args = parser.parse_args()
    cols, rows = args.size.split("x")
    folder = Path(tempfile.mkdtemp())
    db = folder / "fit.db"
    shutil.copy(args.store, db)
    session = f"fit{os.getpid()}"
    command = f"{sys.executable} -m workbench judge --db {db} --annotator fit"
    env_path = os.environ.get("PYTHONPATH", "")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", cols, "-y", rows,
                    f"cd {os.getcwd()} && PYTHONPATH={env_path} HF_HUB_OFFLINE=1 {command}"],
                   check=True)  # fmt: skip
    fits, last = 0, None
    try:
        for n in range(args.n):
            deadline = time.time() + 30
            while True:
                text = screen(session)
                shown = passage_id(text)
                if shown and shown != last and "reading" not in text:
                    time.sleep(0.5)  # the passage drawn whole
                    text = screen(session)
                    break
                if time.time() > deadline:
                    raise SystemExit(f"passage {n + 1}: none drawn in 30 s")
                time.sleep(0.2)
            fit = END in text
            fits += fit
            below = re.search(r"↓ (\d+) more line", text)
            print(f"{n + 1:2}  {shown:<40} {'fits' if fit else 'scrolls'}"
                  + (f" ({below.group(1)} more lines)" if below else ""))  # fmt: skip
            last = shown
            subprocess.run(["tmux", "send-keys", "-t", session, "0"], check=True)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.store} at {args.size}: {fits} of {args.n} passages show their end without "
          "scrolling")  # fmt: skip


if __name__ == "__main__":
    main()
