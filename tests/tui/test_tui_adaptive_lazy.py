"""The judging app on an adaptive store shows its first passage before the passages' vectors
are built (a thread builds them after it), and refits the queue's model between grades rather
than on a grade's path. A grade, another annotator's grade or an undo that comes first still
counts at once, and the pick a query had cached gives way to the pick of the new state."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from adaptive_fixtures import make_study, pool
from tui_fixtures import run_async, settle

from workbench.core.model import Judgment
from workbench.flows.adaptive import session_from_store
from workbench.store import Store
from workbench.tui import judging, judging_catch_up
from workbench.tui.app import JudgeApp
from workbench.tui.status_lines import MessageLine


@pytest.fixture
def study_db(tmp_path: Path) -> Path:
    study = make_study(tmp_path)
    assert pool(study) == 0
    return study["db"]


async def shown(pilot, app) -> judging.JudgingScreen:  # type: ignore[no-untyped-def]
    """Wait until the first passage is on the terminal (not for the catch-up after it)."""
    for _ in range(500):
        await pilot.pause()
        screen = app.screen
        if isinstance(screen, judging.JudgingScreen) and screen.loaded:
            key = screen.on_screen()
            if key is not None and screen._drawn == key and screen._painted():
                return screen
        await asyncio.sleep(0.01)
    raise AssertionError("the first passage was not shown")


def fair_start(db: Path, query_id: str) -> list[str]:
    """The query's fair start (every system's top few), in the order the queue serves it."""
    store = Store(db)
    try:
        frame = session_from_store(store).queries[query_id].frame
        return [frame.doc_ids[i] for i in frame.fair_order]
    finally:
        store.close()


@run_async
async def test_the_fair_starts_are_graded_before_the_vectors_are_built_and_the_last_waits(
    study_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fair starts' picks need no passage vectors: their grades are taken at once, before
    every passage is read and indexed (seconds at 100,000 x 500), one query's after another's.
    The grade after which the next pick would need them waits: a key then would block the
    screen, and keys typed meanwhile graded passages drawn after them, unseen, so it is
    refused and the screen says why; once built, it grades the passage on screen, and the
    model's features of the grades taken before are those a session rebuilt from the store
    computes."""
    # The thread's build does not start by itself.
    monkeypatch.setattr(judging_catch_up.CatchUp, "BUILD_AFTER_S", 3600.0)
    store = Store(study_db)
    try:
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await shown(pilot, app)
            query_id, doc_id = screen._shown_key
            queries = list(screen.session.adaptive.queries)
            start = queries.index(query_id)
            order = [
                (q, d) for q in queries[start:] + queries[:start] for d in fair_start(study_db, q)
            ]
            assert order[0] == (query_id, doc_id) and len(queries) >= 2
            assert "…" in str(screen.query_one("#status").render())  # not the frame's totals
            for n, expected in enumerate(order[:-1]):
                assert screen._shown_key == expected
                await pilot.press("2" if n == 0 else "0")
                await settle(pilot, app, figures=False)
            assert not screen.session.adaptive.vectors_built
            assert len(store.current_judgments("ann")) == len(order) - 1
            assert screen._shown_key == order[-1]
            await pilot.press("0", "1")
            await pilot.pause()
            assert len(store.current_judgments("ann")) == len(order) - 1
            assert "reading the passages" in str(screen.query_one(MessageLine).message)
            screen.catch_up.BUILD_AFTER_S = 0.01  # the build now (a timer of 0 s never fires)
            screen.catch_up.build_when_painted()
            await settle(pilot, app)
            assert screen.session.adaptive.vectors_built
            await pilot.press("0")
            await settle(pilot, app)
            assert [(j.query_id, j.doc_id) for j in store.current_judgments("ann")] == order
            assert screen._shown_key not in order
            assert f"all: {len(order)}" in str(screen.query_one("#status").render())
            rebuilt = session_from_store(store)
            for q in queries:
                ours, theirs = screen.session.adaptive.queries[q], rebuilt.queries[q]
                assert ours.rel_cols == theirs.rel_cols and ours.non_cols == theirs.non_cols
                ours_x = screen.session.adaptive.features(ours, leave_out=True)
                assert (ours_x == rebuilt.features(theirs, leave_out=True)).all()
    finally:
        store.close()


@run_async
async def test_another_annotators_grade_drops_the_pick_the_query_had_cached(
    study_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It comes before the build, too.
    monkeypatch.setattr(judging_catch_up.CatchUp, "BUILD_AFTER_S", 3600.0)
    store = Store(study_db)
    other = Store(study_db)
    try:
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await shown(pilot, app)
            query_id, first = screen._shown_key
            order = fair_start(study_db, query_id)
            session = screen.session.adaptive
            # The query's pick is cached (asked again, the same); another process grades the
            # passage the queue would serve after it.
            assert session.next_pick(query_id).doc_id == first
            now = time.time()
            other.add_annotator("bob")
            other.add_judgment(Judgment("bob", query_id, order[1], 2, shown_at=now, graded_at=now))
            screen._look()
            await settle(pilot, app, figures=False)
            assert session.judged(query_id) == 1 and not session.vectors_built
            assert screen._shown_key == (query_id, first)  # the passage on screen stays
            await pilot.press("0")
            await settle(pilot, app, figures=False)
            # bob's passage is not served again: the next is the fair start's third
            assert screen._shown_key == (query_id, order[2])
            assert session.judged(query_id) == 2
    finally:
        other.close()
        store.close()


@run_async
async def test_the_refit_comes_after_the_grade_and_an_undone_draw_keeps_its_probability(
    study_db: Path,
) -> None:
    store = Store(study_db)
    try:
        app = JudgeApp(store, "ann")
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            screen = app.screen
            session = screen.session.adaptive
            every = session.config.refit_every
            versions = []
            drawn = None
            for n in range(80):
                before = len(store.draws("ann"))
                await pilot.press("1" if n % 4 == 0 else "0")
                await settle(pilot, app)
                versions.append(session.model_version)
                assert screen.session.unfitted < every  # refitted between grades, once due
                if n >= every and len(store.draws("ann")) > before:
                    drawn = store.draws("ann")[-1]
                    break
            assert drawn is not None, "no draw in 80 grades"
            assert versions[-1] > versions[0]
            key = (drawn.query_id, drawn.doc_id)
            assert [(j.query_id, j.doc_id) for j in store.judgments("ann")][-1] == key
            await pilot.press("u")
            await settle(pilot, app)
            assert screen._shown_key == key
            pending = session.queries[drawn.query_id].pending
            assert pending is not None and pending.doc_id == drawn.doc_id
            assert pending.prob == drawn.prob  # served again as drawn, not drawn anew
            await pilot.press("0")
            await settle(pilot, app)
            kept = [d for d in session.queries[drawn.query_id].draws if d.doc_id == drawn.doc_id]
            assert len(kept) == 1 and kept[0].prob == drawn.prob
            assert screen._shown_key != key
    finally:
        store.close()


def test_a_snapshot_says_what_the_session_says_and_keeps_to_the_state_it_was_taken_in(
    tmp_path: Path,
) -> None:
    from workbench.cli import main
    from workbench.core.adaptive.snapshot import indexed, snapshot
    from workbench.core.study.target import StudyRanking, target_of

    study = make_study(tmp_path)
    assert pool(study) == 0
    args = ["simulate", "--db", str(study["db"]), "--oracle", str(study["qrels"])]
    assert main([*args, "--per-query", "15"]) == 0
    store = Store(study["db"])
    try:
        session = session_from_store(store)
        for query_id in session.queries:
            session.probabilities(query_id)
        assert indexed(session)
        twin = snapshot(session)
        ranking = StudyRanking(session, store.pool(), target_of(None))
        plan, judged = ranking.compute(twin)
        words = [session.refitted_state(q) for q in session.queries]
        # Another grade on the session after the snapshot: the snapshot's figures stay those
        # of the state it was taken in, and equal the session's own at that state.
        query_id = next(iter(session.queries))
        q = session.queries[query_id]
        unjudged = next(i for i in range(len(q.frame.doc_ids)) if i not in q.grades)
        session.record(query_id, q.frame.doc_ids[unjudged], True)
        assert twin.judged(query_id) == session.judged(query_id) - 1
        assert [twin.refitted_state(q) for q in twin.queries] == words
        assert ranking.compute(twin) == (plan, judged)
        ranking.take(plan, judged)
        assert ranking.compute()[1] == judged + 1 and ranking.latest == plan
    finally:
        store.close()
