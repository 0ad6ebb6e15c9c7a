"""What annotators asked for after real use: their own queue's place, relevant counts that say
their threshold, messages off the status line, a status that fits 80 and 120 columns, a lasting
done panel, help that explains, ellipsised query text in the overview."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import (
    build_store,
    press_settled,
    rows,
    run_async,
    screen_of,
    screen_text,
    settle,
    shown,
)

from workbench.core.model import Query
from workbench.core.pool.queue import JudgingQueue, QueueCounts
from workbench.store import Store
from workbench.tui.app import JudgeApp
from workbench.tui.judging import JudgingScreen
from workbench.tui.panels import DonePanel
from workbench.tui.passage import PassageView
from workbench.tui.status_lines import MessageLine, StatusLine, status_text


def status_of(app: JudgeApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def test_your_queue_counts_only_what_is_left_to_you() -> None:
    from workbench.core.model import Judgment, PoolEntry

    pool = [PoolEntry("q", f"d{i}", i) for i in range(6)]
    others = [Judgment("b", "q", f"d{i}", 1) for i in (0, 2, 3)]
    queue = JudgingQueue.from_judgments(pool, others, annotator="a", claims={"c": ("q", "d4")})
    # Open to a: d1 and d5 (d0, d2, d3 judged by b; d4 held by c).
    assert queue.current.doc_id == "d1"
    assert queue.your_queue() == (1, 2)
    queue.record(("q", "d1"), 2)
    assert queue.advance() and queue.your_queue() == (2, 2)
    # Nothing left to a newcomer once every item is judged by others.
    everyone = [Judgment("b", "q", f"d{i}", 0) for i in range(6)]
    assert JudgingQueue.from_judgments(pool, everyone, annotator="c").your_queue() == (0, 0)


@pytest.mark.parametrize("width", [78, 118])
def test_status_fits_80_and_120_columns_with_a_big_pool(width: int) -> None:
    text = status_text(
        width,
        (464, 467),
        (50, 50),
        QueueCounts(10, 10, 2, 4),
        QueueCounts(464, 467, 31, 92),
        1,
        "2 relevant",
        "",
    )
    plain = text.plain
    assert len(plain) <= width and "…" not in plain
    assert "queue 464/467" in plain and "query 50/50" in plain and "all" in plain
    assert "rel≥1: 2" in plain and "rel≥1: 31" in plain
    if width == 118:
        assert "graded 2 relevant" in plain and "(you 92, rel≥1: 31)" in plain


def test_status_cuts_a_long_note_with_an_ellipsis() -> None:
    one = QueueCounts(1, 3, 1)
    text = status_text(60, (1, 3), (1, 1), one, one, 2, None, "x" * 100).plain
    assert len(text) == 60 and text.endswith("…") and "rel≥2: 1" in text


@run_async
async def test_status_line_at_80_columns_is_not_cut(tmp_path: Path) -> None:
    store = build_store(tmp_path / "w.db", queries=12, per_query=40)
    app = JudgeApp(store, "a")
    async with app.run_test(size=(80, 30)) as pilot:
        await press_settled(pilot, app, "2")
        status = status_of(app)
        assert (
            status
            == "your queue 2/480 │ query 1/12: 1/40 done, rel≥1: 1 │ all: 1/480 done, rel≥1: 1"
        )
        # Back on the graded item, the grade (marked in the grade bar too) is what gives way.
        await press_settled(pilot, app, "k")
        status = status_of(app)
        assert (
            status
            == "your queue 1/480 │ query 1/12: 1/40 done, rel≥1: 1 │ all: 1/480 done, rel≥1: 1"
        )
    store.close()


@run_async
async def test_messages_go_to_the_message_line_and_clear(tmp_path: Path) -> None:
    store = build_store(tmp_path / "m.db", queries=1, per_query=3)
    app = JudgeApp(store, "a")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        screen_of(app).notify("short one", timeout=0.05)
        line = app.screen.query_one(MessageLine)
        assert line.message == "short one" and "short one" in str(line.render())
        await pilot.pause(1.2)  # timeouts are at least 1 s
        assert line.message == ""
        await press_settled(pilot, app, "s")
        assert "Skipped" in line.message and not app._notifications
    store.close()


@run_async
async def test_done_panel_stays_until_the_user_acts(tmp_path: Path) -> None:
    store = build_store(tmp_path / "d.db", queries=1, per_query=3)
    app = JudgeApp(store, "a")
    async with app.run_test(size=(100, 30)) as pilot:
        await press_settled(pilot, app, "0", "2", "3")
        screen = screen_of(app)
        done = screen.query_one(DonePanel)
        assert screen.finished and done.display and not screen.query_one(PassageView).display
        text = str(done.render())
        assert "Your queue is done: 3 graded (2 relevant, grade ≥ 1)" in text
        assert "Press o for the overview" in text and "workbench export" in text
        # Grade keys do nothing while the panel hides the passage; it stays after a while.
        await press_settled(pilot, app, "1")
        await pilot.pause(0.3)
        assert done.display and len(rows(store)) == 3
        # A move shows the last graded passage again.
        await press_settled(pilot, app, "k")
        assert not screen.finished and shown(app) == "d0-002"
        assert screen.query_one(PassageView).display
    # Opening a finished queue shows the panel at once.
    app = JudgeApp(store, "a")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        assert screen_of(app).finished
        await press_settled(pilot, app, "u")
        assert not screen_of(app).finished and shown(app) == "d0-002"
    assert rows(store)[-1] == ("d0-002", None, "")
    store.close()


@run_async
async def test_help_explains_grading_notes_and_blind_judging(tmp_path: Path) -> None:
    store = build_store(tmp_path / "h.db", queries=1, per_query=3)
    app = JudgeApp(store, "a", rel_threshold=2)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = " ".join(screen_text(app).split())
        assert "blind" in help_text and "same grade" in help_text
        assert "rel≥2" in help_text and "undo" in help_text and "skip" in help_text
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, JudgingScreen)
    store.close()


@run_async
async def test_overview_ends_long_query_text_with_an_ellipsis(tmp_path: Path) -> None:
    store = Store(tmp_path / "o.db", create=True)
    build = build_store(tmp_path / "src.db", queries=1, per_query=2)
    store.add_queries([Query("q0", "maize " + "very long words " * 20 + "END")])
    store.add_docs(build.docs(["d0-000", "d0-001"]).values())
    store.add_pool_entries(build.pool())
    build.close()
    app = JudgeApp(store, "a")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        table = app.screen.query_one("DataTable")
        assert [str(c.label) for c in table.columns.values()][2] == "rel≥1"
        line = "".join(s.text for s in table.render_line(1))
        assert "…" in line and "END" not in line
    store.close()


@run_async
async def test_a_cleared_warning_leaves_the_message_line_as_it_was(tmp_path: Path) -> None:
    """Its blank line kept the warning's colour (a screen after a 'store slow to answer'
    differed from one without: a snapshot failed on it)."""
    from workbench.tui.status_lines import MessageLine

    store = build_store(tmp_path / "m.db", queries=1, per_query=2)
    app = JudgeApp(store, "a")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        line = app.screen.query_one(MessageLine)
        before = set(line.classes)
        line.say("store slow to answer: waiting…", severity="warning")
        await pilot.pause()
        assert "-warning" in line.classes
        line.clear()
        await pilot.pause()
        assert set(line.classes) == before and line.severity == "information"
    store.close()
