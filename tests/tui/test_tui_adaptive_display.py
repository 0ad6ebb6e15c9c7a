"""The app on an adaptive store another annotator judged (an oracle, by `simulate`): the counts
are the judgments that count toward the estimate, the annotator's own said apart; the overview
shows where each query stands ('≈ N' to certify) at 80 and 120 columns, and no frame totals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from adaptive_fixtures import make_study, pool
from textual.widgets import DataTable
from tui_fixtures import press_settled, run_async, screen_text, settle

from workbench.cli import main
from workbench.core.coverage.to_go import to_go
from workbench.core.model import Status
from workbench.flows.coverage import coverage_for_store
from workbench.store import Store
from workbench.tui.app import JudgeApp
from workbench.tui.coverage_panel import CoveragePanel, render_coverage, study_words
from workbench.tui.panels import DonePanel
from workbench.tui.pickers import QueryPicker
from workbench.tui.status_lines import StatusLine


def simulated(tmp_path: Path, *limits: str) -> Path:
    """An adaptive store of 4 queries the oracle judged (within `limits`); its path."""
    study = make_study(tmp_path)
    assert pool(study) == 0
    args = ["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"]), *limits]
    assert main(args) == 0
    return study["db"]


def status_of(app: JudgeApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def coverage_text(pilot, app: JudgeApp) -> str:  # type: ignore[no-untyped-def]
    """Open the overview and wait for its coverage; the panel's text."""
    await pilot.press("o")
    for _ in range(300):
        await pilot.pause(0.02)
        text = str(app.screen.query_one("#coverage-text").render())
        if "computing" not in text:
            return text
    raise AssertionError("coverage was not computed")


@run_async
async def test_the_oracles_judgments_count_and_yours_are_said_apart(tmp_path: Path) -> None:
    db = simulated(tmp_path, "--per-query", "12")
    store = Store(db)
    try:
        oracle = len(store.current_judgments("oracle"))
        assert oracle == 48
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(170, 32)) as pilot:  # the longest wording beside the study
            await settle(pilot, app)
            status = status_of(app)
            assert "query 1/4: 12 judged (you 0, rel≥1: 0), " in status, status
            assert "all: 48 judged" in status and "you: 0 judged" in status
            await press_settled(pilot, app, "0")
            status = status_of(app)
            assert "you: 1 judged, rel≥1: 0" in status, status
            assert "query 1/4: 13 judged (you 1, rel≥1: 0), " in status, status
            assert "all: 49 judged" in status
            # The list counts the same judgments, the annotator's own in their column.
            await press_settled(pilot, app, "g")
            picker = app.screen
            assert isinstance(picker, QueryPicker)
            cells = {row.query_id: picker._cells(row) for row in picker.rows}
            assert cells["q0"][:3] == ["q0", "13", "1"] and cells["q1"][:3] == ["q1", "12", "0"]
            # whose counts are whose: everyone's, then yours
            labels = [str(c.label) for c in picker.query_one(DataTable).columns.values()]
            assert labels[1:3] == ["judged (all)", "yours"], labels
    finally:
        store.close()


@run_async
async def test_a_store_judged_through_by_the_oracle_does_not_say_0_judged(tmp_path: Path) -> None:
    db = simulated(tmp_path)
    store = Store(db)
    try:
        oracle = len(store.current_judgments("oracle"))
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(170, 32)) as pilot:  # the longest wording beside the study
            await settle(pilot, app)
            screen = app.screen
            assert screen.finished
            status = status_of(app)
            assert f"all: {oracle} judged" in status and "you: 0 judged" in status, status
            assert ": 0 judged, certified" not in status
            done = str(screen.query_one(DonePanel).render())
            assert f"{oracle} judged in all" in done and "none of them yours" in done
            assert "k goes back" not in done  # nothing of theirs to go back to
    finally:
        store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
def test_the_overview_shows_what_each_query_needs_on_screen(tmp_path: Path, size) -> None:
    """'≈ N' to certify was appended after the discovery curve, past the panel's right edge at
    120 columns (and at 80); now it comes right after the completeness interval."""

    @run_async
    async def run() -> None:
        db = simulated(tmp_path, "--per-query", "30")
        store = Store(db)
        try:
            report = coverage_for_store(store)
            needs = {q: to_go(row, adaptive=True).cell for q, row in report.queries.items()}
            assert all(row.more_to_certify is not None for row in report.queries.values())
            app = JudgeApp(store, "ann")
            async with app.run_test(size=size) as pilot:
                await settle(pilot, app)
                await coverage_text(pilot, app)
                await pilot.pause()
                panel = app.screen.query_one(CoveragePanel)
                shown = screen_text(app).splitlines()
                for query_id, more in needs.items():
                    line = next(
                        line for line in shown if f"│ {query_id}  " in line and "incomplete" in line
                    )
                    assert more.startswith("≈") and more in line, (query_id, line)
                    assert "[0." in line  # the completeness interval
                # No line of the panel runs past its width.
                width = panel.scrollable_content_region.width
                rendered = str(panel.query_one("#coverage-text").render())
                assert max(len(line) for line in rendered.splitlines()) <= width
        finally:
            store.close()

    run()


@run_async
async def test_the_overview_of_an_adaptive_store_has_no_frame_totals(tmp_path: Path) -> None:
    db = simulated(tmp_path, "--per-query", "30")
    store = Store(db)
    try:
        frame = len(store.pool())
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot, app)
            text = await coverage_text(pilot, app)
        assert f"/{frame}" not in text and "frame" not in text, text
        report = coverage_for_store(store)
        more = sum(row.more_to_certify or 0 for row in report.queries.values())
        assert "0 of 4 queries certified" in text and f"4 to go: ≈ {more} more judgments" in text
        assert f"{report.summary.judged} judged, {report.summary.relevant} relevant" in text
    finally:
        store.close()


def test_certified_and_stuck_queries_say_so(tmp_path: Path) -> None:
    db = simulated(tmp_path)
    with Store(db) as store:
        report = coverage_for_store(store)
    assert all(row.status == "complete" for row in report.queries.values())
    text = render_coverage(report, width=80).plain
    assert "4 of 4 queries certified │ 0 to go" in text
    rows = [line for line in text.splitlines() if line[:2] in ("q0", "q1", "q2", "q3")]
    assert len(rows) == 4 and all("certified" in line for line in rows)
    assert max(len(line) for line in text.splitlines()) <= 80
    # An incomplete query the model sees no way to certify with what its frame has left: never
    # "out of reach" while it can still be judged, but more than it has left; judged through,
    # it says so.
    lines = {}
    for left in (155, 0):
        q0 = replace(
            report.queries["q0"], status=Status.INCOMPLETE, more_to_certify=None, frame_left=left
        )
        stuck = replace(report, queries={**report.queries, "q0": q0})
        text = render_coverage(stuck).plain
        assert "out of reach" not in text
        lines[left] = next(line for line in text.splitlines() if line[:3] == "q0 ")
    assert "incomplete" in lines[155] and "> 155" in lines[155]
    assert "all judged" in lines[0]


@run_async
async def test_the_status_line_and_the_overview_say_one_figure(tmp_path: Path) -> None:
    """On one corpus the status line said 'out of reach' while the overview said '≈ 328' for
    the same query: the app's queue refits its model every 20 grades, the overview fits one to
    every grade (and drew with seed 0, not the pooling's). Five grades after the oracle's (a
    batch: the queue then moves to the query that narrows the study most), past the last refit,
    both read one figure from one function."""
    db = simulated(tmp_path, "--per-query", "30")
    store = Store(db)
    try:
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot, app)
            await press_settled(pilot, app, *"00000")
            session = app.screen.session.adaptive
            assert session._since_fit  # the queue's model is behind its grades
            status = status_of(app)
            shown = app.screen._shown_key[0]
            text = await coverage_text(pilot, app)
            panel = app.screen.query_one(CoveragePanel)
            report_study = panel.report.study
            assert panel.border_subtitle == study_words(report_study)
        report = coverage_for_store(store)
        assert report.queries["q0"].judged == 35
        row = report.queries[shown]
        figure = to_go(row, adaptive=True)
        assert figure.words in status, (figure.words, status)
        line = next(line for line in text.splitlines() if line.startswith(f"{shown} "))
        assert figure.cell in line
        assert "out of reach" not in status + text
        said = study_words(report_study)
        assert said.startswith("study R@10 ") and "target width 0.05" in said
    finally:
        store.close()
