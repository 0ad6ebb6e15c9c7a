"""The judging app at 80x24, as a new annotator found it: the whole narrative on screen until
folded, the passage's end marked, the essential keys in the footer, the note dialog's title
whole, a long notice wrapped, no stale message after a grade."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import (
    LONG_NARRATIVE,
    LONG_QUERY,
    build_store,
    dialog_text,
    disagreeing_store,
    long_store,
    press_settled,
    run_async,
    screen_of,
    screen_text,
    settle,
    shown,
)

from workbench.core.model import Doc, PoolEntry, Query
from workbench.store import Store
from workbench.tui.app import JudgeApp
from workbench.tui.panels import QueryPanel
from workbench.tui.passage import PassageView
from workbench.tui.pickers import NoteScreen
from workbench.tui.status_lines import MessageLine

SMALL = (80, 24)


@run_async
async def test_the_whole_narrative_shows_at_80x24(tmp_path: Path) -> None:
    store = long_store(tmp_path / "n.db", tmp_path)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        panel = app.screen.query_one(QueryPanel)
        assert panel.max_scroll_y == 0
        assert panel.virtual_size.height <= panel.scrollable_content_region.height
        body = panel.query_one("#query-text")
        assert body.region.bottom <= panel.content_region.bottom
        lines = ["".join(s.text for s in body.render_line(y)) for y in range(body.size.height)]
        assert "in the field." in lines[-1] and LONG_QUERY.startswith(lines[0][4:].strip())
        # The passage keeps the rest and scrolls.
        passage = app.screen.query_one(PassageView)
        assert passage.size.height >= 6 and passage.max_scroll_y > 0
    store.close()


@run_async
async def test_footer_keeps_quit_prev_next_at_80_columns(tmp_path: Path) -> None:
    store = build_store(tmp_path / "f.db", queries=1, per_query=3)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        keys = {key.action: key for key in app.screen.query("FooterKey")}
        for action in ("quit", "move(-1)", "move(1)", "undo", "skip", "note", "help"):
            assert action in keys, action
            assert keys[action].region.right <= SMALL[0], action
        # Reveal and the overview stay bound (help, palette) though off the footer.
        assert {"r", "o"} <= set(app.screen.active_bindings)
    store.close()


@run_async
async def test_note_title_is_whole_at_80_columns(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db", create=True)
    store.add_queries([Query("q0", "maize pests")])
    store.add_docs([Doc("maize/a-rather-long-passage-identifier.md#12", "Stem borers.")])
    store.add_pool_entries([PoolEntry("q0", "maize/a-rather-long-passage-identifier.md#12", 0)])
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteScreen)
        text = dialog_text(app.screen)
        assert "Note for maize/a-rather-long-passage-identifier.md#12, query q0" in text
        assert "passage 1/1 of your queue" in text and "not graded yet" in text
        assert "Enter keeps it" in text and "Escape cancels" in text
        await pilot.press("escape")
    store.close()


@run_async
async def test_a_very_long_id_is_cut_in_the_note_dialog(tmp_path: Path) -> None:
    """A 3,000-character id filled the dialog's every row; it is cut, the keys stay."""
    doc_id = "x" * 3000
    store = Store(tmp_path / "l.db", create=True)
    store.add_queries([Query("q0", "maize pests")])
    store.add_docs([Doc(doc_id, "Stem borers.")])
    store.add_pool_entries([PoolEntry("q0", doc_id, 0)])
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        await pilot.press("n")
        await pilot.pause()
        label = app.screen.query_one("#note-title")
        assert label.size.height <= 3
        text = dialog_text(app.screen)
        assert "…" in text and "Escape cancels" in text, text
        await pilot.press("escape")
    store.close()


@run_async
async def test_a_grade_clears_the_skip_message(tmp_path: Path) -> None:
    store = build_store(tmp_path / "s.db", queries=1, per_query=4)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        line = app.screen.query_one(MessageLine)
        await press_settled(pilot, app, "s")
        assert "Skipped" in line.message and shown(app) == "d0-001"
        await press_settled(pilot, app, "2")
        assert shown(app) == "d0-002" and line.message == ""
        # A message about the new item stays; an error stays through a move.
        await press_settled(pilot, app, "k")
        await pilot.press("k")
        await settle(pilot, app)
        assert "first" in line.message
        screen_of(app).notify("Not saved: disk full", severity="error", timeout=10)
        await press_settled(pilot, app, "j")
        assert line.message == "Not saved: disk full"
    store.close()


KEYS_EXPLAINED = {
    "0–3": "grade",
    "f": "fold the narrative",
    "↑ ↓": "scroll the passage (PgUp PgDn space",
    "u": "undo",
    "s": "skip",
    "n": "note",
    "r": "reveal",
    "o": "overview",
    "g  /": "jump to a query",
    "k  ←": "previous",
    "?": "this help",
    "q": "quit",
}


@run_async
async def test_help_explains_every_key_at_80x24(tmp_path: Path) -> None:
    store = long_store(tmp_path / "h.db", tmp_path)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert len(lines) == SMALL[1]
        for key, words in KEYS_EXPLAINED.items():
            assert any(f"│ {key} " in line and words in line for line in lines), key
        text = "\n".join(lines)
        assert "j  →" in text and "next" in text and "blind" in text
        assert "for this session" in text
        # Textual's generic bindings (the focused passage's scrolling) are not listed.
        for generic in ("Scroll", "Page Up", "pageup", "Home", "ctrl+c"):
            assert generic not in text, generic
        # Nothing needs scrolling: the whole help is on screen.
        scroll = app.screen.query_one("VerticalScroll")
        assert scroll.max_scroll_y == 0
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen_of(app)
        # ? toggles it, q closes it (it does not quit the app).
        await pilot.press("question_mark", "q")
        await pilot.pause()
        assert app.is_running and app.screen is screen_of(app)
    store.close()


@run_async
async def test_skip_says_it_lasts_for_this_session(tmp_path: Path) -> None:
    store = build_store(tmp_path / "k.db", queries=1, per_query=3)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await settle(pilot, app)
        assert "for this session" in app.screen.query_one(MessageLine).message
    # Not saved: reopened, the app starts on the skipped passage again, as the message said.
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        assert shown(app) == "d0-000"
    store.close()


@run_async
async def test_a_start_notice_leaves_the_narrative_uncovered(tmp_path: Path) -> None:
    store = long_store(tmp_path / "w.db", tmp_path)
    notice = "The demo pool was built without rerank: no cross-encoder in the cache"
    app = JudgeApp(store, "a", notices=(notice,))
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        assert not app._notifications  # no toast over the query panel
        line = app.screen.query_one(MessageLine)
        assert line.message == notice and line.severity == "warning"
        assert "in the field." in screen_text(app)  # the narrative's end is on screen
        # It lasts until the annotator moves on.
        await press_settled(pilot, app, "1")
        assert line.message == ""
    store.close()


OFFLINE_NOTICE = (
    "The demo pool was built without rerank: model 'cross-encoder/ms-marco-MiniLM-L6-v2' is not"
    " available offline and no local copy exists (give the path of a local model folder instead)"
)
"""The notice a newcomer offline met, cut at 120x40 ("not available offline and no l...")."""


def article_store(path: Path, tmp: Path, words: int = 600) -> Store:
    """Two queries with the demo's longest narrative, two passages of `words` words each."""
    store = Store(path, create=True)
    source = build_store(tmp / "src.db", queries=2, per_query=2, words=words)
    store.add_queries([Query(f"q{n}", LONG_QUERY, LONG_NARRATIVE) for n in range(2)])
    store.add_docs(source.docs(["d0-000", "d0-001", "d1-000", "d1-001"]).values())
    store.add_pool_entries(source.pool())
    source.close()
    return store


def passage_lines(app: JudgeApp) -> int:
    return app.screen.query_one(PassageView).content_region.height


@run_async
async def test_f_folds_the_narrative_for_every_query_and_the_passage_takes_the_room(
    tmp_path: Path,
) -> None:
    store = article_store(tmp_path / "f.db", tmp_path)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        unfolded = passage_lines(app)
        text = screen_text(app)
        assert "in the field." in text and "f folds the narrative" in text
        await press_settled(pilot, app, "f")
        text = screen_text(app)
        assert "in the field." not in text and "narrative folded: f shows it" in text
        assert "q0  pests, diseases" in text  # the query itself stays
        assert passage_lines(app) >= unfolded + 6
        # The next query opens folded too, and the message line says so.
        await press_settled(pilot, app, "1", "2")
        assert shown(app) == "d1-000"
        assert "in the field." not in screen_text(app)
        assert "q1" in app.screen.query_one(MessageLine).message
        assert "folded" in app.screen.query_one(MessageLine).message
        await press_settled(pilot, app, "f")
        assert "in the field." in screen_text(app) and passage_lines(app) == unfolded
        await press_settled(pilot, app, "f", "3")
    assert [(j.doc_id, j.grade) for j in store.judgments("a")] == [
        ("d0-000", 1), ("d0-001", 2), ("d1-000", 3),
    ]  # fmt: skip
    # Each session opens with the narrative shown (the app keeps no preferences).
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        assert "in the field." in screen_text(app)
    store.close()


@run_async
async def test_a_long_passage_says_what_is_below_and_where_it_ends(tmp_path: Path) -> None:
    store = article_store(tmp_path / "e.db", tmp_path)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        view = app.screen.query_one(PassageView)
        assert "end of passage" not in screen_text(app)
        below = int(view.max_scroll_y)
        assert below > 40 and f"↓ {below} more lines: PgDn, space" in screen_text(app)
        await press_settled(pilot, app, "space")
        assert view.scroll_y >= passage_lines(app) - 1
        assert f"↓ {below - int(view.scroll_y)} more lines" in screen_text(app)
        await press_settled(pilot, app, "end")
        text = screen_text(app)
        assert "── end of passage ──" in text and "more line" not in text
        # A grade shows the next passage from its top.
        await press_settled(pilot, app, "2")
        assert shown(app) == "d0-001" and view.scroll_y == 0
        assert "end of passage" not in screen_text(app)
    assert [(j.doc_id, j.grade) for j in store.judgments("a")] == [("d0-000", 2)]
    store.close()
    # A passage that fits shows its end at once, and no "more" on the border.
    store = article_store(tmp_path / "s.db", tmp_path / "s", words=30)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "── end of passage ──" in text and "more line" not in text
    store.close()


@run_async
async def test_a_long_notice_wraps_whole_where_the_passage_keeps_room(tmp_path: Path) -> None:
    """Wrapped while the passage keeps PASSAGE_KEPT lines beside it (a message never makes the
    passage too small to grade); folding the narrative makes the room."""
    from workbench.tui.fit import MIN_PASSAGE_LINES, MIN_SIZE
    from workbench.tui.grading_waits import PASSAGE_KEPT

    for size in ((120, 40), SMALL, (MIN_SIZE.width, MIN_SIZE.height)):
        (tmp_path / str(size)).mkdir()
        store = long_store(tmp_path / str(size) / "w.db", tmp_path / str(size))
        app = JudgeApp(store, "a", notices=(OFFLINE_NOTICE,))
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            await pilot.pause(0.3)
            line = app.screen.query_one(MessageLine)

            def whole(app: JudgeApp = app) -> bool:
                return OFFLINE_NOTICE in " ".join(screen_text(app).split())

            if size == (120, 40):
                assert whole() and line.size.height == 2
            elif size == SMALL:  # the borderless query bar leaves room for it whole
                assert passage_lines(app) >= PASSAGE_KEPT
                if not whole():  # else folding the narrative makes the room
                    await press_settled(pilot, app, "f")
                    await pilot.pause(0.3)
                assert whole() and line.size.height == 3
            else:  # no room: one line, cut
                assert not whole() and line.size.height == 1
                assert passage_lines(app) >= MIN_PASSAGE_LINES
            # The grade key grades the passage on screen; the notice then goes, and the key
            # hints are back in its place.
            footer = app.screen.query_one("#footer")
            assert not footer.display
            await press_settled(pilot, app, "1")
            assert line.message == "" and not line.display and footer.display
        assert [(j.doc_id, j.grade) for j in store.judgments("a")] == [("d0-000", 1)]
        store.close()


@pytest.mark.slow
def test_fold_and_the_passage_end_in_a_real_terminal_at_80x24(tmp_path: Path) -> None:
    from pty_app import PtyApp

    db = tmp_path / "pty.db"
    article_store(db, tmp_path).close()
    app = PtyApp(["judge", "--db", str(db), "--annotator", "a"], cols=80, rows=24)
    try:
        offset = app.wait_for("f folds the narrative", timeout=20)
        app.send("f")
        offset = app.wait_for("narrative folded: f shows it", timeout=10, start=offset)
        app.send("\x1b[F")  # End
        offset = app.wait_for("── end of passage ──", timeout=10, start=offset)
        app.send("2")
        app.wait_for("d0-001", timeout=10, start=offset)
        app.send("q")
        assert app.wait_exit() == 0
    finally:
        app.kill()
    with Store(db) as store:
        assert [(j.doc_id, j.grade) for j in store.judgments("a")] == [("d0-000", 2)]


@run_async
async def test_the_adaptive_queues_help_fits_80x24_too(tmp_path: Path) -> None:
    """Its closing paragraph is longer: every key, fold and scroll included, still fits."""
    from workbench.core.model import DEFAULT_GRADE_SCALE
    from workbench.tui.help import HelpScreen, judging_help

    store = build_store(tmp_path / "a.db", queries=1, per_query=2)
    app = JudgeApp(store, "a")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        app.push_screen(HelpScreen(judging_help(DEFAULT_GRADE_SCALE, 1, adaptive=True)))
        await pilot.pause()
        text = screen_text(app)
        assert "fold the narrative" in text and "scroll the passage" in text
        assert app.screen.query_one("VerticalScroll").max_scroll_y == 0
    store.close()


@run_async
async def test_f_folds_the_narrative_when_adjudicating(tmp_path: Path) -> None:
    from workbench.core.agreement.adjudication import disputes

    store = disagreeing_store(tmp_path / "j.db")
    order = {(e.query_id, e.doc_id): i for i, e in enumerate(store.pool())}
    app = JudgeApp(store, "lead", disputes=disputes(store.judgments(), order))
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        assert "Relevant: passages about pest 0." in screen_text(app)
        await press_settled(pilot, app, "f")
        text = screen_text(app)
        assert "Relevant: passages" not in text and "narrative folded: f shows it" in text
    store.close()
