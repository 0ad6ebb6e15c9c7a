"""The passage panel: the headings it sits under, its text (a Markdown file's passage rendered,
safely; `m` shows the source; any other literal), query terms highlighted, scrollable, and the
count of its drawings that tells the screen when one has reached the terminal."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Static

from workbench.core.display import heading_path, opens_with_title, passage_lines
from workbench.core.model import Doc
from workbench.tui.highlight import highlight
from workbench.tui.literal import literal, literal_title
from workbench.tui.markdown import PassageMarkdown, is_markdown


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
CUT_CODE = "⋯ a code block longer than a passage: it begins in the passage before this one"
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

    raw = False
    """Whether Markdown passages show as their source (the `m` key), kept from one passage to
    the next."""
    _shown: tuple[Doc | None, str, frozenset[str]] | None = None

    def _update(self, content: RenderableType) -> None:
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
        self._shown = (doc, doc_id, terms)
        self.border_title = literal_title(doc_id)
        if doc is None:
            self._update(literal(f"(passage {doc_id} is missing from the store)", "red"))
        else:
            self._update(self._content(doc, doc_id, terms))
        self.scroll_home(animate=False)

    def toggle_raw(self) -> bool:
        """Show Markdown as its source, or rendered again; whether it is now raw."""
        self.raw = not self.raw
        if self._shown is not None:
            self.show(*self._shown)
        return self.raw

    def _content(self, doc: Doc, doc_id: str, terms: frozenset[str]) -> RenderableType:
        """The heading path, the passage (Markdown rendered unless raw, else literal), its end."""
        head = Text()
        at_top = not doc.headings and opens_with_title(doc.title, doc.text)
        context = "" if at_top and not self.raw else heading_path(doc.title, doc.headings)
        if context:
            head = highlight(context, terms)
            head.stylize("bold italic")
        fence = doc.span.fence if doc.span is not None else ""
        source = doc.span.source if doc.span is not None else doc_id.rpartition("#")[0]
        end = Text(END_OF_PASSAGE, "dim")
        if is_markdown(source) and not self.raw:
            parts: list[RenderableType] = [head] if context else []
            if fence:
                parts.append(Text(CUT_CODE, "dim italic"))
            return Group(*parts, PassageMarkdown(doc.text, terms, fence), end)
        text = head + Text("\n\n") if context else Text()
        if fence:
            text.append(CUT_CODE + "\n", "dim italic")
        lines = passage_lines(doc.title, doc.text) if not self.raw else [(doc.text, False)]
        for n, (line, heading) in enumerate(lines):
            shown = highlight(line, terms)
            if heading:
                shown.stylize("bold")
            text.append_text(shown if not n else Text("\n") + shown)
        text.append("\n")
        text.append_text(end)
        return text

    def say(self, doc_id: str, message: str) -> None:
        """A line in the passage's place (it is being read, or could not be)."""
        self.border_title = literal_title(doc_id)
        self._update(literal(message, "dim"))
        self.scroll_home(animate=False)
