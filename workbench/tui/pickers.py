"""Small modal screens: a note input and the query overview / jump list."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label
from textual.worker import get_current_worker

from workbench.core.display import visible
from workbench.core.model import Query
from workbench.core.pool.queue import JudgingQueue
from workbench.tui.coverage_panel import CoverageFailed, CoveragePanel, CoverageReady
from workbench.tui.literal import literal

if TYPE_CHECKING:
    from workbench.core.coverage import CoverageReport
    from workbench.core.pool.queue import Key
    from workbench.flows.judging_session import JudgingSession

CoverageSource = Callable[[], "CoverageReport"]
"""Computes the store's coverage report (slow: the overview runs it in a worker thread)."""


class NoteInput(Input):
    """An Input that keeps no control character (a pasted ESC shows as ␛, as everywhere)."""

    def insert_text_at_cursor(self, text: str) -> None:
        super().insert_text_at_cursor(visible(text, one_line=True))

    def replace(self, text: str, start: int, end: int) -> None:
        super().replace(visible(text, one_line=True), start, end)


ID_SHOWN = 60
"""The note dialog shows at most this many characters of a passage id."""


class NoteScreen(ModalScreen[str | None]):
    """Ask for a note on one passage, named with where it stands (`where`: its query and
    place; `state`: graded or not, and where the note goes); Enter keeps it (empty: removes
    it), Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="note-cancel")]
    DEFAULT_CSS = """
    NoteScreen { align: center middle; }
    NoteScreen > Vertical { width: 70; max-width: 100%; height: auto; border: round $accent;
                            padding: 0 1; background: $surface; }
    NoteScreen Label { width: 1fr; }
    NoteScreen #note-state, NoteScreen #note-keys { color: $text-muted; }
    """

    def __init__(self, initial: str, doc_id: str, where: str = "", state: str = ""):
        super().__init__()
        self.initial = initial
        self.doc_id = doc_id
        self.where = where
        self.state = state

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Note"
            # Wraps rather than losing the words off the right edge; a long id is cut (a
            # 3,000-character one filled the dialog).
            doc_id = self.doc_id
            if len(doc_id) > ID_SHOWN:
                doc_id = doc_id[: ID_SHOWN - 1] + "…"
            title = f"Note for {doc_id}" + (f", {self.where}" if self.where else "")
            yield Label(literal(title, "bold", one_line=True), id="note-title")
            if self.state:
                yield Label(literal(self.state, one_line=True), id="note-state")
            yield NoteInput(
                value=visible(self.initial, one_line=True),
                placeholder="why this grade?",
                id="note-input",
            )
            yield Label(
                "Enter keeps it (emptied, Enter removes it), Escape cancels", id="note-keys"
            )

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class QueryRow:
    query_id: str
    text: str
    judged: int
    """Items needing nothing more (by this annotator or enough others); on the adaptive queue,
    the judgments that count toward the estimate, every annotator's."""
    pooled: int
    """Items in the query's queue; -1: no fixed number (the adaptive queue decides, after each
    grade, whether the query needs more)."""
    relevant: int
    """Relevant among this annotator's grades."""
    yours: int = -1
    """Items this annotator graded (-1: same as `judged`)."""


def query_rows(
    queue: JudgingQueue, queries: dict[str, Query], counted: Mapping[str, int] | None = None
) -> list[QueryRow]:
    """One row per query of the queue, in queue order, with the annotator's progress.
    `counted` (the adaptive queue): per query, the judgments that count toward its estimate,
    every annotator's; its frame (every system's top candidates and a reserve) is what it may
    serve, not what it will, so no "24/450" that reads as 426 to go."""
    rows = []
    for query_id in queue.query_ids():
        counts = queue.progress(query_id)
        text = queries[query_id].text if query_id in queries else ""
        judged, pooled = counts.judged, counts.pooled
        if counted is not None:
            judged, pooled = counted.get(query_id, counts.judged), -1
        rows.append(QueryRow(query_id, text, judged, pooled, counts.relevant, counts.yours))
    return rows


class QueryPicker(ModalScreen[str | None]):
    """Every query with its progress; type to filter, Enter to go there, Escape to stay. With
    `coverage` (the overview), a panel below fills in each query's coverage once a worker
    thread has computed it: the list is usable at once."""

    BINDINGS = [Binding("escape", "cancel", "Back", id="picker-cancel")]
    DEFAULT_CSS = """
    QueryPicker { align: center middle; }
    QueryPicker > Vertical { width: 90%; height: 90%; border: round $accent;
                             background: $surface; }
    QueryPicker DataTable { height: 1fr; }
    QueryPicker DataTable.-with-coverage { height: auto; max-height: 40%; }
    """

    def __init__(
        self,
        rows: list[QueryRow],
        current: str | None,
        filter_first: bool,
        coverage: CoverageSource | None = None,
        rel_threshold: int = 1,
    ):
        super().__init__()
        self.rel_threshold = rel_threshold
        self.rows = rows
        self.current = current
        self.filter_first = filter_first
        self.coverage = coverage

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(placeholder="filter queries (id or words), Enter to pick", id="filter")
            # Beside the coverage, the list takes no more lines than it has rows.
            classes = "-with-coverage" if self.coverage is not None else ""
            yield DataTable(cursor_type="row", zebra_stripes=True, id="queries", classes=classes)
            if self.coverage is not None:
                yield CoveragePanel(self.rel_threshold, id="coverage")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        shared = any(row.yours not in (-1, row.judged) for row in self.rows)
        self._shared = shared
        open_ended = any(row.pooled < 0 for row in self.rows)
        judged = "judged" if open_ended else "done"
        if shared:  # whose counts are whose: everyone's beside yours
            judged += " (all)"
        labels = ["query", judged, *(["yours"] if shared else []), f"rel≥{self.rel_threshold}"]
        widths = [len(label) for label in labels]
        for row in self.rows:
            cells = self._cells(row)
            widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]
        for label, width in zip(labels, widths, strict=True):
            table.add_column(label, width=width)
        # The text column takes the rest of the row (cells have 1 cell of padding each side,
        # plus the border and a scrollbar), so long queries end in an ellipsis, not mid-word.
        available = int(self.app.size.width * 0.9) - 2 - 2
        rest = available - sum(w + 2 for w in widths) - 2
        table.add_column("text", width=max(rest, 12))
        self._fill("")
        (self.query_one(Input) if self.filter_first else table).focus()
        if self.coverage is not None:
            self._compute_coverage(self.coverage)

    @work(thread=True, exclusive=True, exit_on_error=False, group="coverage")
    def _compute_coverage(self, compute: CoverageSource) -> None:
        """Never raises: a failure becomes a message that says why."""
        worker = get_current_worker()
        try:
            report = compute()
        except Exception as exc:
            message: CoverageReady | CoverageFailed = CoverageFailed(f"{type(exc).__name__}: {exc}")
        else:
            message = CoverageReady(report)
        if not worker.is_cancelled:
            self.post_message(message)

    @on(CoverageReady)
    def _coverage_ready(self, message: CoverageReady) -> None:
        self.query_one(CoveragePanel).show_report(message.report)

    @on(CoverageFailed)
    def _coverage_failed(self, message: CoverageFailed) -> None:
        self.query_one(CoveragePanel).show_failure(message.reason)

    def _fill(self, needle: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        needle = needle.casefold()
        for row in self.rows:
            text = visible(row.text, one_line=True)
            if (
                needle
                and needle not in visible(row.query_id, one_line=True).casefold()
                and needle not in text.casefold()
            ):
                continue
            table.add_row(
                *(Text(cell) for cell in self._cells(row)),
                Text(text, no_wrap=True, overflow="ellipsis"),
                key=row.query_id,
            )
            if row.query_id == self.current and not needle:
                table.move_cursor(row=table.row_count - 1)

    def _cells(self, row: QueryRow) -> list[str]:
        """The row's cells before the query text, as shown (control characters visible)."""
        yours = [str(row.yours)] if self._shared else []
        query_id = visible(row.query_id, one_line=True)
        if row.pooled < 0:
            return [query_id, str(row.judged), *yours, str(row.relevant)]
        done = "✓ " if row.judged == row.pooled else ""
        return [query_id, f"{done}{row.judged}/{row.pooled}", *yours, str(row.relevant)]

    def on_key(self, event: events.Key) -> None:
        """Typing filters wherever the focus is: in the overview the list has it, and letters
        typed there went nowhere."""
        field = self.query_one(Input)
        if event.is_printable and event.character and not field.has_focus:
            field.focus()
            field.insert_text_at_cursor(event.character)
            event.stop()
            event.prevent_default()

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted)
    def _pick_first(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            self._dismiss_row(table.cursor_row)

    @on(DataTable.RowSelected)
    def _picked(self, event: DataTable.RowSelected) -> None:
        self.dismiss(str(event.row_key.value))

    def _dismiss_row(self, index: int) -> None:
        table = self.query_one(DataTable)
        self.dismiss(str(table.coordinate_to_cell_key(Coordinate(index, 0)).row_key.value))

    def action_cancel(self) -> None:
        self.dismiss(None)


def note_dialog(session: JudgingSession, key: Key, scale: Mapping[int, str]) -> NoteScreen:
    """The note dialog for the passage on screen, graded or not: it names the passage, its
    place and whether it is graded (n pressed after a grade is on the next passage, not the one
    just graded)."""
    queue = session.queue
    grade = queue.grade_of(key)
    position, length = queue.your_queue()
    where = f"query {key[0]}, passage {position}/{length} of your queue"
    if grade is not None:
        state = f"graded {grade} {scale.get(grade, '')}: the note is saved at once"
    else:
        state = "not graded yet: the note is saved with its grade"
        last = queue.last_graded()
        if last is not None and last != key:
            state += " (for the one you graded last: Escape, then k)"
    return NoteScreen(session.note_of(key), key[1], where, state)


def query_picker(
    session: JudgingSession,
    queries: dict[str, Query],
    filter_first: bool,
    coverage: CoverageSource | None,
) -> QueryPicker:
    """The jump list (`filter_first`) or the overview (with the coverage panel) of the
    session's queries."""
    queue = session.queue
    rows = query_rows(queue, queries, counted=session.counted())
    current = queue.current.query_id if queue.current else None
    return QueryPicker(
        rows, current, filter_first, None if filter_first else coverage, queue.rel_threshold
    )
