"""The adjudication screen: each disagreement with every annotator's grade and note side by
side; the adjudicator's key stores a row of role 'adjudicator', which decides the pair in
exports."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup
from textual.widgets import Footer, Header, Static

from workbench.core.agreement.adjudication import ADJUDICATOR, Dispute, Key
from workbench.flows.judging_requests import GradeWrite, NoteWrite, timed_judgment
from workbench.flows.judging_start import Start, start_adjudicating
from workbench.store import JudgmentStore
from workbench.tui.grade_bar import GradeBar
from workbench.tui.grading import PREFETCH, GradingScreen, grade_binding
from workbench.tui.help import HelpScreen, adjudication_help
from workbench.tui.literal import literal, literal_plain, literal_title
from workbench.tui.panels import QueryPanel
from workbench.tui.passage import PassageView
from workbench.tui.pickers import NoteScreen
from workbench.tui.writer import Saved, StoreWriter


class OpinionCard(Static):
    """One annotator's grade and note."""

    DEFAULT_CSS = """
    OpinionCard { width: 1fr; height: auto; min-height: 3; max-height: 8; padding: 0 1;
                  border: round $warning; }
    """


class Opinions(HorizontalGroup):
    """The annotators' grades side by side, one card each."""

    DEFAULT_CSS = """
    Opinions { height: auto; }
    """

    def show(self, dispute: Dispute, scale: dict[int, str]) -> None:
        self.remove_children()
        cards = []
        for opinion in dispute.opinions:
            text = literal(f"{opinion.grade} {scale.get(opinion.grade, '')}", "bold", one_line=True)
            text.append("\n")
            if opinion.note:
                text.append_text(literal(opinion.note, "italic"))
            else:
                text.append("(no note)", style="dim")
            card = OpinionCard(text)
            card.border_title = literal_title(opinion.annotator)
            cards.append(card)
        self.mount_all(cards)


class AdjudicationStatus(Static):
    """Where the adjudicator is in the list and what is decided."""

    DEFAULT_CSS = """
    AdjudicationStatus { height: 1; padding: 0 1; background: $boost; text-wrap: nowrap;
                         text-overflow: ellipsis; }
    """


class AdjudicationScreen(GradingScreen):
    """Walk the disagreements; 0-3 stores the adjudicated grade and goes on."""

    BINDINGS = [
        *[grade_binding(grade, "adjudicate") for grade in range(10)],
        Binding("n", "note", "Note", id="adjudicate-note"),
        Binding("f", "fold", "Fold narrative", id="adjudicate-fold", show=False),
        Binding("k,left", "move(-1)", "Prev", id="adjudicate-previous"),
        Binding("j,right", "move(1)", "Next", id="adjudicate-next"),
        Binding("question_mark", "help", "Help", id="adjudicate-help"),
        Binding("q", "quit", "Quit", id="adjudicate-quit"),
    ]

    def __init__(self, writer: StoreWriter, annotator: str, disputes: list[Dispute]):
        super().__init__(writer, annotator)
        self.disputes = disputes
        self.cursor = 0
        self.decided: dict[Key, int] = {}
        """Grades this adjudicator committed in this session."""
        self._notes: dict[Key, str] = {}
        self._shown_query: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield QueryPanel(fold_key="f", id="query")
        yield PassageView(id="passage")
        yield Opinions(id="opinions")
        yield GradeBar(self.scale, id="grades")
        yield AdjudicationStatus(id="adjudication-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = literal_plain(f"adjudicating as {self.annotator}")
        self.query_one(PassageView).focus()
        self._read_start()

    def start_read(self) -> Callable[[JudgmentStore], Start]:
        return partial(start_adjudicating, doc_ids=self._window())

    def started(self, start: Start) -> None:
        self.show_current()

    def ahead(self) -> list[str]:
        return self._window()

    def _window(self) -> list[str]:
        """The disagreements' passages from the cursor on, then the one before it."""
        following = self.disputes[self.cursor : self.cursor + PREFETCH]
        before = self.disputes[self.cursor - 1 : self.cursor] if self.cursor else []
        return list(dict.fromkeys(d.doc_id for d in [*following, *before]))

    @property
    def current(self) -> Dispute | None:
        return self.disputes[self.cursor] if self.disputes else None

    def show_current(self) -> None:
        dispute = self.current
        status = self.query_one(AdjudicationStatus)
        if dispute is None:
            self.query_one(QueryPanel).display = False
            self.query_one(PassageView).show(None, "", frozenset())
            self.query_one("#passage-text", Static).update(
                Text("Nothing to adjudicate: no pair has human grades that differ.")
            )
            status.update("0 disagreements")
            return
        if dispute.query_id != self._shown_query:
            self._shown_query = dispute.query_id
            self.query_one(QueryPanel).show(self.query_of(dispute.query_id))
        self._show_passage(dispute.key, dispute.doc_id)
        self.query_one(Opinions).show(dispute, self.scale)
        grade = self.decided.get(dispute.key)
        self.query_one(GradeBar).mark(grade)
        text = Text()
        text.append(f"disagreement {self.cursor + 1}/{len(self.disputes)}", style="bold")
        text.append_text(
            literal(
                f" │ {dispute.query_id} · {dispute.doc_id} │ spread {dispute.spread}", one_line=True
            )
        )
        text.append(f" │ adjudicated {len(self.decided)}/{len(self.disputes)}")
        if grade is not None:
            text.append_text(
                literal(
                    f" │ decided {grade} {self.scale.get(grade, '')}", "bold cyan", one_line=True
                )
            )
        note = self._notes.get(dispute.key)
        if note:
            text.append_text(literal(f" │ note: {note}", "italic", one_line=True))
        status.update(text)

    # -- writing ------------------------------------------------------------------------------

    def on_screen(self) -> Key | None:
        return self.current.key if self.loaded and self.current is not None else None

    def _grade(self, key: Key, grade: int, note_only: bool = False) -> None:
        """Store the adjudicated grade (on the scale: `check_action`), or, `note_only`, the
        same grade again with its note."""
        judgment = timed_judgment(
            self.annotator, *key, grade, self._notes.get(key, ""), self._shown_at, ADJUDICATOR
        )
        self._submit(NoteWrite(judgment) if note_only else GradeWrite(judgment))

    def saved(self, message: Saved) -> None:
        judgment = message.write.judgment
        assert judgment.grade is not None
        key = (judgment.query_id, judgment.doc_id)
        self.decided[key] = judgment.grade
        if isinstance(message.write, NoteWrite):
            self.show_current()
            return
        following = self._next_undecided()
        if following is None:
            self.notify(
                f"All {len(self.disputes)} disagreements are adjudicated. Thank you!", timeout=5
            )
        else:
            self.cursor = following
        self.show_current()

    def _next_undecided(self) -> int | None:
        count = len(self.disputes)
        for step in range(1, count + 1):
            index = (self.cursor + step) % count
            if self.disputes[index].key not in self.decided:
                return index
        return None

    # -- moving -------------------------------------------------------------------------------

    def action_move(self, delta: int) -> None:
        def move() -> None:
            target = self.cursor + delta
            if not 0 <= target < len(self.disputes):
                self.notify(
                    "That is the " + ("last" if delta > 0 else "first") + " disagreement",
                    timeout=2,
                )
                return
            self.cursor = target
            self.show_current()

        self._dispatch(move)

    def action_note(self) -> None:
        dispute = self.current
        if dispute is None:
            return
        key = dispute.key

        def done(text: str | None) -> None:
            if text is None or self.current is None or self.current.key != key:
                return
            self._notes[key] = text
            decided = self.decided.get(key)
            if decided is not None:  # already decided: the note goes in a row of its own
                self._dispatch(lambda: self._grade(key, decided, note_only=True))
            self.show_current()

        decided = self.decided.get(key)
        where = f"query {dispute.query_id}, disagreement {self.cursor + 1}/{len(self.disputes)}"
        if decided is None:
            state = "not decided yet: the note is saved with your grade"
        else:
            state = f"decided {decided} {self.scale.get(decided, '')}: the note is saved at once"
        note = NoteScreen(self._notes.get(key, ""), dispute.doc_id, where, state)
        self.app.push_screen(note, done)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(adjudication_help(self.scale), "Adjudication help"))
