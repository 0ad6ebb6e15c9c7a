"""The judging screen's keys other than a grade's: undo, skip, move, reveal, note, jump to a
query, the overview and help. A part of `judging.JudgingScreen` (which binds the keys), whose
state it reads."""

from __future__ import annotations

from workbench.core.queue import Key
from workbench.tui.help import HelpScreen, judging_help
from workbench.tui.pickers import NoteScreen, QueryPicker, query_rows
from workbench.tui.reads import jump_targets


class JudgingActions:
    """The judging screen's actions (mixed into `judging.JudgingScreen`)."""

    def _grade(self, key: Key, grade: int) -> None:
        """Grade `key`; once its systems were revealed, only when the same key is pressed
        twice (a grade made knowing which systems found the passage is not a blind one)."""
        if grade not in self.scale:
            return
        if key in self._seen_systems and self._confirming != (key, grade):
            self._confirming = (key, grade)
            self.notify(
                f"You saw which systems found this passage: press {grade} again to regrade it "
                "anyway, any other key to leave its grade",
                severity="warning",
                timeout=6,
            )
            return
        self._confirming = None
        self._submit_grade(key, grade, "grade", self.note_of(key))

    def note_of(self, key: Key) -> str:
        """The item's note: one typed and not saved yet (waiting for a grade, or on its way),
        else the one saved with this annotator's current grade."""
        if key in self._notes:
            return self._notes[key]
        return self.judging.notes.get(key, "")

    def action_undo(self) -> None:
        self._dispatch(self._undo)

    def _undo(self) -> None:
        key = self.judging.last_graded()
        if key is None:
            self.notify("Nothing to undo", timeout=2)
            return
        self.judging.cursor = self.judging.index_of(key)
        self.finished = False
        note = self.judging.notes.get(key)
        if note and key not in self._notes:  # kept for the next grade, shown in the status
            self._notes[key] = note
        self.show_current()
        self._submit_grade(key, None, "undo")

    def action_skip(self) -> None:
        def skip() -> None:
            if self.session is not None:
                self.notify(  # the advice first: the message line is cut at its width
                    "No skip: grade it, or g for another query (the queue may have drawn it at "
                    "random)",
                    timeout=4,
                )
                return
            self.judging.skip()
            self.show_current()
            self.notify(
                "Skipped for this session: it comes back at the end of your queue", timeout=3
            )

        self._dispatch(skip)

    def action_move(self, delta: int) -> None:
        def move() -> None:
            if self.finished:  # the first move shows the last graded passage again
                if self.session is not None and not self.judging.history:
                    # The adaptive queue shows only its picks and this annotator's grades.
                    self.notify("You have graded nothing to go back to", timeout=2)
                    return
                self.finished = False
                return
            moved = self.judging.move(delta)
            self.show_current()
            current = self.judging.current
            pick = current is not None and (
                self.judging.grade_of((current.query_id, current.doc_id)) is None
            )
            if not moved and delta > 0 and self.session is not None and pick:
                self.notify("This is the queue's pick, nothing comes after it: grade it", timeout=2)
            elif not moved:
                self.notify(
                    "That is the " + ("last" if delta > 0 else "first") + " item", timeout=2
                )

        self._dispatch(move)

    def action_reveal(self) -> None:
        self._confirming = None
        if self._shown_key is None or self.judging.grade_of(self._shown_key) is None:
            self.notify(
                "Grade it first: systems, ranks and scores stay hidden until then (k: back to"
                " the one you just graded)",
                severity="warning",
                timeout=3,
            )
            return
        self.revealed = not self.revealed
        if self.revealed:
            self._seen_systems.add(self._shown_key)
            self.notify("Systems shown: let them not sway the grades that follow", timeout=3)

    def action_note(self) -> None:
        self._dispatch(self._open_note)

    def _open_note(self) -> None:
        """A note on the passage on screen, graded or not: the dialog names it, its place and
        whether it is graded (n pressed after a grade is on the next passage, not the one just
        graded). Not graded yet, the note waits for its grade (said in the status line)."""
        key = self._shown_key
        if key is None:
            return
        grade = self.judging.grade_of(key)
        position, length = self.judging.your_queue()
        where = f"query {key[0]}, passage {position}/{length} of your queue"
        if grade is not None:
            state = f"graded {grade} {self.scale.get(grade, '')}: the note is saved at once"
        else:
            state = "not graded yet: the note is saved with its grade"
            last = self.judging.last_graded()
            if last is not None and last != key:
                state += " (for the one you graded last: Escape, then k)"

        def done(text: str | None) -> None:
            if text is None or self._shown_key != key:
                return
            before = self.note_of(key)
            if text == before:
                self.notify("Note unchanged" if text else "No note added", timeout=2)
                return
            graded = self.judging.grade_of(key)
            if graded is not None:  # a new row, same grade: the latest row's note is current
                self._notes[key] = text
                self._dispatch(lambda: self._submit_grade(key, graded, "note", text))
            elif text:
                self._notes[key] = text
                self.notify(f"Note kept for {key[1]}: saved with its grade", timeout=3)
            else:
                self._notes.pop(key, None)
                self.notify(f"Note removed from {key[1]}", timeout=3)
            self.show_current()

        self.app.push_screen(NoteScreen(self.note_of(key), key[1], where, state), done)

    def _pick_query(self, filter_first: bool) -> None:
        self._ask(jump_targets(self.judging))  # read while the annotator picks
        rows = query_rows(self.judging, self.queries, counted=self._counted())
        current = self.judging.current.query_id if self.judging.current else None

        def done(query_id: str | None) -> None:
            if query_id is None:
                return
            if self.judging.jump_to_query(query_id):
                self.finished = False
                self.show_current()
            else:
                self.notify(f"Nothing in {query_id} is left for you: others judge it", timeout=3)

        self.app.push_screen(
            QueryPicker(
                rows,
                current,
                filter_first,
                None if filter_first else self.coverage,
                self.judging.rel_threshold,
            ),
            done,
        )

    def action_jump(self) -> None:
        self._dispatch(lambda: self._pick_query(filter_first=True))

    def action_overview(self) -> None:
        self._dispatch(lambda: self._pick_query(filter_first=False))

    def action_help(self) -> None:
        self.app.push_screen(
            HelpScreen(
                judging_help(
                    self.scale, self.judging.rel_threshold, adaptive=self.session is not None
                ),
                f"Help · {self.app.sub_title}",  # who judges where: the screen has no header
            )
        )
