"""One document model for every report: a title and blocks (headings, paragraphs, tables,
charts), rendered to terminal text, Markdown or HTML by `workbench.reports.render`. Reports
build a `Document` from typed results; renderers own every escape and every number format, so
a figure reads the same everywhere and no data string can act on a terminal or a page.

Cells are plain values: text, numbers (formatted by `figure`), None (a dash), or `Interval`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Align = Literal["left", "right"]
Kind = Literal["plain", "note", "warning", "error"]
Style = Literal["", "strong", "muted", "good", "warn", "bad"]


def figure(value: float | int | None, digits: int = 3) -> str:
    """The one number format: None as '-', an int as itself, a float to `digits` decimals."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    """A fraction as a whole percentage ('-' for None)."""
    return "-" if value is None else f"{100 * value:.0f}%"


@dataclass(frozen=True, slots=True)
class Interval:
    """A figure with its interval, written 'value [low, high]' (or 'low–high' without value)."""

    value: float | None
    low: float | None
    high: float | None
    digits: int = 3

    def text(self) -> str:
        if self.low is None or self.high is None:
            return figure(self.value, self.digits)
        span = f"[{figure(self.low, self.digits)}, {figure(self.high, self.digits)}]"
        return span if self.value is None else f"{figure(self.value, self.digits)} {span}"


@dataclass(frozen=True, slots=True)
class Styled:
    """A cell value with a style (e.g. a status word coloured by what it says)."""

    value: Cell
    style: Style = ""


Cell = str | int | float | None | Interval | Styled


def cell_text(value: Cell, digits: int = 3) -> str:
    """A cell as plain text (before the renderer's escaping)."""
    if isinstance(value, Styled):
        return cell_text(value.value, digits)
    if isinstance(value, Interval):
        return value.text()
    if isinstance(value, str):
        return value
    return figure(value, digits)


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    align: Align = "right"
    digits: int = 3
    help: str = ""
    """What the column means: a tooltip on its header in HTML (a report that wants it in text
    too lists it, e.g. as Bullets)."""
    priority: int = 0
    """Which columns a narrow terminal keeps: the first column always, then the others in
    increasing priority (ties left to right) as long as they fit; the rest are named under the
    table (`--wide` shows them). Markdown and HTML show every column."""
    detail: bool = False
    """In HTML, shown in a second table (the first column and the detail columns) folded in a
    `<details>` under the table, so that the main table fits a laptop's screen."""


@dataclass(frozen=True, slots=True)
class Table:
    columns: Sequence[Column]
    rows: Sequence[Sequence[Cell]]
    title: str = ""
    footer: Sequence[Sequence[Cell]] = ()
    """Summary rows (a mean), set apart from the body."""


@dataclass(frozen=True, slots=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str
    kind: Kind = "plain"


@dataclass(frozen=True, slots=True)
class Bullets:
    items: Sequence[str]
    kind: Kind = "plain"


@dataclass(frozen=True, slots=True)
class IntervalRow:
    label: str
    value: float | None
    low: float | None
    high: float | None
    group: str = ""
    """A legend group (e.g. a status), which sets the colour."""


@dataclass(frozen=True, slots=True)
class IntervalChart:
    """One row per item: the estimate as a dot and its interval as a bar, on a 0..1 axis,
    with an optional labelled threshold line."""

    title: str
    rows: Sequence[IntervalRow]
    axis_label: str
    threshold: float | None = None
    threshold_label: str = ""


@dataclass(frozen=True, slots=True)
class Curve:
    label: str
    points: Sequence[float]
    """y at x = 1, 2, ... (x = 0 is 0)."""
    highlight: bool = False
    """Drawn in the warning colour and listed first (e.g. an incomplete query)."""
    note: str = ""


@dataclass(frozen=True, slots=True)
class SmallMultiples:
    """One small chart per curve, on shared axes, so 35 curves never overlap."""

    title: str
    curves: Sequence[Curve]
    x_label: str
    y_label: str
    legend: Sequence[tuple[str, bool]] = ()
    """(meaning, highlight?) pairs explaining the two colours."""

    @property
    def y_top(self) -> float:
        """The shared y axis's top (`shared_top`)."""
        return shared_top(c.points for c in self.curves)


def shared_top(curves: Iterable[Sequence[float]]) -> float:
    """The top of the axis every curve is drawn against: the largest value of any of them (1
    when none is positive). Each curve scaled to its own top drew 1 relevant found then 6
    non-relevant as a full bar, as tall as a query that found 9."""
    return max((max(points, default=0) for points in curves), default=0) or 1


Block = Heading | Paragraph | Bullets | Table | IntervalChart | SmallMultiples


@dataclass(slots=True)
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    subtitle: str = ""

    def add(self, *blocks: Block) -> Document:
        self.blocks.extend(blocks)
        return self
