"""The judging app's use case without a screen (`flows.judging_session.JudgingSession`): what a
key asks (grade, undo, note, jump, why this query) and what the session answers, driven directly:
no Textual, no store thread. The store is read once, as the app's store thread does at start
(`flows.judging_start.start_judging`), and each committed write is handed back as the app's
store thread hands it (`saved`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core import model
from workbench.core.errors import InputError
from workbench.core.model import Judgment
from workbench.flows.judging_requests import GradeWrite, NoteWrite, UndoWrite
from workbench.flows.judging_session import ConfirmGrade, JudgingSession, Refused
from workbench.flows.judging_start import start_judging
from workbench.store import Store, open_store


def started(store: Store, annotator: str = "ann") -> JudgingSession:
    session = JudgingSession(annotator)
    session.start(start_judging(store, annotator, 1, None, lambda *_: None, prefetch=8))
    return session


def commit(store: Store, session: JudgingSession, write: object) -> bool:
    """What the store thread does with a write, then the screen with its reply."""
    assert isinstance(write, GradeWrite | UndoWrite | NoteWrite)
    store.add_judgment(write.judgment, draw=write.draw if isinstance(write, GradeWrite) else None)
    return session.saved(write)


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    made = build_store(tmp_path / "s.db", queries=2, per_query=4)
    yield made
    made.close()


def test_a_grade_is_a_write_of_the_passage_shown_and_moves_on_once_committed(store) -> None:
    session = started(store)
    shown = session.show()
    assert shown is not None and shown.key == ("q0", "d0-000") and shown.new_item
    assert shown.grade is None and shown.draw is None  # a static queue draws nothing
    write = session.grade(2, shown_at=1.0)
    assert isinstance(write, GradeWrite) and write.key == shown.key
    assert write.judgment.grade == 2 and write.judgment.annotator == "ann"
    assert write.judgment.shown_at == 1.0
    assert session.show().key == shown.key  # nothing moves before the store commits it
    assert commit(store, session, write)
    following = session.show()
    assert following.key == ("q0", "d0-001") and following.new_item
    assert [(j.doc_id, j.grade) for j in store.current_judgments("ann")] == [("d0-000", 2)]


def test_an_out_of_scale_grade_is_refused_once_by_the_one_rule(store, monkeypatch) -> None:
    """The scale is checked in one place (`core.model.outside_scale`): the session refuses
    a grade off the scale before any write exists, so the store never sees it."""
    calls: list[list[int | None]] = []
    rule = model.outside_scale

    def counted(grades, scale):  # type: ignore[no-untyped-def]
        calls.append(list(grades))
        return rule(grades, scale)

    monkeypatch.setattr("workbench.flows.judging_session.outside_scale", counted)
    session = started(store)
    session.show()
    refused = session.grade(7, shown_at=0.0)
    assert isinstance(refused, Refused) and "7" in refused.why
    assert calls == [[7]]
    assert store.current_judgments("ann") == []
    assert session.takes(3) and not session.takes(4)
    # The store's own check (every other writer: imports, the API) is the same rule.
    with pytest.raises(InputError, match="grade 7 is outside the store's scale"):
        store.add_judgment(Judgment("ann", "q0", "d0-000", 7))


def test_undo_goes_back_and_keeps_the_note_for_the_regrade(store) -> None:
    session = started(store)
    session.show()
    assert session.note(("q0", "d0-000"), "unclear", 0.0) == "kept"  # waits for its grade
    write = session.grade(1, 0.0)
    assert write.judgment.note == "unclear"
    commit(store, session, write)
    assert session.show().key == ("q0", "d0-001")
    key = session.undo()
    assert key == ("q0", "d0-000")
    shown = session.show()
    assert shown.key == key and shown.note == "unclear" and shown.grade == 1
    undo = session.undo_write(key, 0.0)
    assert isinstance(undo, UndoWrite) and undo.judgment.grade is None
    commit(store, session, undo)
    shown = session.show()
    assert shown.key == key and shown.grade is None and shown.note == "unclear"
    assert session.undo() is None  # nothing graded left to undo


def test_a_note_on_a_graded_item_is_a_row_of_its_own(store) -> None:
    session = started(store)
    session.show()
    commit(store, session, session.grade(3, 0.0))
    session.queue.move(-1)
    shown = session.show()
    assert shown.key == ("q0", "d0-000") and shown.grade == 3
    assert session.note(shown.key, "", 0.0) is None  # unchanged
    note = session.note(shown.key, "exact answer", 0.0)
    assert isinstance(note, NoteWrite) and note.judgment.grade == 3
    commit(store, session, note)
    assert session.show().note == "exact answer"
    assert store.current_judgments("ann")[0].note == "exact answer"


def test_a_jump_and_a_revealed_item_asks_twice(store) -> None:
    session = started(store)
    session.show()
    assert session.jump("q1")
    assert session.show().key == ("q1", "d1-000")
    commit(store, session, session.grade(0, 0.0))
    session.queue.move(-1)
    key = session.show().key
    session.reveal(key)
    assert session.grade(2, 0.0) == ConfirmGrade(key, 2)
    assert isinstance(session.grade(2, 0.0), GradeWrite)  # the same grade again: taken
    assert session.why("q1").goal is None and session.why("q1").study is None  # static


def adaptive_store(tmp_path: Path) -> Path:
    """3 queries over 300 passages, two runs, pooled for the adaptive queue."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(120)]
    ids = [f"d{i}" for i in range(300)]
    text = {d: rng.choices(words, k=20) for d in ids}
    runs: dict[str, list[str]] = {"bm25": [], "dense": []}
    queries = []
    for q in range(3):
        topic = rng.sample(words, 4)
        queries.append({"_id": f"q{q}", "text": " ".join(topic)})
        relevant = set(rng.sample(ids, 8))
        for d in relevant:
            text[d] = text[d][:10] + rng.choices(topic, k=10)
        for system, lines in runs.items():
            score = {d: (2.5 if d in relevant else 0.0) + rng.gauss(0, 1.5) for d in ids}
            for rank, d in enumerate(sorted(ids, key=lambda d: -score[d]), start=1):
                lines.append(f"q{q} Q0 {d} {rank} {score[d]:.4f} {system}\n")
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "text": " ".join(t)}) + "\n" for d, t in text.items())
    )
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    db = tmp_path / "adaptive.db"
    args = ["pool", "--corpus", str(tmp_path / "corpus.jsonl"), "--db", str(db), "--queries",
            str(tmp_path / "queries.jsonl"), "--systems", "", "--policy", "adaptive"]  # fmt: skip
    for system, lines in runs.items():
        (tmp_path / f"{system}.run").write_text("".join(lines))
        args += ["--run", str(tmp_path / f"{system}.run")]
    assert main(args) == 0
    return db


def test_the_draw_record_travels_with_the_passage_shown_to_its_grade(tmp_path: Path) -> None:
    """The adaptive queue's random pick is shown with its draw record, and its grade carries
    that record to the store: no second look-up of the pick on the grade's path."""
    store = open_store(adaptive_store(tmp_path))
    try:
        session = started(store)
        assert session.adaptive is not None and session.ranking is not None
        query_id = session.show().key[0]
        why = session.why(query_id)
        assert why.goal == "…" and why.study is None  # worked out off the grade key's path
        session.ranking.refresh()  # as the screen's catch-up does while the annotator reads
        assert session.why(query_id).study.startswith("study R@10")
        drawn = None
        for n in range(120):
            shown = session.show()
            assert shown is not None
            if session.needs_vectors(shown.key):
                session.adaptive.vectors  # noqa: B018 (what the screen's thread builds)
            write = session.grade(1 if n % 5 == 0 else 0, 0.0)
            assert isinstance(write, GradeWrite) and write.draw is shown.draw
            if shown.draw is not None:
                assert shown.draw.doc_id == shown.key[1]
                drawn = write
            commit(store, session, write)
            if drawn is not None:
                break
        assert drawn is not None, "no draw in 120 grades"
        stored = store.draws("ann")
        assert [(d.query_id, d.doc_id) for d in stored] == [drawn.key]
    finally:
        store.close()
