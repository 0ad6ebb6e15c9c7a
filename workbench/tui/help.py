"""The help screen: every key of the screen and what it does, in words, fitting 80x24 (Textual's
help panel listed the generic scroll bindings and cut the rest off at that size)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.tui.literal import literal, literal_title


def _grade_keys(scale: dict[int, str]) -> str:
    grades = sorted(scale)
    return f"{grades[0]}–{grades[-1]}" if len(grades) > 1 else "".join(map(str, grades))


def _wording(scale: dict[int, str], rel_threshold: int | None = None) -> Text:
    """The grades in words; with `rel_threshold`, those counted relevant marked `*` (the closing
    line says so)."""
    shown = " · ".join(
        f"{g} {w}{'*' if rel_threshold is not None and g >= rel_threshold else ''}"
        for g, w in sorted(scale.items())
    )
    return literal(shown, "dim", one_line=True)


def help_text(keys: list[tuple[str, str | Text]], closing: str) -> Group:
    """A key column and what each key does (wrapped lines keep their indent), then `closing`."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(ratio=1)
    for key, what in keys:
        table.add_row(key, what)
    return Group(table, Text(), Text(closing))


def judging_help(scale: dict[int, str], rel_threshold: int, adaptive: bool = False) -> Group:
    """`adaptive`: the store's queue is the adaptive one, which chooses every passage."""
    if adaptive:
        skip = "no skip: the queue chose this passage; g goes to another query"
        moves = "your grades in the order given, then the queue's pick"
        closing = (
            "The adaptive queue picks each passage (the likeliest relevant, or a random draw for"
            " the estimate) and stops a query once its completeness is certified: the status"
            " line says '≈ N to certify', '> N to certify' (more than it has left, as the"
            " model sees it), 'certified', or '≈ N to an estimate' before it has one. "
        )
    else:
        skip = "skip: to the end of your queue, for this session only (not saved)"
        moves = "previous passage        j  →   next passage"
        closing = ""
    return help_text(
        [
            (_grade_keys(scale), "grade (key or click a button): saved, then the next passage"),
            ("", _wording(scale, rel_threshold)),
            ("u", "undo your last grade: back to that passage, ungraded"),
            ("s", skip),
            ("n", "note: saved with the grade; once graded, a new row, same grade"),
            ("r", "reveal the systems (once graded; a regrade then asks twice)"),
            ("f  m", "fold the narrative or show it · m: Markdown source or rendered"),
            ("↑ ↓", "scroll the passage (PgUp PgDn space: a page) to 'end of passage'"),
            ("o", "the queries overview: progress and coverage of each query"),
            ("g  /", "jump to a query (type to filter, Enter to go)"),
            ("k  ←  j  →", moves) if adaptive else ("k  ←", moves),
            ("?", "this help (Escape closes it)"),
            ("q", "quit: every grade is already saved; reopening resumes"),
            ("ctrl+p", "every command by name"),
        ],
        closing + "Judging is blind: systems, ranks, scores and others' grades stay hidden so they"
        f" cannot sway you. *Relevant: grade >= {rel_threshold} (--rel-threshold).",
    )


def adjudication_help(scale: dict[int, str]) -> Group:
    return help_text(
        [
            (_grade_keys(scale), "decide the pair's grade, then the next disagreement"),
            ("", _wording(scale)),
            ("n", "note: saved with your grade; once decided, a new row, same grade"),
            ("f", "fold the narrative away, or show it again"),
            ("↑ ↓", "scroll the passage (PgUp PgDn space: a page) to 'end of passage'"),
            ("k  ←", "previous disagreement   j  →   next disagreement"),
            ("?", "this help (Escape closes it)"),
            ("q", "quit: every grade is already saved"),
        ],
        "Each card is one annotator's grade and note. Your grade (role adjudicator) decides the"
        " pair in exports.",
    )


class HelpScreen(ModalScreen[None]):
    """Shows a help text over the screen; Escape, ? or q closes it."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help-close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80; max-width: 100%; height: auto; max-height: 100%;
                                  border: round $accent; padding: 0 1; background: $surface; }
    HelpScreen Static { width: 1fr; }
    """

    def __init__(self, text: Group, title: str = "Help"):
        super().__init__()
        self.text = text
        self.title_text = title

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = literal_title(self.title_text)
            scroll.border_subtitle = "Escape closes"
            yield Static(self.text, id="help-text")
