"""The judging screen: one passage at a time, graded by key or click, each grade committed on
the store thread before the screen advances. It draws what the headless session says to show
and sends what it says to write (`flows.judging_session`: the queue and every decision)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Footer

from workbench.core.model import PoolEntry
from workbench.core.pool.queue import Key
from workbench.flows.judging_requests import Claim, Look, NoteWrite, UndoWrite
from workbench.flows.judging_session import ConfirmGrade, JudgingSession, Refused
from workbench.flows.judging_start import Start, jump_targets, upcoming
from workbench.store import JudgmentStore
from workbench.tui.grade_bar import GradeBar
from workbench.tui.grading import PREFETCH, GradingScreen, grade_binding
from workbench.tui.help import HelpScreen, judging_help
from workbench.tui.judging_catch_up import CatchUp
from workbench.tui.panels import DonePanel, ProvenancePanel, QueryPanel
from workbench.tui.passage import PassageView
from workbench.tui.pickers import CoverageSource, note_dialog, query_picker
from workbench.tui.status_lines import MessageLine, StatusLine
from workbench.tui.writer import Claimed, Looked, Saved, SharedUpdate, StoreWriter

LOOK_EVERY_S = 5.0
"""How often the screen asks the store what other annotators did (figures stay current) and
renews its claim (well inside store.CLAIM_TTL_S)."""
AFTER_GRADE_ONLY = frozenset({"grade", "note", "reveal", "skip"})
"""Actions that act on the passage, so do nothing while the done panel hides it."""


class JudgingScreen(GradingScreen):
    """Grade the annotator's queue, one passage at a time."""

    BINDINGS = [
        *[grade_binding(grade, "grade") for grade in range(10)],
        Binding("u", "undo", "Undo", id="undo"),
        Binding("s", "skip", "Skip", id="skip"),
        Binding("n", "note", "Note", id="note"),
        # Reveal and the overview stay in help (?) and the palette, off the footer: at 80
        # columns the footer then keeps Quit, Prev and Next.
        Binding("r", "reveal", "Reveal", id="reveal", show=False),
        Binding("f", "fold", "Fold narrative", id="fold", show=False),
        Binding("m", "raw", "Markdown source", id="raw", show=False),
        Binding("g,slash", "jump", "Jump to query", id="jump", show=False),
        Binding("o", "overview", "Queries", id="overview", show=False),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("k,left", "move(-1)", "Prev", id="previous"),
        Binding("j,right", "move(1)", "Next", id="next"),
    ]

    revealed: reactive[bool] = reactive(False)
    """Whether systems, ranks and scores are shown for the current (already graded) item."""
    finished: reactive[bool] = reactive(False, bindings=True)
    """Whether the done panel stands in place of the passage (nothing left; the user has not
    acted since)."""

    def __init__(
        self,
        writer: StoreWriter,
        annotator: str,
        rel_threshold: int = 1,
        pool: list[PoolEntry] | None = None,
        coverage: CoverageSource | None = None,
        notices: tuple[str, ...] = (),
    ):
        super().__init__(writer, annotator)
        self.notices = notices
        """Said on the message line at start (e.g. a system the pool was built without)."""
        self.coverage = coverage
        """Computes the coverage report for the overview's panel (run in a worker thread)."""
        self._pool = pool
        self.session = JudgingSession(annotator, rel_threshold)
        """The queue and every decision a key makes; only the UI thread touches it."""
        self.catch_up = CatchUp(self)
        """The adaptive queue's work done while the annotator reads."""
        self._shown_query: str | None = None
        self.on_shown: Callable[[Key], None] | None = None
        """A hook called after a new item's passage is on screen (the latency bench uses it)."""

    @property
    def _shown_key(self) -> Key | None:
        shown = self.session.shown
        return shown.key if shown is not None else None

    def compose(self) -> ComposeResult:
        # No header: every row it took is the passage's (the help names annotator and store).
        yield QueryPanel(fold_key="f", id="query")
        yield PassageView(id="passage")
        yield DonePanel(id="done")
        yield ProvenancePanel(id="provenance")
        yield GradeBar(self.scale, id="grades")
        yield StatusLine(self.session.rel_threshold, id="status")
        yield MessageLine(id="message", stands_for="footer")
        yield Footer(id="footer")

    def on_mount(self) -> None:
        self.query_one(PassageView).focus()
        self._read_start()

    def start_read(self) -> Callable[[JudgmentStore], Start]:
        return self.session.start_read(self._pool, self.writer.follow, PREFETCH)

    def started(self, start: Start) -> None:
        self.session.start(start)
        self._pool = None  # the queue holds it now
        self.catch_up.started()
        self.show_current()
        self.catch_up.build_when_painted()
        self.finished = self.session.queue.done
        self.set_interval(LOOK_EVERY_S, self._look)
        if self.notices:  # stays until the first grade (or 30 s), never over the narrative
            self.notify(" · ".join(self.notices), severity="warning", timeout=30)

    def ahead(self) -> list[str]:
        return upcoming(self.session.queue, PREFETCH)

    # -- showing ------------------------------------------------------------------------------

    def show_current(self) -> None:
        shown = self.session.show()
        if shown is None:
            return
        key, entry = shown.key, shown.entry
        if shown.new_item:
            self.revealed = False
            # A message about the item left behind (skipped, undone, ...) is stale now; one
            # about the new item is said after this call.
            self.query_one(MessageLine).clear_stale()
        panel = self.query_one(QueryPanel)
        if entry.query_id != self._shown_query:
            first = self._shown_query is None
            self._shown_query = entry.query_id
            query = self.query_of(entry.query_id)
            panel.show(query)
            if panel.chosen and query.narrative and not first:
                self.notify(f"A new query, {entry.query_id}: its narrative is folded (f shows it)")
        if shown.new_item:
            panel.passage_shown(entry.query_id)
        drawn = self._show_passage(key, entry.doc_id)
        self.query_one(GradeBar).mark(shown.grade)
        self.query_one(ProvenancePanel).show(entry, self.revealed)
        self.show_status()
        if shown.new_item and shown.grade is None:
            self._claim(key)
        if drawn and self.on_shown is not None:
            self.call_after_refresh(self.on_shown, key)
        self.catch_up.after_show()

    def show_status(self) -> None:
        """The status line (and the done panel's figures) for the item shown."""
        shown = self.session.shown
        if shown is None or self.session.queue.current is None:
            return
        if self.finished:
            _, overall = self.session.progress(shown.key[0])
            adaptive = self.session.adaptive is not None
            self.query_one(DonePanel).show(
                overall.yours, overall.relevant, self.session.rel_threshold,
                overall.judged if adaptive else None,
            )  # fmt: skip
        self.query_one(StatusLine).show(self.session)

    def watch_revealed(self, revealed: bool) -> None:
        if self.is_mounted:
            self.query_one(ProvenancePanel).show(self.session.queue.current, revealed)

    def watch_finished(self, finished: bool) -> None:
        self.query_one(PassageView).display = not finished
        self.query_one(DonePanel).display = finished
        if finished:
            self.revealed = False
        self.show_current()

    # -- the store thread ---------------------------------------------------------------------

    def _claim(self, key: Key) -> None:
        """This annotator has the item open, so others pass it by (the answer: Claimed)."""
        self.writer.submit(Claim(self.annotator, key), self)

    def _look(self) -> None:
        """Ask what others did and renew the claim (skipped while a write is on its way: that
        one's reply brings the same news, and the next look renews)."""
        if not self.writer.busy:
            self.writer.submit(Look(), self)

    def _apply(self, update: SharedUpdate | None) -> None:
        """Take in what other annotators did (their grades stay unseen: only counts change)."""
        if update is not None:
            self.session.apply(update.rows, update.claims)

    def _refresh(self) -> None:
        """After news from the store, the figures of the item shown (and its draw record: a
        grade taken in may have undone its pick), or the new item."""
        shown, current = self.session.shown, self.session.queue.current
        key = (current.query_id, current.doc_id) if current is not None else None
        if shown is None or key != shown.key or self._drawn != key:
            self.show_current()
        else:
            self.session.show()
            self.show_status()
            self.catch_up.after_show()

    @on(Looked)
    def _looked(self, message: Looked) -> None:
        self._apply(message.update)
        queue = self.session.queue
        reopened = self.finished and not queue.done and queue.advance()
        self.finished = self.finished and not reopened
        self._refresh()
        if reopened:
            self.notify("More passages opened up for you (another annotator undid a grade)")
        self._drain()

    def saved(self, message: Saved) -> None:
        write = message.write
        self._apply(message.update)
        more = self.session.saved(write)
        key = write.key
        if isinstance(write, UndoWrite):
            self._claim(key)
        elif isinstance(write, NoteWrite):
            done = "saved for" if write.judgment.note else "removed from"
            self.notify(f"Note {done} {key[1]} (a new row, same grade)", timeout=3)
        elif not more:
            self.finished = True
        self.show_current()
        if isinstance(write, UndoWrite):
            kept = " (its note stays for the next grade)" if key in self.session.notes else ""
            self.notify(f"Undone: {key[1]} is ungraded again{kept}", timeout=3)

    @on(Claimed)
    def _claimed(self, message: Claimed) -> None:
        """A lost claim means enough others judge the item: move on, unless this annotator
        already acted on it (then their grade simply adds a judgment)."""
        self._apply(message.update)
        busy = bool(self._in_flight or self._waiting)  # a key acted on it already
        moved = None if message.won or busy else self.session.claim_lost(message.claim.key)
        if moved is None:
            self._refresh()
        elif moved:
            self.show_current()
            self.notify("Another annotator has that passage: here is the next one", timeout=3)
        else:
            self.finished = True
            self.show_current()
            self.notify("Nothing is left for you: others have the remaining items", timeout=5)
        self._drain()

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.finished and action in AFTER_GRADE_ONLY:
            return False
        return super().check_action(action, parameters)

    @property
    def settled(self) -> bool:
        """As the grading screen's, and the status line up to date (the catch-up's first steps
        done; the models still to compute once do not count)."""
        return super().settled and not self.catch_up.behind()

    def on_screen(self) -> Key | None:
        if not self.loaded or self.finished or self.session.queue.current is None:
            return None
        return self._shown_key

    def waits_for_queue(self, key: Key) -> bool:
        return self.session.needs_vectors(key)

    def _grade(self, key: Key, grade: int) -> None:
        asked = self.session.grade(grade, self._shown_at)
        if isinstance(asked, Refused):
            self.notify(f"key {grade} not taken: {asked.why}", severity="warning", timeout=3)
        elif isinstance(asked, ConfirmGrade):
            self.notify(f"You saw which systems found this passage: press {grade} again to "
                        "regrade it anyway, any other key to leave its grade",
                        severity="warning", timeout=6)  # fmt: skip
        else:
            self._submit(asked)

    def _dispatch(self, action: Callable[[], object]) -> None:
        self.session.confirming = None  # any other key ends a wait for a grade's second press
        super()._dispatch(action)

    def action_undo(self) -> None:
        self._dispatch(self._undo)

    def _undo(self) -> None:
        key = self.session.undo()
        if key is None:
            self.notify("Nothing to undo", timeout=2)
            return
        self.finished = False
        self.show_current()
        self._submit(self.session.undo_write(key, self._shown_at))

    def action_skip(self) -> None:
        def skip() -> None:
            if not self.session.skip():  # the advice first: the message line is cut at its width
                self.notify("No skip: grade it, or g for another query (the queue may have "
                            "drawn it at random)", timeout=4)  # fmt: skip
                return
            self.show_current()
            self.notify("Skipped for this session: it comes back at the end of your queue",
                        timeout=3)  # fmt: skip

        self._dispatch(skip)

    def action_move(self, delta: int) -> None:
        def move() -> None:
            if self.finished:  # the first move shows the last graded passage again
                if not self.session.can_go_back():
                    self.notify("You have graded nothing to go back to", timeout=2)
                else:
                    self.finished = False
                return
            moved = self.session.queue.move(delta)
            self.show_current()
            if not moved and delta > 0 and self.session.at_pick():
                self.notify("This is the queue's pick, nothing comes after it: grade it", timeout=2)
            elif not moved:
                self.notify(f"That is the {'last' if delta > 0 else 'first'} item", timeout=2)

        self._dispatch(move)

    def action_reveal(self) -> None:
        self.session.confirming = None
        key = self._shown_key
        if key is None or self.session.queue.grade_of(key) is None:
            self.notify("Grade it first: systems, ranks and scores stay hidden until then "
                        "(k: back to the one you just graded)", severity="warning",
                        timeout=3)  # fmt: skip
            return
        self.revealed = not self.revealed
        if self.revealed:
            self.session.reveal(key)
            self.notify("Systems shown: let them not sway the grades that follow", timeout=3)

    def action_note(self) -> None:
        self._dispatch(self._open_note)

    def _open_note(self) -> None:
        """A note on the passage on screen; not graded yet, it waits for its grade (said in
        the status line)."""
        key = self._shown_key
        if key is None:
            return

        def done(text: str | None) -> None:
            if text is None or self._shown_key != key:
                return
            asked = self.session.note(key, text, self._shown_at)
            if asked is None:
                self.notify("Note unchanged" if text else "No note added", timeout=2)
                return
            if isinstance(asked, NoteWrite):
                self._dispatch(partial(self._submit, asked))
            elif asked == "kept":
                self.notify(f"Note kept for {key[1]}: saved with its grade", timeout=3)
            else:
                self.notify(f"Note removed from {key[1]}", timeout=3)
            self.show_current()

        self.app.push_screen(note_dialog(self.session, key, self.scale), done)

    def _pick_query(self, filter_first: bool) -> None:
        self._ask(jump_targets(self.session.queue))  # read while the annotator picks

        def done(query_id: str | None) -> None:
            if query_id is None:
                return
            if self.session.jump(query_id):
                self.finished = False
                self.show_current()
            else:
                self.notify(f"Nothing in {query_id} is left for you: others judge it", timeout=3)

        picker = query_picker(self.session, self.queries, filter_first, self.coverage)
        self.app.push_screen(picker, done)

    def action_jump(self) -> None:
        self._dispatch(partial(self._pick_query, filter_first=True))

    def action_overview(self) -> None:
        self._dispatch(partial(self._pick_query, filter_first=False))

    def action_help(self) -> None:
        adaptive = self.session.adaptive is not None
        keys = judging_help(self.scale, self.session.rel_threshold, adaptive=adaptive)
        # who judges where: the screen has no header
        self.app.push_screen(HelpScreen(keys, f"Help · {self.app.sub_title}"))
