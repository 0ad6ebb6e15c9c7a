"""The smallest terminal the app grades in. Below it the passage box shrinks to nothing while
the grade keys still work (at 40x12 a whole queue was graded unseen), so the app covers the
screen with a line that says so and takes no grade until the terminal is enlarged."""

from __future__ import annotations

import os

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widgets import Static

MIN_SIZE = Size(64, 18)
"""At 64 columns every button of the default grade scale shows; at 18 rows the passage keeps
MIN_PASSAGE_LINES lines under a query whose narrative takes the most it may (45% of the
height), with the grade bar, status and key hints (or message) lines (two rows to spare since
the header went)."""
SURFACE = "window" if "web_driver" in os.environ.get("TEXTUAL_DRIVER", "") else "terminal"
"""What the app is drawn in: a browser's window under `workbench serve` (textual-serve's web
driver), else a terminal; the too-small message names the one the annotator can enlarge."""
MIN_PASSAGE_LINES = 3
"""A passage box showing fewer lines of text than this is not read but guessed."""


def too_small(size: Size, passage_lines: int | None = None) -> str | None:
    """Why a terminal of `size` (its passage box `passage_lines` tall, when known) is too
    small to grade in; None when it is not."""
    if size.width < MIN_SIZE.width or size.height < MIN_SIZE.height:
        return (
            f"{SURFACE} too small: {size.width}x{size.height}, needs at least"
            f" {MIN_SIZE.width}x{MIN_SIZE.height}"
            + (" characters: widen it (on a phone, judge on a larger screen)"
               if SURFACE == "window" else "")
        )
    if passage_lines is not None and passage_lines < MIN_PASSAGE_LINES:
        return (
            f"{SURFACE} too small: {size.width}x{size.height} shows {passage_lines} lines of the"
            f" passage, needs at least {MIN_PASSAGE_LINES}: make it taller"
        )
    return None


class TooSmallScreen(ModalScreen[None]):
    """Covers a grading screen while the terminal is too small (its grade keys do not reach
    the screen beneath); goes away by itself once the terminal is large enough. It counts the
    keys it swallows and says so, so that keys typed while it was up are seen to have gone
    nowhere (and a test can tell they were read before the terminal grows)."""

    BINDINGS = [Binding("q", "app.quit", "Quit")]
    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; background: $background; }
    TooSmallScreen > Static { width: 100%; height: auto; padding: 0 1; text-align: center; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="too-small")

    ignored = 0

    def on_mount(self) -> None:
        self.fit()

    def on_key(self, event: events.Key) -> None:
        if event.key != "q":
            self.ignored += 1
            self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Say the size now, or leave once it is enough."""
        if self.app.screen is not self:  # already leaving (two resizes in a row)
            return
        message = too_small(self.app.size)
        if message is None:
            self.dismiss()
            return
        said = f"{message}. Enlarge it to grade; q quits."
        if self.ignored:
            said += f"\n{self.ignored} key{'s' if self.ignored > 1 else ''} ignored"
        self.query_one(Static).update(Text(said))
