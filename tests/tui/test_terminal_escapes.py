"""A real `workbench judge` in a pseudo-terminal, on a store whose ids, query, narrative,
titles, passages and run tags carry terminal escape sequences and markup: none of the data's
sequences reaches the terminal (it is drawn as ␛…), markup stays literal, the app does not
crash and every grade is saved."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from pty_app import PtyApp
from tui_fixtures import build_hostile_store

DATA_BORNE = [
    b"\x1b]2;",  # OSC 2: set the window title (Textual emits none of its own)
    b"\x1b]52;",  # OSC 52: set the clipboard
    b"\x1b[2Jtext",  # clear the screen, in the passage text
    b"\x1b[2Jnarrative",  # in the narrative
    b"\x1b[31mred",  # SGR red, in the passage text
    b"\x1b[31m1",  # in a doc id
    b"\x1b[31m[/]",  # in a run tag
]


@pytest.mark.slow
def test_escape_sequences_in_the_data_never_reach_the_terminal(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    build_hostile_store(db).close()
    app = PtyApp(["judge", "--db", str(db), "--annotator", "a"])
    offset = app.wait_for("Title 0 ␛]2;TITLE␇[b]x[/b] d[/]", timeout=20)
    for item, key in enumerate("210", start=1):
        app.send(key)
        offset = app.wait_for(f"Title {item} ", timeout=10, start=offset)
    # Back to the graded passage, its run tags revealed.
    app.send("kr")
    offset = app.wait_for("[@click=app.quit]bm25 rank 1", timeout=10, start=offset)
    app.send("q")
    assert app.wait_exit(timeout=15) == 0
    raw = bytes(app.raw)
    for sequence in DATA_BORNE:
        assert sequence not in raw, sequence
    # An OSC carrying the data's payload, whatever its number.
    assert not re.search(rb"\x1b\][0-9]*;(TITLE|c;aGk=)", raw)
    drawn = app.text
    for literal in (
        "q[/]",
        "maize ␛]2;TITLE␇pest [b]x[/b]",
        "Relevant: ␛]52;c;aGk=␇[@click=app.quit]q ␛[2Jnarrative end",
        "text ␛[31mred [b]x[/b] [@click=app.quit]q d[/] ␛]52;c;aGk=␇end",
        "d[/]",
        "a[b].md#2",
        "e␛[31m1",
        "dense␛[31m[/] rank 2",
    ):
        assert literal in drawn, literal
    assert "Traceback" not in drawn and "Error" not in drawn
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT doc_id, grade FROM judgments WHERE annotator = 'a' ORDER BY judgment_id"
        ).fetchall()
    assert rows == [("d[/]", 2), ("a[b].md#2", 1), ("e\x1b[31m1", 0)]
