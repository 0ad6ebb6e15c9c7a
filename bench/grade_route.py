"""The grade path's route (issue 44): the app opened under Textual's `run_test()` on a small store
pooled static and adaptive (bench/synthetic.py, bm25), a grade key pressed once the first
passage is on the terminal, and, until the next passage is on it, the workbench files entered,
the store's round trips (on the store thread too) and the calls of the screen's `show_current`.

Run: HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python bench/grade_route.py [--docs 800]
     [--queries 6] [--grades 3]
The first grade's route is printed in full; later grades' figures on one line each. The
screen's look at other annotators' work (a 5 s timer, not the key's path) is switched off."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import synthetic  # noqa: E402
from adaptive_app_latency import pool  # noqa: E402
from route import Route, _module  # noqa: E402


class GradeRoute(Route):
    """`Route`, also counting the calls of each screen method named in `WATCHED`."""

    WATCHED = ("show_current",)

    def __init__(self) -> None:
        super().__init__()
        self.watched: Counter[str] = Counter()

    def _hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name in self.WATCHED:
            if _module(frame.f_code.co_filename) is not None:
                self.watched[frame.f_code.co_name] += 1
        super()._hook(frame, event, arg)

    def reset(self) -> None:
        """Forget what was counted (the hook stays on: a thread started before, the store's,
        is seen only when the route was entered before it started)."""
        self.files.clear()
        self._seen.clear()
        self.store_calls.clear()
        self.watched.clear()
        self.opens = 0

    def line(self) -> str:
        trips = ", ".join(f"{n} {name.split(':')[1]}" for name, n in self.store_calls.items())
        return (
            f"files entered {len(self.files)}, store round trips "
            f"{sum(self.store_calls.values())} ({trips}), "
            f"show_current {self.watched['show_current']}"
        )


async def grade_route(db: Path, grades: int) -> list[GradeRoute]:
    """One route per grade, each from the key to the next passage on the terminal."""
    from tui_fixtures import settle

    from workbench.store import open_store
    from workbench.tui import judging
    from workbench.tui.app import JudgeApp

    judging.LOOK_EVERY_S = 3600.0  # the look at other annotators' work is a timer's, not a key's
    store = open_store(db)
    routes = []
    try:
        route = GradeRoute()
        with route:  # entered before the app, so its store thread is seen
            app = JudgeApp(store, "bench")
            async with app.run_test(size=(120, 35)) as pilot:
                await settle(pilot, app)
                for n in range(grades):
                    shown = asyncio.Event()
                    app.screen.on_shown = lambda _key, e=shown: e.set()  # type: ignore[attr-defined]
                    route.reset()
                    await pilot.press("1" if n % 2 == 0 else "0")
                    await asyncio.wait_for(shown.wait(), 30)
                    routes.append(_copy(route))
                    await settle(pilot, app)
    finally:
        store.close()
    return routes


def _copy(route: GradeRoute) -> GradeRoute:
    copy = GradeRoute()
    copy.files = list(route.files)
    copy.store_calls = Counter(route.store_calls)
    copy.watched = Counter(route.watched)
    copy.opens = route.opens
    return copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=800)
    parser.add_argument("--queries", type=int, default=6)
    parser.add_argument("--grades", type=int, default=3)
    parser.add_argument("--files", action="store_true", help="every grade's files, in order")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        synthetic.main([str(folder), "--docs", str(args.docs), "--queries", str(args.queries)])
        for policy in ("static", "adaptive"):
            db = folder / f"{policy}.db"
            pool(folder, db, policy)
            routes = asyncio.run(grade_route(db, args.grades))
            print(f"== {policy}: grade key to the next passage on the terminal")
            print(routes[0].summary())
            print(f"show_current calls: {routes[0].watched['show_current']}")
            for n, route in enumerate(routes, start=1):
                print(f"grade {n}: {route.line()}")
                if args.files:
                    print("  " + " ".join(route.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
