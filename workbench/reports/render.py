"""A `Document` as terminal text, Markdown or (`workbench.reports.html`) a self-contained HTML
page. Each renderer owns its escaping: text shows control characters visibly, Markdown also
escapes what would split a table or start markup, HTML escapes markup (ids and passages can
hold `<script>`). Text fits a width (`workbench.reports.width`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from workbench.core.display import visible
from workbench.reports.document import (
    Block,
    Bullets,
    Cell,
    Column,
    Document,
    Heading,
    IntervalChart,
    Paragraph,
    SmallMultiples,
    Table,
    cell_text,
)
from workbench.reports.html import render_html
from workbench.reports.svg import interval_chart, small_multiples
from workbench.reports.width import fitted_columns, wrapped

# -- terminal text ----------------------------------------------------------------------------

BLOCKS = " ▁▂▃▄▅▆▇█"
PREFIX = {"plain": "", "note": "note: ", "warning": "warning: ", "error": "error: "}
def render_text(document: Document, width: int | None = None) -> str:
    """The document as terminal text; with `width`, each table keeps the columns that fit it
    (saying which it left out and that `--wide` shows them) and every other line is wrapped to
    it, never inside a word: an id or a number longer than the width stays whole."""
    lines = wrapped(visible(document.title, one_line=True), width)
    if document.subtitle:
        lines += wrapped(visible(document.subtitle, marks=True), width)
    for block in document.blocks:
        lines.append("")
        lines.extend(_text_block(block, width))
    return "\n".join(lines).rstrip("\n") + "\n"


def _text_block(block: Block, width: int | None = None) -> list[str]:
    if isinstance(block, Heading):
        return wrapped(visible(block.text, one_line=True), width)
    if isinstance(block, Paragraph):
        return wrapped(PREFIX[block.kind] + visible(block.text, marks=True), width)
    if isinstance(block, Bullets):
        return [
            line
            for item in block.items
            for line in wrapped(PREFIX[block.kind] + visible(item, marks=True), width, indent="  ")
        ]
    if isinstance(block, Table):
        return text_table(block, width)
    if isinstance(block, IntervalChart):
        return _text_intervals(block, width)
    return _text_curves(block, width)


def text_table(table: Table, width: int | None = None) -> list[str]:
    """Columns padded to their widest cell; the first column left-aligned unless set. With
    `width`: the columns that fit it (`fitted_columns`), and a line naming those left out."""
    header = [visible(c.header, one_line=True) for c in table.columns]
    body = [_text_row(row, table.columns) for row in table.rows]
    footer = [_text_row(row, table.columns) for row in table.footer]
    everything = [header, *body, *footer]
    widths = [max(len(r[i]) for r in everything) for i in range(len(header))]
    shown = fitted_columns(table.columns, widths, width)

    def line(cells: list[str]) -> str:
        padded = (
            cells[i].ljust(widths[i]) if table.columns[i].align == "left" else
            cells[i].rjust(widths[i])
            for i in shown
        )  # fmt: skip
        return "  ".join(padded).rstrip()

    out = wrapped(visible(table.title, one_line=True), width) if table.title else []
    out += [line(header), *(line(r) for r in body)]
    if footer:
        out.append("  ".join("-" * widths[i] for i in shown))
        out += [line(r) for r in footer]
    left_out = list(dict.fromkeys(header[i] for i in range(len(header)) if i not in shown))
    if left_out:
        names = ", ".join(left_out)
        out += wrapped(f"(left out at width {width}: {names}; --wide shows them)", width)
    return out


def _text_row(row: Sequence[Cell], columns: Sequence[Column]) -> list[str]:
    return [
        visible(cell_text(v, c.digits), one_line=True) for v, c in zip(row, columns, strict=True)
    ]


def interval_bar(
    value: float | None, low: float | None, high: float | None, width: int = 20
) -> str:
    """'█' up to the estimate, '▒' across the rest of its interval, '·' beyond (0..1)."""
    if value is None:
        return "·" * width
    cells = []
    for i in range(width):
        middle = (i + 0.5) / width
        inside = low is not None and high is not None and low <= middle <= high
        cells.append("█" if middle <= value else "▒" if inside else "·")
    return "".join(cells)


def sparkline(values: Sequence[float], width: int = 24, top: float | None = None) -> str:
    """One line: each character's height is the value over `top` (default: the largest)."""
    if not values:
        return ""
    if len(values) > width:  # the last value of each bucket: curves are cumulative
        values = [values[min(len(values) - 1, ((i + 1) * len(values)) // width - 1)]
                  for i in range(width)]  # fmt: skip
    ceiling = top if top is not None else max(values)
    if ceiling <= 0:
        return BLOCKS[1] * len(values)
    steps = len(BLOCKS) - 1
    return "".join(BLOCKS[max(1, round(min(v, ceiling) / ceiling * steps))] for v in values)


def _text_intervals(chart: IntervalChart, width: int | None = None) -> list[str]:
    labels = [visible(r.label, one_line=True)[:16] for r in chart.rows]
    label_width = max((len(label) for label in labels), default=5)
    out = wrapped(visible(chart.title, one_line=True), width)
    for label, row in zip(labels, chart.rows, strict=True):
        bar = interval_bar(row.value, row.low, row.high)
        out.append(f"  {label:<{label_width}}  {bar}  {visible(row.group, one_line=True)}")
    threshold = f"  | {visible(chart.threshold_label)}" if chart.threshold_label else ""
    legend = f"{'':<{label_width}}  █ estimate  ▒ 95% interval  · beyond{threshold}"
    return out + wrapped(legend, width, indent="  ", hang=" " * (label_width + 4))


def _text_curves(chart: SmallMultiples, width: int | None = None) -> list[str]:
    labels = [visible(c.label, one_line=True)[:16] for c in chart.curves]
    label_width = max((len(label) for label in labels), default=5)
    title = f"{visible(chart.title, one_line=True)} ({chart.y_label} against {chart.x_label})"
    out = wrapped(title, width)
    for label, curve in zip(labels, chart.curves, strict=True):
        mark = "!" if curve.highlight else " "
        line = sparkline(list(curve.points), top=chart.y_top)
        out.append(f" {mark}{label:<{label_width}}  {line}")
    marked = [visible(meaning, one_line=True) for meaning, highlight in chart.legend if highlight]
    if marked and any(c.highlight for c in chart.curves):
        out += wrapped(f"! {', '.join(marked)}", width, indent="  ")
    return out


# -- Markdown ---------------------------------------------------------------------------------


def markdown_cell(text: str) -> str:
    """Text shown literally in a Markdown table cell: the prose rule (`_md_text`) on one line,
    so no cell can split or join columns, link, emphasise or start markup (`>` an entity)."""
    return _md_escape(visible(text, one_line=True), cell=True)


def _md_text(text: str) -> str:
    """Prose from data in Markdown: visible, with what would start markup escaped (HTML as
    entities; a link bracket, emphasis, code, a table pipe; `_` only where it can open
    emphasis, `#` and `>` only at a line's start), so an id reads as written, never as markup."""
    return _md_escape(visible(text, marks=True))


def _md_escape(shown: str, cell: bool = False) -> str:
    shown = shown.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
    if cell:
        shown = shown.replace(">", "&gt;")
    for char in "`*[]|":
        shown = shown.replace(char, "\\" + char)
    shown = _EMPHASIS_UNDERSCORE.sub(r"\\_", shown)
    return shown if cell else _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), shown)


_EMPHASIS_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_LINE_START = re.compile(r"(^|\n)([#>])")


def render_markdown(document: Document) -> str:
    lines = [f"# {_md_text(document.title)}"]
    if document.subtitle:
        lines += ["", _md_text(document.subtitle)]
    for block in document.blocks:
        lines.append("")
        lines.extend(_md_block(block))
    return "\n".join(lines) + "\n"


def _md_block(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return [f"{'#' * min(block.level, 6)} {_md_text(block.text)}"]
    if isinstance(block, Paragraph):
        prefix = "" if block.kind == "plain" else f"**{block.kind}:** "
        return [prefix + _md_text(block.text)]
    if isinstance(block, Bullets):
        return [f"- {_md_text(item)}" for item in block.items]
    if isinstance(block, Table):
        return markdown_table(block)
    if isinstance(block, IntervalChart):
        return [interval_chart(block)]
    return [small_multiples(block)]


def markdown_table(table: Table) -> list[str]:
    out = [f"**{_md_text(table.title)}**", ""] if table.title else []
    out.append("| " + " | ".join(markdown_cell(c.header) for c in table.columns) + " |")
    out.append("|" + "|".join("---" if c.align == "left" else "---:" for c in table.columns) + "|")
    for row in [*table.rows, *table.footer]:
        cells = (
            markdown_cell(cell_text(v, c.digits)) for v, c in zip(row, table.columns, strict=True)
        )
        out.append("| " + " | ".join(cells) + " |")
    return out


# -- HTML -------------------------------------------------------------------------------------

RENDERERS = {"table": render_text, "markdown": render_markdown, "html": render_html}
"""Output format name -> renderer, as `--format` spells it."""


def render_as(document: Document, fmt: str, width: int | None = None) -> str:
    """`document` in the output format `fmt` (as `--format` spells it); terminal text fitted to
    `width` when given (`render_text`)."""
    return render_text(document, width) if fmt == "table" else RENDERERS[fmt](document)
