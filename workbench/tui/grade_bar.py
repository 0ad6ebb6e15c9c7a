"""Clickable grade buttons showing the study's grade scale and wording."""

from __future__ import annotations

from textual.containers import HorizontalGroup
from textual.message import Message
from textual.widgets import Button

from workbench.tui.literal import literal


class GradeButton(Button):
    """One grade; not focusable, so keys always reach the screen's bindings."""

    can_focus = False

    def __init__(self, grade: int, wording: str):
        super().__init__(
            literal(f"{grade} {wording}", one_line=True), id=f"grade-button-{grade}", compact=True
        )
        self.grade = grade


class GradeBar(HorizontalGroup):
    """The grade scale as buttons; the current grade of the item is marked."""

    DEFAULT_CSS = """
    GradeBar { height: auto; padding: 0 1; }
    GradeBar GradeButton { margin: 0 1 0 0; min-width: 8; }
    GradeBar GradeButton.-current { text-style: bold reverse; }
    """

    class Chosen(Message):
        """A grade button was clicked."""

        def __init__(self, grade: int):
            super().__init__()
            self.grade = grade

    def __init__(self, scale: dict[int, str], **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.scale = dict(sorted(scale.items()))
        self._marked: int | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        for grade, wording in self.scale.items():
            yield GradeButton(grade, wording)

    async def set_scale(self, scale: dict[int, str]) -> None:
        """Show another scale (the store's, once read); the mark stays."""
        self.scale = dict(sorted(scale.items()))
        await self.remove_children()
        await self.mount_all(GradeButton(grade, wording) for grade, wording in self.scale.items())
        marked, self._marked = self._marked, None
        self.mark(marked)

    def mark(self, grade: int | None) -> None:
        if grade == self._marked:
            return
        self._marked = grade
        for button in self.query(GradeButton):
            button.set_class(button.grade == grade, "-current")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if isinstance(event.button, GradeButton):
            self.post_message(self.Chosen(event.button.grade))
