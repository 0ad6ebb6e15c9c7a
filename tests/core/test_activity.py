"""Who judged what, and how fast: counts, times per grade (regrades in, undos and untimed
labels out), agreement with the others and with the adjudicated grade; and the verdict column
is the one a narrow terminal keeps."""

from __future__ import annotations

from workbench.core.agreement.activity import annotator_activity, percentile
from workbench.core.model import Judgment, Role
from workbench.reports.activity import activity_blocks
from workbench.reports.document import Document
from workbench.reports.render import render_as

SCALE = [0, 1, 2, 3]


def graded(name: str, items: int, grade_of, role: str = Role.HUMAN, ms: int = 0) -> list:  # type: ignore[no-untyped-def]
    return [
        Judgment(name, f"q{i % 4}", f"d{i}", grade_of(i), elapsed_ms=ms and ms + 100 * i, role=role)
        for i in range(items)
    ]


def test_counts_and_times_per_person() -> None:
    alice = graded("alice", 20, lambda i: i % 4, ms=1000)
    undo = Judgment("alice", "q0", "d0", None, elapsed_ms=50)
    regrade = Judgment("alice", "q1", "d1", 3, elapsed_ms=9000)
    imported = graded("bob", 12, lambda i: i % 4)  # no time recorded
    history = [*alice, undo, regrade, *imported]
    current = [j for j in history if (j.annotator, j.doc_id) != ("alice", "d0")]
    current = [j for j in current if j is not alice[1]]  # d1: its regrade is current
    people = {p.annotator: p for p in annotator_activity(history, current, SCALE)}
    assert set(people) == {"alice", "bob"}
    a = people["alice"]
    assert (a.grades, a.queries, a.timed) == (19, 4, 21)
    times = sorted([(1000 + 100 * i) / 1000 for i in range(20)] + [9.0])
    assert a.median_s == times[10] and a.p90_s == percentile(times, 0.9) == times[18]
    assert people["bob"].median_s is None and people["bob"].timed == 0


def test_agreement_with_the_others_and_the_adjudicator() -> None:
    alice = graded("alice", 20, lambda i: i % 4)
    bob = graded("bob", 20, lambda i: i % 4 if i < 16 else 0)
    judge = graded("carol", 20, lambda i: i % 4, role=Role.ADJUDICATOR)
    model = graded("llm", 20, lambda i: 1, role=Role.MODEL)
    rows = [*alice, *bob, *judge, *model]
    people = {p.annotator: p for p in annotator_activity(rows, rows, SCALE)}
    assert "llm" not in people  # a model judge is measured by `agree`, not counted here
    assert people["alice"].vs_others is not None and people["alice"].vs_others.n == 20
    assert people["alice"].vs_adjudicated.kappa.kappa == 1.0  # type: ignore[union-attr]
    assert people["bob"].vs_adjudicated.kappa.kappa < 1.0  # type: ignore[union-attr]
    assert people["carol"].vs_others is None and people["carol"].vs_adjudicated is None
    assert people["carol"].to_json()["role"] == "adjudicator"


def test_a_narrow_terminal_keeps_the_verdict() -> None:
    alice = graded("alice", 20, lambda i: i % 4, ms=2000)
    bob = graded("bob", 20, lambda i: (i * 7) % 4, ms=3000)
    people = annotator_activity([*alice, *bob], [*alice, *bob], SCALE)
    text = render_as(Document("t", activity_blocks(people)), "table", 50)
    header = next(line for line in text.splitlines() if line.startswith("annotator"))
    assert header.split()[:2] == ["annotator", "verdict"]
    assert "BELOW 0.6" in text
    assert "kappa vs others" in text.split("left out", 1)[1]  # folded, and named
