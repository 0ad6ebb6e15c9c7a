"""Snapshots of the judging screen at the sizes annotators use (80x24, a laptop's 120x40): a
change to what the screen shows fails here until its SVG is looked at and updated
(`pytest tests/tui/test_tui_snapshots.py --snapshot-update`). Each is taken once the app has
settled (every read and write served, the status line caught up), never mid-update."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import build_store, press_settled, settle

from workbench.tui.app import JudgeApp


@pytest.fixture
def app(tmp_path: Path) -> JudgeApp:
    store = build_store(tmp_path / "study.db", queries=2, per_query=4, words=60)
    yield JudgeApp(store, "ann")
    store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_the_judging_screen(app: JudgeApp, snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(app, terminal_size=size, run_before=lambda pilot: settle(pilot, app))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_after_two_grades(app: JudgeApp, snap_compare, size: tuple[int, int]) -> None:
    grade = lambda pilot: press_settled(pilot, app, "2", "0")  # noqa: E731
    assert snap_compare(app, terminal_size=size, run_before=grade)


def test_the_help_at_80x24(app: JudgeApp, snap_compare) -> None:
    helped = lambda pilot: press_settled(pilot, app, "question_mark")  # noqa: E731
    assert snap_compare(app, terminal_size=(80, 24), run_before=helped)
