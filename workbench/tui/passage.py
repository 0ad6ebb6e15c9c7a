"""The passage panel: its text, literal, query terms highlighted, scrollable, and the count of
its drawings that tells the screen when one has reached the terminal."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Static

from workbench.core.display import passage_lines, visible
from workbench.core.model import Doc
from workbench.tui.highlight import highlight
from workbench.tui.literal import literal, literal_title


class PassageText(Static):
    """The passage's text; counts its drawings and the last one rendered for the terminal."""

    def __init__(self, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.drawing = 0
        """Bumped by every new content (PassageView.show, say)."""
        self.painted = 0
        """The drawing last rendered: the compositor renders a widget right before it writes
        the screen's update to the terminal."""

    def render_lines(self, crop: Region) -> list[Strip]:
        self.painted = self.drawing
        return super().render_lines(crop)


END_OF_PASSAGE = "── end of passage ──"
"""The passage's last line, so the annotator knows they read it all."""


class PassageView(VerticalScroll):
    """The passage (title + text), literal, query terms highlighted, scrollable; a Markdown
    heading shown as bold words, once (`display.passage_lines`); its last line says it ends,
    and while more of it is below the box its bottom border says how much."""

    DEFAULT_CSS = """
    PassageView { height: 1fr; padding: 0 1; border: round $secondary; }
    PassageView > Static { width: 1fr; }
    """
    BINDINGS = [Binding("space", "page_down", "Page down", show=False)]

    def compose(self):  # type: ignore[no-untyped-def]
        yield PassageText(id="passage-text")

    @property
    def drawing(self) -> int:
        """The number of the passage's latest drawing (`painted` reaches it once rendered)."""
        return self.query_one(PassageText).drawing

    @property
    def painted(self) -> int:
        return self.query_one(PassageText).painted

    def _update(self, content: Text) -> None:
        text = self.query_one(PassageText)
        text.drawing += 1
        text.update(content)

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._say_more, init=False)
        self.watch(self, "virtual_size", self._say_more, init=False)  # a new passage

    def on_resize(self) -> None:
        """The box changed size (a fold, the terminal)."""
        self._say_more()

    def _say_more(self) -> None:
        below = max(0, round(self.max_scroll_y - self.scroll_y))
        lines = f"{below} more line{'s' * (below != 1)}"
        self.border_subtitle = f"↓ {lines}: PgDn, space" if below else ""

    def show(self, doc: Doc | None, doc_id: str, terms: frozenset[str]) -> None:
        self.border_title = literal_title(doc_id)
        if doc is None:
            self._update(literal(f"(passage {doc_id} is missing from the store)", "red"))
        else:
            text = Text()
            if doc.title:
                title = highlight(visible(doc.title, one_line=True), terms)
                title.stylize("bold")
                text.append_text(title)
                text.append("\n\n")
            for n, (line, heading) in enumerate(passage_lines(doc.title, doc.text)):
                shown = highlight(line, terms)
                if heading:
                    shown.stylize("bold")
                text.append_text(shown if not n else Text("\n") + shown)
            text.append("\n\n")
            text.append(END_OF_PASSAGE, "dim")
            self._update(text)
        self.scroll_home(animate=False)

    def say(self, doc_id: str, message: str) -> None:
        """A line in the passage's place (it is being read, or could not be)."""
        self.border_title = literal_title(doc_id)
        self._update(literal(message, "dim"))
        self.scroll_home(animate=False)
