"""What the judging screens ask of the store, one type per kind of request: a grade (with the
adaptive queue's draw record of the passage it grades), an undo, a note, a claim on the item
shown, a look at what other annotators did. Plain values, built by the headless sessions
(`flows.judging_session`) and served by the app's store thread (`tui.writer`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench import __version__
from workbench.core.model import Judgment, Role
from workbench.core.pool.queue_items import Key

if TYPE_CHECKING:
    from workbench.core.adaptive.estimate import Draw


def timed_judgment(
    annotator: str,
    query_id: str,
    doc_id: str,
    grade: int | None,
    note: str,
    shown_at: float,
    role: str = Role.HUMAN,
) -> Judgment:
    """A judgment stamped as the key is pressed: when it was graded, how long the passage was
    on screen, and which app version recorded it."""
    now = time.time()
    return Judgment(
        annotator=annotator,
        query_id=query_id,
        doc_id=doc_id,
        grade=grade,
        note=note,
        shown_at=shown_at,
        graded_at=now,
        elapsed_ms=max(0, int((now - shown_at) * 1000)),
        app_version=__version__,
        role=role,
    )


@dataclass(frozen=True)
class _Row:
    judgment: Judgment

    @property
    def key(self) -> Key:
        return (self.judgment.query_id, self.judgment.doc_id)


@dataclass(frozen=True)
class GradeWrite(_Row):
    """A grade of the passage shown; the screen moves on once it is committed."""

    draw: Draw | None = None
    """The adaptive queue's record of the random pick that served the passage, saved with its
    grade; None for any other passage."""


@dataclass(frozen=True)
class UndoWrite(_Row):
    """A row without a grade: the item is ungraded again."""


@dataclass(frozen=True)
class NoteWrite(_Row):
    """The same grade again with a new note (a new row: the latest row's note is current)."""


JudgmentWrite = GradeWrite | UndoWrite | NoteWrite
"""A row for the judgments table."""


@dataclass(frozen=True)
class Claim:
    """This annotator has the item open, so others pass it by (lost when enough others do)."""

    annotator: str
    key: Key


@dataclass(frozen=True)
class Look:
    """What others did since the last look (the progress figures); it also renews the followed
    annotator's claim, so an open app keeps its item while a crashed one loses it."""


StoreWrite = JudgmentWrite | Claim | Look
