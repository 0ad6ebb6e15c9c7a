"""The route a use case takes through the package: the workbench files it enters (in the order
first entered), the store opened, and the store's round trips (a call from outside
`workbench/store` into it). Prints the figures the architecture notes quote, before and after a
change, for one command:

    python bench/route.py -- coverage --db STORE --json

or, from Python, around any callable (the grade path under Pilot, say):

    with Route() as route:
        ...
    print(route.summary())

A profiler hook sees every Python call, so the figures are counts, not timings."""

from __future__ import annotations

import argparse
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any


@cache
def _package() -> Path:
    """The folder of the `workbench` imported (a worktree's on PYTHONPATH, say), not this file's."""
    import workbench

    return Path(workbench.__file__).resolve().parent


@cache
def _module(filename: str) -> str | None:
    """`flows/coverage.py` for a file of the package, None for anything else."""
    try:
        return Path(filename).resolve().relative_to(_package()).as_posix()
    except ValueError:
        return None


@dataclass
class Route:
    """Counts the calls into the package while active (every thread: the app's store thread too)."""

    files: list[str] = field(default_factory=list)
    store_calls: Counter[str] = field(default_factory=Counter)
    opens: int = 0
    _seen: set[str] = field(default_factory=set)

    def _hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        module = _module(frame.f_code.co_filename)
        if module is None:
            return
        if module not in self._seen:
            self._seen.add(module)
            self.files.append(module)
        if not module.startswith("store/"):
            return
        caller = frame.f_back
        caller_module = _module(caller.f_code.co_filename) if caller is not None else None
        if caller_module is not None and caller_module.startswith("store/"):
            return  # inside the store: part of one round trip
        name = frame.f_code.co_name
        if name == "open_store":
            self.opens += 1
        elif name[0] not in "_<" or name in ("__enter__", "__exit__"):  # <module>: an import
            self.store_calls[f"{module}:{name}"] += 1

    def __enter__(self) -> Route:
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]

    def summary(self) -> str:
        """The figures as the notes quote them."""
        calls = sum(self.store_calls.values())
        lines = [
            f"files entered: {len(self.files)}",
            f"store opened: {self.opens}",
            f"store round trips: {calls}",
        ]
        lines += [f"  {count:5d}  {name}" for name, count in self.store_calls.most_common()]
        lines.append("files, in the order first entered:")
        lines += [f"  {name}" for name in self.files]
        return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("argv", nargs=argparse.REMAINDER, help="-- then the workbench command")
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    from workbench import cli

    with Route() as route:
        try:
            code = cli.main(argv)
        except SystemExit as stop:
            code = stop.code
    print(route.summary(), file=sys.stderr)
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main())
