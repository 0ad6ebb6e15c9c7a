"""The judging app driven with Pilot; every assertion reads the store, not the messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import (
    build_store,
    dialog_text,
    press_settled,
    rows,
    run_async,
    screen_of,
    settle,
    shown,
)

from workbench import __version__
from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.store import Store
from workbench.tui.app import JudgeApp
from workbench.tui.panels import ProvenancePanel
from workbench.tui.status_lines import MessageLine, StatusLine

SIZE = (100, 30)


BOTH_BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"])
"""The screen's behaviour sits above the store, so most tests run on SQLite once; those that
read and write through the store thread in ways a backend could change run on both."""


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """The app tests' store: SQLite, or PostgreSQL for the tests marked BOTH_BACKENDS."""
    location = (
        request.getfixturevalue("pg_url") if backend == "postgres" else str(tmp_path / "j.db")
    )
    built = build_store(location)
    yield built
    built.close()


@BOTH_BACKENDS
@run_async
async def test_grading_commits_and_advances(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert shown(app) == "d0-000"
        await press_settled(pilot, app, "2")
        assert rows(store) == [("d0-000", 2, "")]
        assert shown(app) == "d0-001"
        # Each key grades the passage on screen when it is pressed.
        await press_settled(pilot, app, "0", "3", "1")
        assert shown(app) == "d0-004"
    assert rows(store) == [
        ("d0-000", 2, ""),
        ("d0-001", 0, ""),
        ("d0-002", 3, ""),
        ("d0-003", 1, ""),
    ]
    first = store.judgments("a")[0]
    assert first.app_version == __version__
    assert 0 < first.shown_at <= first.graded_at
    assert first.elapsed_ms == pytest.approx((first.graded_at - first.shown_at) * 1000, abs=2)


@BOTH_BACKENDS
@run_async
async def test_undo_writes_null_row_and_returns_to_item(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "2", "3")
        assert shown(app) == "d0-002"
        await press_settled(pilot, app, "u")
        assert shown(app) == "d0-001"
        assert rows(store) == [("d0-000", 2, ""), ("d0-001", 3, ""), ("d0-001", None, "")]
        assert [(j.doc_id, j.grade) for j in store.current_judgments("a")] == [("d0-000", 2)]
        await press_settled(pilot, app, "u")
        assert shown(app) == "d0-000"
        assert store.current_judgments("a") == []
        await press_settled(pilot, app, "1")
        assert shown(app) == "d0-001"
    assert len(store.judgments("a")) == 5


@run_async
async def test_skip_comes_back_at_end(tmp_path: Path) -> None:
    store = build_store(tmp_path / "s.db", queries=1, per_query=3)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "s")
        assert shown(app) == "d0-001"
        await press_settled(pilot, app, "1", "0")
        assert shown(app) == "d0-000"
        await press_settled(pilot, app, "2")
    assert rows(store) == [("d0-001", 1, ""), ("d0-002", 0, ""), ("d0-000", 2, "")]
    store.close()


@run_async
async def test_note_is_stored_with_the_grade(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.press(*"off topic")
        await press_settled(pilot, app, "enter", "1")
        # A note on an already graded item appends a row with the same grade and the note.
        await pilot.press("k", "n", "ctrl+u")
        await press_settled(pilot, app, *"recheck", "enter")
    assert rows(store) == [("d0-000", 1, "off topic"), ("d0-000", 1, "recheck")]


@run_async
async def test_an_emptied_note_is_removed_and_said(store: Store) -> None:
    """The store is append-only: a graded passage's note is removed by a new row, same grade,
    no note (the current row's note is the one exports take); a note still waiting for its
    grade is simply dropped. Each is said as what it is, never "Note kept"."""
    from textual.widgets import Input

    from workbench.core.judgments.resolve import pair_notes

    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        line = app.screen.query_one(MessageLine)
        status = app.screen.query_one(StatusLine)
        await press_settled(pilot, app, "n", *"typo", "enter")
        assert line.message == "Note kept for d0-000: saved with its grade"
        assert "note: typo" in str(status.render())
        await press_settled(pilot, app, "n", "ctrl+u", "enter")
        assert line.message == "Note removed from d0-000"
        assert "note:" not in str(status.render())
        await press_settled(pilot, app, "1")
        assert rows(store) == [("d0-000", 1, "")]
        # Graded: the note is saved at once; the dialog opens on it.
        await press_settled(pilot, app, "k", "n", *"off topic", "enter")
        assert line.message.startswith("Note saved for d0-000")
        await press_settled(pilot, app, "n")
        assert app.screen.query_one(Input).value == "off topic"
        await press_settled(pilot, app, "enter")  # unchanged: nothing written
        assert line.message == "Note unchanged"
        await press_settled(pilot, app, "n", "ctrl+u", "enter")
        assert line.message.startswith("Note removed from d0-000")
        assert "note:" not in str(status.render())
        await press_settled(pilot, app, "n", "enter")  # still none: nothing written
        assert line.message == "No note added"
    assert rows(store) == [("d0-000", 1, ""), ("d0-000", 1, "off topic"), ("d0-000", 1, "")]
    assert [j.note for j in store.current_judgments("a")] == [""]
    assert pair_notes(store.current_judgments()) == {}


@run_async
async def test_a_note_after_a_grade_names_the_passage_it_goes_to(store: Store) -> None:
    """A grade moves on: n then opens on the next passage. The dialog says which one, where it
    is, that it is not graded yet, and how to reach the one just graded."""
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "2", "n")
        text = dialog_text(app.screen)
        assert "Note for d0-001, query q0, passage 2/30 of your queue" in text
        assert "not graded yet" in text and "Escape, then k" in text
        await press_settled(pilot, app, "escape", "k", "n")
        text = dialog_text(app.screen)
        assert "Note for d0-000, query q0, passage 1/30" in text and "graded 2 relevant" in text
        await press_settled(pilot, app, *"why", "enter")
    assert rows(store) == [("d0-000", 2, ""), ("d0-000", 2, "why")]


@run_async
async def test_a_regrade_keeps_the_note(store: Store) -> None:
    """Changing a grade (k, then another key) keeps the passage's note, as undo does."""
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "n", *"off topic", "enter", "1", "k", "3")
    assert rows(store) == [("d0-000", 1, "off topic"), ("d0-000", 3, "off topic")]


@run_async
async def test_an_undone_grade_keeps_its_note_for_the_regrade(store: Store) -> None:
    """Undo then regrade: the note typed with the first grade is not lost, in this session
    or after a restart (the store holds it)."""
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "n", *"off topic", "enter", "1")
        await pilot.press("u")
        await settle(pilot, app)
        assert shown(app) == "d0-000"
        await press_settled(pilot, app, "2")
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("u")  # undo in a new session: the note comes from the store
        await settle(pilot, app)
        await pilot.press("3")
        await settle(pilot, app)
    graded = [r for r in rows(store) if r[1] is not None]
    assert graded == [("d0-000", 1, "off topic"), ("d0-000", 2, "off topic"),
                      ("d0-000", 3, "off topic")]  # fmt: skip


@BOTH_BACKENDS
@run_async
async def test_resume_continues_at_first_unjudged(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "2", "2", "0", "u")
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert shown(app) == "d0-002"
        await press_settled(pilot, app, "3")
        assert shown(app) == "d0-003"
        # Undo reaches grades given in the earlier session.
        await press_settled(pilot, app, "u", "u")
        assert shown(app) == "d0-001"
    # The pool is shared: another annotator starts at the first item nobody has judged.
    app = JudgeApp(store, "b")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert shown(app) == "d0-001"


@run_async
async def test_reveal_only_after_grading(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        panel = app.screen.query_one(ProvenancePanel)
        await pilot.press("r")
        await pilot.pause()
        assert not panel.display and not screen_of(app).revealed
        # The refusal is on the message line; no toast covers the grade bar or the status.
        assert "Grade it first" in app.screen.query_one(MessageLine).message
        assert not app._notifications
        await press_settled(pilot, app, "2")
        await press_settled(pilot, app, "k", "r")
        assert panel.display
        assert "bm25 rank 1" in str(panel.render())
        assert "not sway" in app.screen.query_one(MessageLine).message
        await press_settled(pilot, app, "j")
        assert not panel.display


@run_async
async def test_markup_in_passage_is_literal(tmp_path: Path) -> None:
    markup = "[bold]loud[/bold] [@click=app.quit]quit[/] [link=https://x.test]x[/link]"
    store = Store(tmp_path / "m.db", create=True)
    store.add_queries([Query("q", "loud quit")])
    store.add_docs([Doc("d", markup + " 日本語 مرحبا Ẹ̀kọ́", "[b]title[/b] [@click=app.bell]t[/]")])
    store.add_docs([Doc("e", "[@click=app.quit]" * 40)])
    store.add_pool_entries([PoolEntry("q", "d", 0), PoolEntry("q", "e", 1)])
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        body = app.screen.query_one("#passage-text")
        rendered = str(body.render())
        assert markup in rendered and "[b]title[/b] [@click=app.bell]t[/]" in rendered
        # Were it parsed, "quit" would sit in columns 5-8 of the text line, acting on a click.
        for x in range(0, 40, 2):
            await pilot.click(body, offset=(x, 2))
        await press_settled(pilot, app, "j")
        for y in range(0, 4):
            await pilot.click(body, offset=(10, y))
        assert app.is_running and app.return_code is None
        assert shown(app) == "e"
        assert rows(store) == []
    store.close()


@run_async
async def test_mouse_grade_button_and_keymap(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.click("#grade-button-3")
        await settle(pilot, app)
        app.set_keymap({"grade-1": "x"})
        await press_settled(pilot, app, "x")
        await press_settled(pilot, app, "right", "right", "left")
        assert shown(app) == "d0-003"
    assert rows(store) == [("d0-000", 3, ""), ("d0-001", 1, "")]


@run_async
async def test_overview_picks_a_query(store: Store) -> None:
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "o", "down", "down", "enter")
        assert shown(app) == "d2-000"
        await press_settled(pilot, app, "slash", *"q1", "enter")
        assert shown(app) == "d1-000"
        # In the overview the list has the focus: typing there filters too (it went nowhere).
        await press_settled(pilot, app, "o")
        await press_settled(pilot, app, *"q2", "enter")
        assert shown(app) == "d2-000"
        commands = [c.title for c in app.get_system_commands(app.screen)]
        assert "Grade 2: relevant" in commands and "Undo" in commands


@run_async
async def test_grade_scale_comes_from_the_store(tmp_path: Path) -> None:
    store = build_store(tmp_path / "g.db", queries=1, per_query=3)
    store.set_grade_scale({0: "off topic", 1: "on topic"})
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "3", "1")
        labels = [str(b.label) for b in app.screen.query("GradeButton")]
        assert labels == ["0 off topic", "1 on topic"]
    assert rows(store) == [("d0-000", 1, "")]
    store.close()


@run_async
async def test_two_annotators_split_the_shared_queue(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    build_store(path).close()
    store_a, store_b = Store(path), Store(path)
    app_a, app_b = JudgeApp(store_a, "a"), JudgeApp(store_b, "b")
    async with app_a.run_test(size=SIZE) as pilot_a:
        await settle(pilot_a, app_a)
        async with app_b.run_test(size=SIZE) as pilot_b:
            await settle(pilot_b, app_b)
            # b opened while a held d0-000: b starts on the next item.
            assert (shown(app_a), shown(app_b)) == ("d0-000", "d0-001")
            for turn in range(12):
                await pilot_a.press(str(turn % 4))
                await settle(pilot_a, app_a)
                await pilot_b.press(str((turn + 1) % 4))
                await settle(pilot_b, app_b)
            # a's figures include b's last grade after a look at the store.
            screen_of(app_a)._look()
            await settle(pilot_a, app_a)
            status = str(app_a.screen.query_one(StatusLine).render())
            assert "all: 24/30 done (you 12," in status
    store_a.close()
    store_b.close()
    with Store(path) as check:
        rows_a = [(j.doc_id, j.grade) for j in check.judgments("a")]
        rows_b = [(j.doc_id, j.grade) for j in check.judgments("b")]
        assert [g for _, g in rows_a] == [t % 4 for t in range(12)]
        assert [g for _, g in rows_b] == [(t + 1) % 4 for t in range(12)]
        docs_a, docs_b = {d for d, _ in rows_a}, {d for d, _ in rows_b}
        assert not docs_a & docs_b
        # Together they judged the first 24 items of the queue, each once.
        first = [e.doc_id for e in check.pool()][:24]
        assert docs_a | docs_b == set(first)
        assert check.claims() == {}


@run_async
async def test_two_annotators_typing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    build_store(path).close()
    store_a, store_b = Store(path), Store(path)
    app_a, app_b = JudgeApp(store_a, "a"), JudgeApp(store_b, "b")
    async with app_a.run_test(size=SIZE) as pilot_a, app_b.run_test(size=SIZE) as pilot_b:
        for turn in range(12):  # each grades the passage on its screen, both at once
            await settle(pilot_a, app_a)
            await settle(pilot_b, app_b)
            await pilot_a.press(str(turn % 4))
            await pilot_b.press(str((turn + 1) % 4))
        await settle(pilot_a, app_a)
        await settle(pilot_b, app_b)
    store_a.close()
    store_b.close()
    with Store(path) as check:
        # Every key became a row, in order; a race may give an item one judgment too many.
        assert [j.grade for j in check.judgments("a")] == [t % 4 for t in range(12)]
        assert [j.grade for j in check.judgments("b")] == [(t + 1) % 4 for t in range(12)]
        assert all(isinstance(j, Judgment) for j in check.judgments())


@run_async
async def test_overlap_items_reach_a_second_annotator_blind(tmp_path: Path) -> None:
    store = build_store(tmp_path / "o.db", queries=1, per_query=6)
    store.set_required_judges({("q0", "d0-001"): 2, ("q0", "d0-004"): 2})
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, *"302113")
    assert [j.doc_id for j in store.judgments("a")] == [f"d0-{i:03d}" for i in range(6)]
    app = JudgeApp(store, "b")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert shown(app) == "d0-001"
        status = str(app.screen.query_one(StatusLine).render())
        # b's own queue is the two overlap items, not the 6-item pool.
        assert status.startswith("your queue 1/2 │ ")
        assert "query 1/1: 4/6 done (you 0, rel≥1: 0)" in status
        assert "graded" not in status  # a's grade of this item is not shown
        await press_settled(pilot, app, "1")
        assert shown(app) == "d0-004"
        status = str(app.screen.query_one(StatusLine).render())
        assert status.startswith("your queue 2/2 │ ")
        await press_settled(pilot, app, "0")
        assert screen_of(app).session.queue.done
        status = str(app.screen.query_one(StatusLine).render())
        assert "6/6 (you 2, rel≥1: 1)" in status
    assert [(j.doc_id, j.grade) for j in store.judgments("b")] == [
        ("d0-001", 1),
        ("d0-004", 0),
    ]
    store.close()


@BOTH_BACKENDS
@run_async
async def test_overview_opens_at_once_and_fills_coverage_from_a_worker(store: Store) -> None:
    import threading

    from workbench.core.coverage import CoverageReport
    from workbench.flows.coverage import coverage_for_store
    from workbench.tui.coverage_panel import CoveragePanel

    release = threading.Event()

    def slow_coverage() -> CoverageReport:
        release.wait(5)
        return coverage_for_store(store)

    app = JudgeApp(store, "a")
    async with app.run_test(size=(120, 40)) as pilot:
        await press_settled(pilot, app, "2", "0")
        screen_of(app).coverage = slow_coverage
        await pilot.press("o")
        await pilot.pause()
        # The list is there while the report is still being computed.
        picker = app.screen
        assert picker.query_one("DataTable").row_count == 3
        panel = picker.query_one(CoveragePanel)
        assert "computing coverage" in str(panel.query_one("#coverage-text").render())
        release.set()
        for _ in range(200):
            await pilot.pause(0.02)
            text = str(panel.query_one("#coverage-text").render())
            if "computing" not in text:
                break
        assert "0 complete · 0 incomplete · 3 unmeasured" in text
        assert "judged 2/30 (pool + sample), 1 relevant (grade ≥ 1)" in text
        assert text.count("unmeasured") == 4  # the summary and one line per query
        await pilot.press("escape")
        # A report that cannot be computed says why; the app goes on.
        screen_of(app).coverage = lambda: 1 / 0
        await pilot.press("o")
        for _ in range(100):
            await pilot.pause(0.02)
            text = str(app.screen.query_one("#coverage-text").render())
            if "computing" not in text:
                break
        assert "coverage unavailable: ZeroDivisionError" in text
        await press_settled(pilot, app, "escape", "3")
    assert rows(store) == [("d0-000", 2, ""), ("d0-001", 0, ""), ("d0-002", 3, "")]


@run_async
async def test_revealing_an_outside_pool_sample_says_what_it_is(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db", create=True)
    store.add_queries([Query("q", "maize")])
    store.add_docs([Doc("d", "maize text"), Doc("s", "other text")])
    store.add_pool_entries(
        [
            PoolEntry("q", "s", 0, stratum="rank:21-50", inclusion_prob=0.1),
            PoolEntry("q", "d", 1, provenance=(Provenance("bm25", 1, 3.0),)),
        ]
    )
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("0")
        await settle(pilot, app)
        await pilot.press("r")
        await settle(pilot, app)
        assert "k: back to" in app.screen.query_one(MessageLine).message
        await press_settled(pilot, app, "k", "r")
        rendered = str(app.screen.query_one(ProvenancePanel).render())
        assert "random sample from outside the pool" in rendered and "rank:21-50" in rendered
