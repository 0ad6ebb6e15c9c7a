"""Data from the store (ids, query text, narratives, titles, passages, notes, annotator and
system names, store file names) is shown literally on every screen: markup never parses, a
terminal escape sequence shows as ␛ and never acts, nothing crashes."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.content import Content
from textual.events import Paste
from textual.widgets import Input
from tui_fixtures import (
    CLEAR,
    OSC_TITLE,
    SGR_RED,
    assert_inert,
    assert_no_click_actions,
    build_hostile_store,
    build_store,
    press_settled,
    run_async,
    screen_of,
    screen_text,
    settle,
    shown,
)

from workbench.core.agreement.adjudication import disputes
from workbench.core.coverage import coverage_report
from workbench.core.model import Doc, Judgment, PoolEntry, Query
from workbench.core.pool.queue import QueueCounts
from workbench.store import Store
from workbench.tui.adjudicate import AdjudicationScreen, Opinions
from workbench.tui.app import JudgeApp
from workbench.tui.coverage_panel import render_coverage
from workbench.tui.panels import DonePanel, ProvenancePanel
from workbench.tui.passage import PassageView
from workbench.tui.pickers import NoteScreen, QueryPicker
from workbench.tui.status_lines import MessageLine, StatusLine, status_text

SIZE = (120, 40)


def border_title(widget) -> str:  # type: ignore[no-untyped-def]
    """The border title as drawn (its plain text)."""
    return widget._border_title.plain


@run_async
async def test_judging_screen_shows_ids_text_and_run_tags_literally(tmp_path: Path) -> None:
    store = build_hostile_store(tmp_path / "h.db")
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        # The resume point is the d[/] item: the app opens on it (it crashed here before).
        await settle(pilot, app)
        assert app.is_running and shown(app) == "d[/]"
        passage = app.screen.query_one(PassageView)
        assert border_title(passage) == "d[/]"
        text = screen_text(app)
        assert_inert(text)
        for literal in (
            "q[/]",
            "maize ␛]2;TITLE␇pest [b]x[/b]",
            "Relevant: ␛]52;c;aGk=␇[@click=app.quit]q ␛[2J",
            "Title 0 ␛]2;TITLE␇[b]x[/b] d[/]",
            "text ␛[31mred [b]x[/b] [@click=app.quit]q d[/]",
        ):
            assert literal in text, literal
        await press_settled(pilot, app, "2")
        assert shown(app) == "a[b].md#2" and border_title(passage) == "a[b].md#2"
        await press_settled(pilot, app, "1")
        assert border_title(passage) == "e␛[31m1"
        assert_inert(screen_text(app))
        # The run tags, revealed after grading.
        await press_settled(pilot, app, "0", "k", "r")
        provenance = str(app.screen.query_one(ProvenancePanel).render())
        assert "[@click=app.quit]bm25 rank 1" in provenance and "dense␛[31m[/] rank 2" in provenance
        text = screen_text(app)
        assert_inert(text)
        assert "[@click=app.quit]bm25" in text
        assert_no_click_actions(app)
        assert app.is_running and app.return_code is None
    assert [(j.doc_id, j.grade) for j in store.judgments("a")] == [
        ("d[/]", 2),
        ("a[b].md#2", 1),
        (f"e{SGR_RED}1", 0),
    ]
    store.close()


@run_async
async def test_a_click_on_a_markup_doc_id_does_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db", create=True)
    store.add_queries([Query("q", "maize")])
    store.add_docs([Doc("[@click=app.quit]q", "maize text")])
    store.add_pool_entries([PoolEntry("q", "[@click=app.quit]q", 0)])
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        passage = app.screen.query_one(PassageView)
        assert border_title(passage) == "[@click=app.quit]q"
        # The border title sits at the left of the passage's top edge: click each of its cells.
        for x in range(passage.region.x, min(passage.region.right, passage.region.x + 24)):
            await pilot.click(offset=(x, passage.region.y))
        await pilot.pause()
        assert app.is_running and app.return_code is None
    store.close()


@run_async
async def test_annotator_name_and_store_name_in_the_help_are_literal(tmp_path: Path) -> None:
    """The judging screen has no header: its help's title names who judges in which store."""
    store = build_hostile_store(tmp_path / f"s{SGR_RED}[b]x[@click=app.quit]q.db")
    app = JudgeApp(store, "[@click=app.quit]q")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        title = next(line for line in screen_text(app).splitlines() if "Help · " in line)
        assert "[@click=app.quit]q · s␛[31m[b]x[@click=app.quit]q.db" in title
        assert_inert(title)
        assert_no_click_actions(app)
        assert app.is_running and app.return_code is None
    store.close()


@run_async
async def test_note_screen_and_status_show_notes_and_ids_literally(tmp_path: Path) -> None:
    store = build_hostile_store(tmp_path / "n.db")
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "2", "1")
        assert shown(app) == f"e{SGR_RED}1"
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteScreen)
        text = screen_text(app)
        assert "Note for e␛[31m1" in text
        assert_inert(text)
        await pilot.press(*"[b]why[/b] d[/]")
        # A pasted escape sequence shows as ␛ in the input and is kept as shown.
        note_input = app.screen.query_one(Input)
        note_input.post_message(Paste(f" {CLEAR}"))
        await pilot.pause()
        assert note_input.value == "[b]why[/b] d[/] ␛[2J"
        assert_inert(screen_text(app))
        await press_settled(pilot, app, "enter")
        status = str(app.screen.query_one(StatusLine).render())
        assert "note: [b]why[/b] d[/] ␛[2J" in status
        await press_settled(pilot, app, "3")
    assert store.judgments("a")[-1].note == "[b]why[/b] d[/] ␛[2J"
    store.close()
    one = QueueCounts(1, 3, 1)
    note = f"{OSC_TITLE}[b]n[/b]{CLEAR}"
    plain = status_text(200, (1, 3), (1, 1), one, one, 1, None, note).plain
    assert "note: ␛]2;TITLE␇[b]n[/b]␛[2J" in plain
    assert_inert(plain)


@run_async
async def test_messages_and_notices_are_literal(tmp_path: Path) -> None:
    store = build_hostile_store(tmp_path / "m.db")
    notice = f"The demo pool was built without [b]rerank[/b]: d[/] {OSC_TITLE}"
    app = JudgeApp(store, "a", notices=(notice,))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        line = app.screen.query_one(MessageLine)
        rendered = str(line.render())
        assert "without [b]rerank[/b]: d[/] ␛]2;TITLE␇" in rendered
        assert not app._notifications  # not a toast over the query and its narrative
        screen_of(app).notify(f"Nothing in q[/] {CLEAR} is left", severity="error")
        await pilot.pause()
        assert "Nothing in q[/] ␛[2J is left" in str(line.render())
        assert_inert(screen_text(app))
    store.close()


@run_async
async def test_overview_and_coverage_are_literal(tmp_path: Path) -> None:
    store = build_hostile_store(tmp_path / "o.db")
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "2")
        await pilot.press("o")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, QueryPicker)
        for _ in range(200):
            await pilot.pause(0.02)
            if "computing" not in str(picker.query_one("#coverage-text").render()):
                break
        text = screen_text(app)
        assert_inert(text)
        assert "q[/]" in text and "maize ␛]2;TITLE␇pest [b]x[/b]" in text
        coverage = str(picker.query_one("#coverage-text").render())
        assert "q[/]" in coverage and "unavailable" not in coverage
        await pilot.press("escape")
        await pilot.pause()
        await press_settled(pilot, app, "slash", *"q[/]", "enter")
        assert shown(app) == "a[b].md#2"
    store.close()
    report = coverage_report([], {}, 0, query_ids=[f"q{CLEAR}[/]"])
    plain = render_coverage(report).plain
    assert "q␛[2J[/]" in plain
    assert_inert(plain)


@run_async
async def test_done_panel_after_a_hostile_queue(tmp_path: Path) -> None:
    store = build_hostile_store(tmp_path / "d.db")
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await press_settled(pilot, app, "0", "1", "2", "3", "0")
        screen = screen_of(app)
        assert screen.finished and screen.query_one(DonePanel).display
        text = screen_text(app)
        assert "Your queue is done: 5 graded" in text and "q[/]" in text
        assert_inert(text)
    store.close()


@run_async
async def test_adjudication_cards_show_names_and_notes_literally(tmp_path: Path) -> None:
    store = build_hostile_store(tmp_path / "a.db")
    for annotator, grade, note in (
        ("d[/]", 3, f"[b]sure[/b] {OSC_TITLE}"),
        ("[@click=app.quit]q", 0, f"no {CLEAR}d[/]"),
    ):
        store.add_judgment(Judgment(annotator, "q[/]", "a[b].md#2", grade, note))
    store.set_grade_scale({0: "[b]no[/b]", 1: "d[/]", 2: "two", 3: f"three{SGR_RED}"})
    app = JudgeApp(store, "lead", disputes=disputes(store.judgments()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        cards = list(screen.query_one(Opinions).children)
        assert [border_title(c) for c in cards] == ["[@click=app.quit]q", "d[/]"]
        text = screen_text(app)
        assert_inert(text)
        for literal in (
            "0 [b]no[/b]",
            "no ␛[2Jd[/]",
            "3 three␛[31m",
            "[b]sure[/b] ␛]2;TITLE␇",
            "q[/] · a[b].md#2",
            "1 d[/]",
        ):
            assert literal in text, literal
        # A toast quoting data (e.g. a save error naming the pair) is literal too.
        screen.notify("Not saved: d[/] [@click=app.quit]q")
        await pilot.pause()
        assert app.is_running
        assert_no_click_actions(app)
        assert app.is_running and app.return_code is None
        await press_settled(pilot, app, "n", *"[b]x[/b]", "enter", "2")
    assert [(j.doc_id, j.grade, j.note) for j in store.judgments("lead")] == [
        ("a[b].md#2", 2, "[b]x[/b]")
    ]
    store.close()


@run_async
async def test_palette_commands_and_grade_buttons_keep_the_scale_wording(tmp_path: Path) -> None:
    store = build_store(tmp_path / "p.db", queries=1, per_query=2)
    store.set_grade_scale({0: "[b]no[/b]", 1: f"d[/]{SGR_RED}"})
    app = JudgeApp(store, "a")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        grades = [Content.from_markup(t).plain for t in titles if t.startswith("Grade ")]
        assert grades == ["Grade 0: [b]no[/b]", "Grade 1: d[/]␛[31m"]
        labels = [str(b.label) for b in app.screen.query("GradeButton")]
        assert labels == ["0 [b]no[/b]", "1 d[/]␛[31m"]
        assert_inert(screen_text(app))
    store.close()


def test_highlight_runs_over_the_visible_text() -> None:
    from workbench.tui.highlight import highlight, query_terms

    # A C1 control widens to 4 characters: the spans still fall on the words.
    rendered = highlight(f"\x9b{SGR_RED} maize{CLEAR} pest", query_terms("maize pest"))
    assert isinstance(rendered, Text)
    assert rendered.plain == "\\x9b␛[31m maize␛[2J pest"
    assert [rendered.plain[s.start : s.end] for s in rendered.spans] == ["maize", "pest"]
