"""The judging app: hosts the store thread and opens the judging screen (or, adjudicating, the
worklist's screen) at once; the screen's first read, like every later one, runs on the store
thread, so the UI thread never calls the store. Other keys typed while it reads wait for it;
grade keys are dropped (nothing is on screen to grade)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import get_current_worker

from workbench.core.agreement.adjudication import Dispute
from workbench.core.model import PoolEntry
from workbench.store import JudgmentStore
from workbench.tui.adjudicate import AdjudicationScreen
from workbench.tui.judging import JudgingScreen
from workbench.tui.literal import literal_markup, literal_plain
from workbench.tui.writer import StoreWriter

if TYPE_CHECKING:
    from workbench.core.coverage import CoverageReport


class JudgeApp(App[None]):
    """`workbench judge`: grade a store's pool as one annotator; with `disputes`, adjudicate
    them instead (`workbench judge --adjudicate`)."""

    CSS_PATH = "app.tcss"
    TITLE = "workbench judge"

    def __init__(
        self,
        store: JudgmentStore,
        annotator: str,
        rel_threshold: int = 1,
        pool: list[PoolEntry] | None = None,
        notices: tuple[str, ...] = (),
        disputes: list[Dispute] | None = None,
    ):
        super().__init__()
        self._quit_asked = False
        self.damaged: str | None = None
        """Why the store could not be read at start, when it holds what no workbench wrote
        (the app closes at once, and `workbench judge` exits 2 with it)."""
        self.disputes = disputes
        self._pool = pool
        self.notices = notices
        self.store = store
        self.annotator = annotator
        self.rel_threshold = rel_threshold
        self.writer = StoreWriter(store)

    def on_mount(self) -> None:
        self.sub_title = literal_plain(f"{self.annotator} · {self.store.title}")
        self._serve_store()
        if self.disputes is not None:
            self.push_screen(AdjudicationScreen(self.writer, self.annotator, self.disputes))
            for notice in self.notices:  # no message line here: a short toast
                self.notify(notice, severity="warning", timeout=5)
            return
        # The notices go to the judging screen's message line, off the query and narrative.
        self.push_screen(
            JudgingScreen(
                self.writer,
                self.annotator,
                self.rel_threshold,
                self._pool,
                coverage=self._coverage,
                notices=self.notices,
            )
        )

    def notify(  # type: ignore[override]
        self,
        message: str,
        *,
        title: str = "",
        severity: str = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast literal: messages quote data (a save error names the pair)."""
        super().notify(
            literal_plain(message),
            title=literal_plain(title),
            severity=severity,  # type: ignore[arg-type]
            timeout=timeout,
            markup=False,
        )

    def _coverage(self) -> CoverageReport:
        """The coverage report of the store (slow: run by the overview in a worker thread)."""
        from dataclasses import replace

        from workbench.flows.coverage import coverage_and_plan

        report, plan = coverage_and_plan(self.store, rel_threshold=self.rel_threshold)
        return replace(report, study=plan)

    @work(thread=True, exclusive=False, group="store", exit_on_error=False)
    def _serve_store(self) -> None:
        worker = get_current_worker()
        self.writer.serve(lambda: worker.is_cancelled)

    async def action_quit(self) -> None:
        """Quit once every grade already given is committed. While the store's server is
        unreachable that waits for it; a second quit leaves without the grades not yet taken.
        The wait runs as a worker, so the second quit is heard."""
        if self.writer.retrying:
            if self._quit_asked:
                self.writer.abandon()
                self.exit()
                return
            self.notify(
                "The store's server is unreachable: quitting once your last grade is saved"
                " (quit again to leave without it)",
                severity="warning",
                timeout=10,
            )
        if self._quit_asked:
            return  # already waiting to quit
        self._quit_asked = True
        self.run_worker(self._exit_when_saved(), group="quit")

    async def _exit_when_saved(self) -> None:
        while not await asyncio.to_thread(self.writer.wait_idle, 1.0):
            if self.writer.abandoned:
                break
        self.exit()

    def on_unmount(self) -> None:
        # The store thread serves what is in flight, then gives back this annotator's claim so
        # others need not wait for it: a short wait, once the screen is gone.
        self.writer.stop(timeout=2.0)
        gc.unfreeze()  # the judging screen froze the queue's objects (judging_catch_up.CatchUp)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, JudgingScreen):
            return
        for grade, wording in sorted(screen.scale.items()):
            yield SystemCommand(
                literal_markup(f"Grade {grade}: {wording}"),
                "Grade this passage and go on",
                partial(screen.action_grade, grade),
            )
        yield SystemCommand("Undo", "Clear the last grade and go back to it", screen.action_undo)
        yield SystemCommand(
            "Skip",
            "Move this passage to the end of the queue, for this session",
            screen.action_skip,
        )
        yield SystemCommand("Note", "Attach a note to this passage's grade", screen.action_note)
        yield SystemCommand(
            "Reveal systems", "Show who retrieved it (after grading)", screen.action_reveal
        )
        yield SystemCommand("Overview", "Queries and their progress", screen.action_overview)
        yield SystemCommand("Jump to query", "Filter queries and pick one", screen.action_jump)
