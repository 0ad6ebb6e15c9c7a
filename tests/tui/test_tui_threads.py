"""The UI thread never calls the store: every read and write the screens make runs on the store
thread (or, for the overview's coverage, a worker). A proxy records the thread of every store
call while the app starts, grades, notes, undoes, skips, moves, jumps, looks, adjudicates and
quits; none may be the app's (main) thread."""

from __future__ import annotations

import threading
from pathlib import Path

from tui_fixtures import (
    build_store,
    disagreeing_store,
    press_settled,
    run_async,
    screen_of,
    settle,
    shown,
)

from workbench.core.agreement.adjudication import disputes
from workbench.core.errors import InputError
from workbench.store import Store
from workbench.tui.app import JudgeApp

SIZE = (100, 30)


class ThreadRecordingStore:
    """Passes every call on to `store`, noting the method and the thread it was made on."""

    def __init__(self, store: Store):
        self._store = store
        self.calls: list[tuple[str, threading.Thread]] = []

    def __getattr__(self, name: str) -> object:
        value = getattr(self._store, name)
        if not callable(value):
            return value

        def call(*args: object, **kwargs: object) -> object:
            self.calls.append((name, threading.current_thread()))
            return value(*args, **kwargs)

        return call

    def on_ui_thread(self) -> list[str]:
        return [name for name, thread in self.calls if thread is threading.main_thread()]

    def names(self) -> set[str]:
        return {name for name, _ in self.calls}


@run_async
async def test_the_judging_screen_never_calls_the_store_on_the_ui_thread(tmp_path: Path) -> None:
    assert threading.current_thread() is threading.main_thread()  # Pilot runs the app here
    store = build_store(tmp_path / "t.db", queries=3, per_query=80)
    proxy = ThreadRecordingStore(store)
    app = JudgeApp(proxy, "a")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "2", "1")
        await press_settled(pilot, app, "n", *"why", "enter", "3", "u", "s", "k", "j", "0")
        await pilot.press("slash", *"q2", "enter")  # far from the passages read ahead
        await settle(pilot, app)
        assert shown(app) == "d2-000"
        assert "Passage Q2-000" in str(app.screen.query_one("#passage-text").render())
        await pilot.press("1", "o")
        await pilot.pause(0.3)
        await pilot.press("escape")
        screen_of(app)._look()
        await settle(pilot, app)
        # A regrade of an item graded in an earlier place of the queue, by k and u.
        await press_settled(pilot, app, "u", "u", "2")
    assert proxy.on_ui_thread() == []
    assert {"current_judgments", "docs", "add_judgment", "claim", "release_claim"} <= proxy.names()
    assert [j.grade for j in store.judgments("a")][:3] == [2, 1, 3]
    store.close()


@run_async
async def test_the_adjudication_screen_never_calls_the_store_on_the_ui_thread(
    tmp_path: Path,
) -> None:
    store = disagreeing_store(tmp_path / "a.db")
    worklist = disputes(store.judgments())
    proxy = ThreadRecordingStore(store)
    app = JudgeApp(proxy, "lead", disputes=worklist)  # type: ignore[arg-type]
    async with app.run_test(size=(110, 32)) as pilot:
        await press_settled(pilot, app, "2")
        await press_settled(pilot, app, "k", "n", *"sure", "enter", "j", "1")
    assert proxy.on_ui_thread() == []
    assert {"queries", "grade_scale", "docs", "add_judgment"} <= proxy.names()
    assert [(j.doc_id, j.grade) for j in store.judgments("lead")] == [
        ("d0-001", 2),
        ("d0-001", 2),
        ("d1-000", 1),
    ]
    store.close()


class FailingStore(ThreadRecordingStore):
    """A store whose `failing` methods raise as a damaged one would."""

    def __init__(self, store: Store, failing: set[str]):
        super().__init__(store)
        self.failing = failing

    def __getattr__(self, name: str) -> object:
        if name in self.failing:

            def fail(*args: object, **kwargs: object) -> object:
                raise InputError([f"{self._store.path}: damaged ({name})"])

            return fail
        return super().__getattr__(name)


@run_async
async def test_a_passage_that_cannot_be_read_is_said_in_its_place(tmp_path: Path) -> None:
    store = build_store(tmp_path / "p.db", queries=1, per_query=3)
    app = JudgeApp(FailingStore(store, {"docs"}), "a")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        text = str(app.screen.query_one("#passage-text").render())
        assert "passage d0-000 could not be read: InputError" in text
        await pilot.press("2")  # grading goes on: the grade is the annotator's to give
        await settle(pilot, app)
        assert shown(app) == "d0-001"
    assert [(j.doc_id, j.grade) for j in store.judgments("a")] == [("d0-000", 2)]
    store.close()


@run_async
async def test_a_store_that_cannot_be_read_at_start_closes_the_app_with_exit_2(
    tmp_path: Path,
) -> None:
    """A store no workbench wrote (an input error, with its table and row) closes the app at
    once with return code 2 and the store's line, which `workbench judge` prints and exits 2
    with (tests/tui/test_judge_crash.py, on a pty): not an app left open on an error."""
    store = build_store(tmp_path / "s.db", queries=1, per_query=3)
    app = JudgeApp(FailingStore(store, {"current_judgments"}), "a")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")  # waits for the start read, grades nothing
        for _ in range(100):
            if not app.is_running:
                break
            await pilot.pause(0.02)
        assert not app.is_running
    assert app.return_code == 2
    assert app.damaged is not None and "damaged (current_judgments)" in app.damaged
    assert store.judgments() == []
    store.close()


@run_async
async def test_a_store_that_stops_answering_at_start_is_said_and_q_quits(tmp_path: Path) -> None:
    """Any other failure of the start read (not the store's own input error) is said on the
    screen, and q quits."""
    store = build_store(tmp_path / "s.db", queries=1, per_query=3)
    broken = FailingStore(store, set())

    def fail(*args: object, **kwargs: object) -> object:
        raise OSError("disk I/O error")

    broken.current_judgments = fail  # type: ignore[method-assign]
    app = JudgeApp(broken, "a")  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")  # waits for the start read, then does nothing
        await settle(pilot, app)
        text = str(app.screen.query_one("#passage-text").render())
        assert "The store could not be read: OSError: disk I/O error" in text
        await pilot.press("q")
        await pilot.pause(0.2)
        assert not app.is_running
    assert app.damaged is None
    assert store.judgments() == []
    store.close()


def test_passages_read_ahead_are_those_the_next_keys_show() -> None:
    from workbench.core.model import Judgment, PoolEntry
    from workbench.core.pool.queue import JudgingQueue
    from workbench.flows.judging_start import jump_targets, upcoming

    pool = [PoolEntry(f"q{q}", f"d{q}{i}", i) for q in range(3) for i in range(4)]
    mine = [Judgment("a", "q0", f"d0{i}", 1) for i in range(4)]  # q0 all graded
    mine.append(Judgment("a", "q1", "d10", 2))
    others = [Judgment("b", "q1", "d11", 0), Judgment("b", "q2", "d20", 0)]
    queue = JudgingQueue.from_judgments(pool, [*mine, *others], annotator="a")
    assert queue.current is not None and queue.current.doc_id == "d12"
    # current, k (d10, own), j (d13), u (d10 again, once), then the open ones in order, wrapping
    assert upcoming(queue, 3) == ["d12", "d10", "d13", "d21", "d22"]
    assert upcoming(queue, 1) == ["d12", "d10", "d13"]
    # A jump shows a query's first open item, else its first own one.
    assert jump_targets(queue) == ["d00", "d12", "d21"]
