"""A real `workbench judge` process killed with SIGKILL mid-session loses no grade whose screen
advanced: the store commits each grade before the next passage is drawn; a burst of keys grades
no passage that was not drawn."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from pty_app import PtyApp
from tui_fixtures import build_store, title_of


def committed(db: Path) -> list[tuple[str, int | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT doc_id, grade FROM judgments WHERE annotator = 'a' ORDER BY judgment_id"
        ).fetchall()


@pytest.mark.slow
def test_sigkill_loses_no_advanced_grade(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    build_store(db, queries=1, per_query=30).close()
    grades = [2, 0, 3, 1, 1, 0, 2, 3, 0, 1, 2, 2, 3, 0]
    app = PtyApp(["judge", "--db", str(db), "--annotator", "a"])
    try:
        offset = app.wait_for(title_of(0, 0), timeout=15)
        # Paced: as soon as the next passage is drawn its predecessor's grade is in the db.
        for item, grade in enumerate(grades[:6]):
            app.send(str(grade))
            offset = app.wait_for(title_of(0, item + 1), timeout=5, start=offset)
            assert committed(db)[item] == (f"d0-{item:03d}", grade)
        # A burst typed ahead of the store, killed mid-flight.
        app.send("".join(str(g) for g in grades[6:]))
        time.sleep(0.03)
    finally:
        app.kill()
    advanced = max((i for i in range(len(grades) + 1) if title_of(0, i) in app.text), default=0)
    rows = committed(db)
    print(f"advanced to item {advanced}, {len(rows)} rows committed")
    assert advanced >= 6
    assert len(rows) >= advanced, "a grade whose screen advanced is missing"
    assert rows[:6] == [(f"d0-{i:03d}", g) for i, g in enumerate(grades[:6])]
    # A key of the burst grades the passage drawn when it came, or nothing (tests/
    # test_tui_blind.py): one row per passage drawn, in order, each a key of the burst.
    assert [doc for doc, _ in rows] == [f"d0-{i:03d}" for i in range(len(rows))]
    assert all(title_of(0, i) in app.text for i in range(len(rows)))
    assert {grade for _, grade in rows[6:]} <= set(grades[6:])
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_quit_typed_after_a_burst_keeps_the_grade_given_and_no_blind_one(tmp_path: Path) -> None:
    """Typed in one go, 2130q grades the passage on screen, drops the keys typed while its
    grade is saved (no passage to grade), and quits once that grade is committed."""
    db = tmp_path / "quit.db"
    build_store(db, queries=1, per_query=10).close()
    app = PtyApp(["judge", "--db", str(db), "--annotator", "a"])
    app.wait_for(title_of(0, 0), timeout=15)
    app.send("2130q")
    assert app.wait_exit() == 0
    rows = committed(db)
    assert rows[0] == ("d0-000", 2)
    assert [doc for doc, _ in rows] == [f"d0-{i:03d}" for i in range(len(rows))]
    assert all(title_of(0, i) in app.text for i in range(len(rows)))


@pytest.mark.slow
def test_a_pool_no_workbench_wrote_exits_2_naming_its_row(tmp_path: Path) -> None:
    """The pool is read while the app starts (in a thread, not before it): a row no workbench
    wrote still ends `judge` with exit 2 and the store's own line naming it, as when the pool
    was read first, and never a traceback or an app left open on an error."""
    db = tmp_path / "damaged.db"
    build_store(db, queries=1, per_query=5).close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE pool SET position = 'third' WHERE doc_id = 'd0-002'")
    app = PtyApp(["judge", "--db", str(db), "--annotator", "a"])
    try:
        code = app.wait_exit(timeout=30)
    finally:
        app.kill()
    assert code == 2, app.text[-2000:]
    assert "pool" in app.text and "d0-002" in app.text and "Traceback" not in app.text
    assert committed(db) == []
