"""A `Document` as a self-contained HTML page: markup escaped (ids and passages can hold
`<script>`), charts as inline SVG, and wide tables folded so the page fits a laptop screen."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.reports.document import (
    Block,
    Bullets,
    Cell,
    Column,
    Document,
    Heading,
    IntervalChart,
    Paragraph,
    Styled,
    Table,
    cell_text,
)
from workbench.reports.svg import interval_chart, small_multiples, svg_text
from workbench.reports.width import fitted_columns

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
