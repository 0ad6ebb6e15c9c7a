"""A grade after the systems were revealed: the key asks to be pressed again, so no passage is
regraded by a key typed while its systems are on screen (issue 43, item 5)."""

from __future__ import annotations

from pathlib import Path

from tui_fixtures import build_store, press_settled, run_async, screen_text

from workbench.tui.app import JudgeApp


@run_async
async def test_a_grade_after_a_reveal_asks_to_be_pressed_again(tmp_path: Path) -> None:
    store = build_store(tmp_path / "r.db", queries=1, per_query=3)
    app = JudgeApp(store, "a")
    async with app.run_test(size=(100, 30)) as pilot:
        await press_settled(pilot, app, "2", "k", "r", "3")
        assert [j.grade for j in store.judgments("a")] == [2]  # not regraded yet
        assert "press 3 again to regrade it anyway" in screen_text(app)
        await press_settled(pilot, app, "r", "1")  # another key in between: asked again
        assert [j.grade for j in store.judgments("a")] == [2]
        await press_settled(pilot, app, "1")
        assert [j.grade for j in store.judgments("a")] == [2, 1]
        await press_settled(pilot, app, "0")  # an item never revealed: graded at once
        assert [j.grade for j in store.judgments("a")] == [2, 1, 0]
    store.close()
