"""A `Document` as terminal text, Markdown or a self-contained HTML page. Each renderer owns
its escaping: text shows control characters visibly, Markdown also escapes what would split a
table or start markup, HTML escapes markup (ids and passages can hold `<script>`)."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import TextIO

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
    Styled,
    Table,
    cell_text,
)
from workbench.reports.svg import interval_chart, small_multiples, svg_text

# -- terminal text ----------------------------------------------------------------------------

BLOCKS = " ▁▂▃▄▅▆▇█"
PREFIX = {"plain": "", "note": "note: ", "warning": "warning: ", "error": "error: "}
DEFAULT_WIDTH = 100
"""The width text is fitted to when neither COLUMNS nor the terminal says (a pipe, a file)."""


def terminal_width(stream: TextIO | None = None) -> int:
    """The width to fit text to: `COLUMNS` when it is a positive integer, else the size of the
    terminal `stream` (default stdout) writes to, else `DEFAULT_WIDTH`."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    stream = sys.stdout if stream is None else stream
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or DEFAULT_WIDTH
    except (AttributeError, ValueError, OSError):  # no file behind it (a StringIO), or closed
        pass
    return DEFAULT_WIDTH


def render_text(document: Document, width: int | None = None) -> str:
    """The document as terminal text; with `width`, each table keeps the columns that fit it
    (saying which it left out and that `--wide` shows them) and every other line is wrapped to
    it, never inside a word: an id or a number longer than the width stays whole."""
    lines = wrapped(visible(document.title, one_line=True), width)
    if document.subtitle:
        lines += wrapped(visible(document.subtitle), width)
    for block in document.blocks:
        lines.append("")
        lines.extend(_text_block(block, width))
    return "\n".join(lines).rstrip("\n") + "\n"


def wrapped(text: str, width: int | None, indent: str = "", hang: str = "  ") -> list[str]:
    """`text` (after `indent`) as lines of at most `width` characters, each line of it wrapped
    with a hanging indent; broken at spaces only, so no id, number or path is cut in two."""
    if width is None:
        return [indent + line for line in text.split("\n")]
    out: list[str] = []
    for line in text.split("\n"):
        first = indent + line
        if len(first) <= width:
            out.append(first)
            continue
        out += textwrap.wrap(
            line,
            width,
            initial_indent=indent,
            subsequent_indent=indent + hang,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [first]
    return out


def _text_block(block: Block, width: int | None = None) -> list[str]:
    if isinstance(block, Heading):
        return wrapped(visible(block.text, one_line=True), width)
    if isinstance(block, Paragraph):
        return wrapped(PREFIX[block.kind] + visible(block.text), width)
    if isinstance(block, Bullets):
        return [
            line
            for item in block.items
            for line in wrapped(PREFIX[block.kind] + visible(item), width, indent="  ")
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


def fitted_columns(
    columns: Sequence[Column],
    widths: Sequence[int],
    width: int | None,
    among: Sequence[int] | None = None,
) -> list[int]:
    """The indices of the columns a table of these column `widths` shows in `width` characters
    (2 between columns): the first always, then the others (of `among`, default all) in
    increasing `priority` (ties left to right), each that still fits; every one of them
    without a width. In table order."""
    others = [i for i in (range(1, len(columns)) if among is None else among) if i != 0]
    if width is None or not columns:
        return [0, *others] if columns else []
    kept = [0]
    used = widths[0]
    for i in sorted(others, key=lambda i: (columns[i].priority, i)):
        if used + 2 + widths[i] <= width:
            kept.append(i)
            used += 2 + widths[i]
    return sorted(kept)


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
        out.append(f" {mark}{label:<{label_width}}  {sparkline(list(curve.points))}")
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
    return _md_escape(visible(text))


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

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1d;
background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em}.subtitle{color:#555}
.scroll{overflow-x:auto;margin:.6em 0}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:12px}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{padding:3px 6px;border-bottom:1px solid #e3e3e3;white-space:nowrap}
th{background:#f0f0f0;position:sticky;top:0;text-align:center;white-space:normal;
vertical-align:bottom}
td.right{text-align:right}td.left{text-align:left;white-space:normal}
details{margin:-.2em 0 .8em}summary{cursor:pointer;color:#555;font-size:13px}
tfoot td{font-weight:600;border-top:2px solid #999}
.note{color:#444}.warning{color:#8a5a00}.error{color:#a11}
.good{color:#2e7d32}.warn{color:#b35c00;font-weight:600}.bad{color:#b71c1c;font-weight:600}
.muted{color:#777}.strong{font-weight:600}
svg{max-width:100%;height:auto;background:#fff;border:1px solid #eee}
@media (max-width:600px){body{font-size:14px}main{padding:8px}th,td{padding:2px 5px}}
"""


def _h(text: str) -> str:
    return svg_text(text) if "\n" not in text else "<br>".join(map(svg_text, text.split("\n")))


def render_html(document: Document) -> str:
    """One self-contained page: inline CSS and SVG, no script, no external asset."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{svg_text(document.title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>{svg_text(document.title)}</h1>",
    ]
    if document.subtitle:
        parts.append(f'<p class="subtitle">{_h(document.subtitle)}</p>')
    parts.extend(_html_block(block) for block in document.blocks)
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _html_block(block: Block) -> str:
    if isinstance(block, Heading):
        level = min(block.level, 6)
        return f"<h{level}>{svg_text(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        return f'<p class="{block.kind}">{_h(block.text)}</p>'
    if isinstance(block, Bullets):
        items = "".join(f"<li>{_h(item)}</li>" for item in block.items)
        return f'<ul class="{block.kind}">{items}</ul>'
    if isinstance(block, Table):
        return html_table(block)
    if isinstance(block, IntervalChart):
        return f'<div class="scroll">{interval_chart(block)}</div>'
    return f'<div class="scroll">{small_multiples(block)}</div>'


HTML_WIDTH = 140
"""How many characters of cells a table shows across a 1280 px laptop screen (the page's 1100
px at the tables' 12 px figures, with room for a wider font): a wider table keeps its
essential columns and folds the rest under it."""


def html_table(table: Table) -> str:
    """The table, with its `detail` columns and those past `HTML_WIDTH` (by `priority`) in
    further tables beside the first column, folded in a `<details>` under it."""
    first, *more = html_column_groups(table)
    parts = [_html_table(table, first, caption=True)]
    if more:
        names = [table.columns[i].header for group in more for i in group if i != 0]
        summary = f"more columns: {', '.join(dict.fromkeys(names))}"
        parts.append(f"<details><summary>{svg_text(summary)}</summary>")
        parts += [_html_table(table, group) for group in more]
        parts.append("</details>")
    return "".join(parts)


def html_column_groups(table: Table) -> list[list[int]]:
    """The column indices of each table `html_table` shows: the first fits `HTML_WIDTH` with
    the columns that are not `detail`; each next one the first column and what is left."""
    widths = [_html_chars(table, i) for i in range(len(table.columns))]
    essential = [i for i, c in enumerate(table.columns) if not c.detail]
    groups = [fitted_columns(table.columns, widths, HTML_WIDTH, essential)]
    left = [i for i in range(1, len(table.columns)) if i not in groups[0]]
    while left:
        group = fitted_columns(table.columns, widths, HTML_WIDTH, left)
        if len(group) == 1:  # one column wider than the screen: on its own
            group = [0, left[0]]
        groups.append(group)
        left = [i for i in left if i not in group]
    return groups


def _html_chars(table: Table, index: int) -> int:
    """A column's width in characters as HTML shows it: its widest cell, or its header's
    longest word (headers wrap)."""
    column = table.columns[index]
    cells = [cell_text(row[index], column.digits) for row in [*table.rows, *table.footer]]
    words = column.header.split() or [""]
    return max(len(text) for text in [*cells, *words])


def _html_table(table: Table, shown: Sequence[int], caption: bool = False) -> str:
    columns = [table.columns[i] for i in shown]
    head = "".join(
        f'<th title="{svg_text(c.help)}">{svg_text(c.header)}</th>' if c.help else
        f"<th>{svg_text(c.header)}</th>"
        for c in columns
    )  # fmt: skip
    parts = ['<div class="scroll"><table>']
    if caption and table.title:
        parts.append(f"<caption>{svg_text(table.title)}</caption>")
    parts.append(f"<thead><tr>{head}</tr></thead><tbody>")
    parts.extend(_html_row([row[i] for i in shown], columns) for row in table.rows)
    parts.append("</tbody>")
    if table.footer:
        footer = (_html_row([row[i] for i in shown], columns) for row in table.footer)
        parts.append("<tfoot>" + "".join(footer) + "</tfoot>")
    parts.append("</table></div>")
    return "".join(parts)


def _html_row(row: Sequence[Cell], columns: Sequence[Column]) -> str:
    cells = []
    for value, column in zip(row, columns, strict=True):
        style = value.style if isinstance(value, Styled) else ""
        classes = " ".join(x for x in (column.align, style) if x)
        cells.append(f'<td class="{classes}">{svg_text(cell_text(value, column.digits))}</td>')
    return "<tr>" + "".join(cells) + "</tr>"


RENDERERS = {"table": render_text, "markdown": render_markdown, "html": render_html}
"""Output format name -> renderer, as `--format` spells it."""


def render_as(document: Document, fmt: str, width: int | None = None) -> str:
    """`document` in the output format `fmt` (as `--format` spells it); terminal text fitted to
    `width` when given (`render_text`)."""
    return render_text(document, width) if fmt == "table" else RENDERERS[fmt](document)
