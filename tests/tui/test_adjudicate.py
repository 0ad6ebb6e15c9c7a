"""Adjudication: the worklist of disagreements (pure), the screen driven with Pilot, and the
adjudicated grade winning in `workbench export`."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import disagreeing_store, press_settled, run_async, settle

from workbench.cli import main
from workbench.core.agreement.adjudication import Dispute, Opinion, disputes
from workbench.core.model import Judgment
from workbench.formats import load_judgments
from workbench.store import Store
from workbench.tui.adjudicate import AdjudicationScreen, Opinions
from workbench.tui.app import JudgeApp

SIZE = (110, 32)


def J(name: str, doc: str, grade: int | None, note: str = "", role: str = "human") -> Judgment:
    return Judgment(name, "q0", doc, grade, note, role=role)


def test_worklist_holds_only_pairs_whose_human_grades_differ() -> None:
    history = [
        J("a", "d1", 2, "on topic"),
        J("b", "d1", 0),
        J("a", "d2", 1),
        J("b", "d2", 1),  # agreed
        J("a", "d3", 3),
        J("llm", "d3", 0, role="model"),  # a model never makes a disagreement
        J("a", "d4", 3),
        J("b", "d4", 1),
        J("b", "d4", None),  # b undid: one grade left, no disagreement
        J("c", "d1", 2),
    ]
    found = disputes(history)
    assert found == [
        Dispute("q0", "d1", (Opinion("a", 2, "on topic"), Opinion("b", 0), Opinion("c", 2)))
    ]
    assert found[0].spread == 2


def test_an_emptied_note_leaves_the_adjudicators_card() -> None:
    """The app removes a note with a new row, same grade, empty note: the card shows none, as
    the export does (it showed the removed note)."""
    history = [J("a", "d1", 2, "on topic"), J("b", "d1", 0, "off"), J("a", "d1", 2)]
    assert disputes(history)[0].opinions == (Opinion("a", 2), Opinion("b", 0, "off"))


def test_settled_pairs_leave_and_come_back_when_a_human_grade_changes() -> None:
    base = [J("a", "d1", 2), J("b", "d1", 0), J("a", "d2", 3), J("b", "d2", 1)]
    adjudicated = [*base, J("lead", "d1", 1, role="adjudicator")]
    assert [d.doc_id for d in disputes(adjudicated)] == ["d2"]
    kept = disputes(adjudicated, include_settled=True)
    assert [(d.doc_id, d.adjudicated) for d in kept] == [("d1", 1), ("d2", None)]
    # A note that keeps the grade changes nothing; a new grade reopens the pair.
    assert [d.doc_id for d in disputes([*adjudicated, J("a", "d1", 2, "sure")])] == ["d2"]
    reopened = disputes([*adjudicated, J("b", "d1", 1)])
    assert [(d.doc_id, [o.grade for o in d.opinions]) for d in reopened] == [
        ("d1", [2, 1]),
        ("d2", [3, 1]),
    ]
    # The adjudicator's undo reopens it too.
    assert len(disputes([*adjudicated, J("lead", "d1", None, role="adjudicator")])) == 2
    # Queue order first, then ids; pairs outside the order last.
    order = {("q0", "d2"): 0, ("q0", "d1"): 1}
    assert [d.doc_id for d in disputes(base, order)] == ["d2", "d1"]
    assert [d.doc_id for d in disputes(base, {("q0", "d2"): 0})] == ["d2", "d1"]


def exported(db: Path, tmp_path: Path) -> dict[str, dict[str, int]]:
    out = tmp_path / "out.qrels"
    assert main(["export", "--db", str(db), "--qrels", str(out)]) == 0
    return load_judgments(str(out))[0]


@run_async
async def test_adjudication_writes_the_row_and_export_picks_it(tmp_path: Path) -> None:
    db = tmp_path / "adj.db"
    store = disagreeing_store(db)
    # Before: the disagreement resolves to the low median.
    assert exported(db, tmp_path)["q0"]["d0-001"] == 1
    order = {(e.query_id, e.doc_id): i for i, e in enumerate(store.pool())}
    worklist = disputes(store.judgments(), order)
    assert [d.doc_id for d in worklist] == ["d0-001", "d1-000"]
    app = JudgeApp(store, "lead", disputes=worklist)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        cards = [str(c.render()) for c in screen.query_one(Opinions).children]
        assert cards == ["3 highly relevant\nexactly the pest", "0 not relevant\nwrong crop"]
        assert [c.border_title for c in screen.query_one(Opinions).children] == ["ann", "bob"]
        assert "maize pest number 0" in str(screen.query_one("#query-text").render())
        await press_settled(pilot, app, "2")
        assert screen.current is not None and screen.current.doc_id == "d1-000"
        await press_settled(pilot, app, "n", *"bob misread", "enter", "1")
        status = str(screen.query_one("#adjudication-status").render())
        assert "adjudicated 2/2" in status
    rows = [(j.doc_id, j.grade, j.note, j.role, j.annotator) for j in store.judgments("lead")]
    assert rows == [
        ("d0-001", 2, "", "adjudicator", "lead"),
        ("d1-000", 1, "bob misread", "adjudicator", "lead"),
    ]
    # Both pairs are settled now; a human regrade brings one back.
    assert disputes(store.judgments()) == []
    store.add_judgment(Judgment("bob", "q1", "d1-000", 0))
    assert [d.doc_id for d in disputes(store.judgments())] == ["d1-000"]
    store.close()
    qrels = exported(db, tmp_path)
    assert qrels["q0"]["d0-001"] == 2  # the adjudicated grade, not the median (1)
    golden = tmp_path / "golden.yaml"
    assert main(["export", "--db", str(db), "--golden", str(golden)]) == 0
    assert load_judgments(str(golden))[0]["q0"]["d0-001"] == 2
    assert qrels["q1"]["d1-000"] == 1
    assert qrels["q0"]["d0-002"] == 1


def test_judge_adjudicate_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "cmd.db"
    store = disagreeing_store(db)
    store.add_judgment(Judgment("lead", "q0", "d0-001", 2, role="adjudicator"))
    store.add_judgment(Judgment("lead", "q1", "d1-000", 2, role="adjudicator"))
    store.close()
    assert main(["judge", "--adjudicate", "--db", str(db), "--annotator", "lead"]) == 0
    assert "Nothing to adjudicate" in capsys.readouterr().out
    # A human annotator's name cannot adjudicate (their own grades would be hidden), nor can
    # the adjudicator judge the queue as a human.
    assert main(["judge", "--adjudicate", "--db", str(db), "--annotator", "ann"]) == 2
    assert "ann-adj" in capsys.readouterr().err
    assert main(["judge", "--db", str(db), "--annotator", "lead"]) == 2
    assert "adjudicator" in capsys.readouterr().err
    # With a disagreement left, the command opens the app on the worklist.
    with Store(db) as again:
        again.add_judgment(Judgment("bob", "q1", "d1-000", 0))
    opened: list[list] = []
    monkeypatch.setattr(JudgeApp, "run", lambda self: opened.append(self.disputes))
    monkeypatch.setattr("workbench.commands.app_launch.require_terminal", lambda: None)
    assert main(["judge", "--adjudicate", "--db", str(db), "--annotator", "lead"]) == 0
    assert [[d.doc_id for d in worklist] for worklist in opened] == [["d1-000"]]
