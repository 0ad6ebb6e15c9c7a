"""Charts as self-contained SVG: labelled axes with tick values, a legend, every data string
escaped (`svg_text`). Pure: chart blocks in, SVG text out."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence

from workbench.core.display import visible
from workbench.reports.document import IntervalChart, SmallMultiples

COLOURS = {"": "#3b6ea8", "highlight": "#c0392b", "threshold": "#7b241c", "axis": "#333333"}
GROUP_COLOURS = ["#2e7d32", "#c77700", "#7f7f7f", "#3b6ea8", "#8e44ad"]
STATUS_COLOURS = {"complete": "#2e7d32", "incomplete": "#c77700", "unmeasured": "#7f7f7f",
                  "stale": "#7f7f7f"}  # fmt: skip
"""Groups named as coverage statuses keep one colour in every chart."""
_NOT_XML = re.compile("[\ufffe\uffff]")
"""Characters XML 1.0 forbids that `visible` leaves alone (it draws the C0/C1 controls)."""


def svg_text(text: str) -> str:
    """`text` for SVG/HTML text or an attribute: control characters drawn visibly (XML 1.0
    forbids most C0 controls: a raw ESC would make the SVG invalid), the two non-characters
    XML also forbids written out, and markup escaped."""
    shown = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", visible(text, one_line=True))
    return html.escape(shown)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="sans-serif" font-size="11" '
        f'role="img" aria-label="{svg_text(title)}"><title>{svg_text(title)}</title>'
    ]


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least `top` (about `count` of them)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < top - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def interval_chart(chart: IntervalChart, width: int = 640, row_height: int = 18) -> str:
    """Per row a dot (estimate) and a bar (interval) on 0..1, coloured by group, with ticks, a
    labelled threshold and a legend."""
    groups = list(dict.fromkeys(r.group for r in chart.rows))
    others = iter(GROUP_COLOURS[3:] * len(groups))
    colour = {g: STATUS_COLOURS.get(g) or next(others) for g in groups}
    left, right, top = 130, 24, 28
    plot_w = width - left - right
    plot_h = row_height * max(len(chart.rows), 1)
    height = top + plot_h + 62
    parts = _open(width, height, chart.title)
    parts.append(f'<text x="{left}" y="16" font-weight="bold">{svg_text(chart.title)}</text>')
    bottom = top + plot_h
    for tick in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        x = left + tick * plot_w
        parts.append(
            f'<line x1="{_n(x)}" y1="{top}" x2="{_n(x)}" y2="{bottom}" stroke="#ddd"/>'
            f'<text x="{_n(x)}" y="{bottom + 14}" text-anchor="middle">{_n(tick)}</text>'
        )
    parts.append(
        f'<line x1="{left}" y1="{bottom}" x2="{left + plot_w}" y2="{bottom}" '
        f'stroke="{COLOURS["axis"]}"/>'
        f'<text x="{_n(left + plot_w / 2)}" y="{bottom + 30}" text-anchor="middle">'
        f"{svg_text(chart.axis_label)}</text>"
    )
    if chart.threshold is not None:
        x = left + chart.threshold * plot_w
        label = chart.threshold_label or f"threshold {chart.threshold:g}"
        parts.append(
            f'<line x1="{_n(x)}" y1="{top - 4}" x2="{_n(x)}" y2="{bottom}" '
            f'stroke="{COLOURS["threshold"]}" stroke-dasharray="4 3"/>'
            f'<text x="{_n(x + 3)}" y="{top - 6}" fill="{COLOURS["threshold"]}">'
            f"{svg_text(label)}</text>"
        )
    for i, row in enumerate(chart.rows):
        y = top + row_height * i + row_height / 2
        fill = colour[row.group]
        parts.append(
            f'<text x="{left - 6}" y="{_n(y + 4)}" text-anchor="end">'
            f"<title>{svg_text(row.label)}</title>{svg_text(row.label[:20])}</text>"
        )
        if row.low is not None and row.high is not None:
            parts.append(
                f'<line x1="{_n(left + min(row.low, 1) * plot_w)}" y1="{_n(y)}" '
                f'x2="{_n(left + min(row.high, 1) * plot_w)}" y2="{_n(y)}" stroke="{fill}" '
                'stroke-width="5" stroke-opacity="0.45" stroke-linecap="round"/>'
            )
        if row.value is not None:
            shown = f"{row.value:.2f}" + (
                f" [{row.low:.2f}, {row.high:.2f}]" if row.low is not None and row.high else ""
            )
            parts.append(
                f'<circle cx="{_n(left + min(row.value, 1) * plot_w)}" cy="{_n(y)}" r="4" '
                f'fill="{fill}"><title>{svg_text(row.label)}: {shown} '
                f"({svg_text(row.group)})</title></circle>"
            )
    parts.append(_legend([(g or "estimate", colour[g]) for g in groups], left, bottom + 46))
    parts.append("</svg>")
    return "".join(parts)


def small_multiples(chart: SmallMultiples, columns: int = 4, cell: int = 150) -> str:
    """A grid of small charts, one per curve, on shared axes; highlighted curves first."""
    curves = sorted(chart.curves, key=lambda c: not c.highlight)
    if not curves:
        return ""
    max_x = max((len(c.points) for c in curves), default=1) or 1
    max_y = chart.y_top
    x_ticks, y_ticks = nice_ticks(max_x, 3), nice_ticks(max_y, 3)
    max_x, max_y = x_ticks[-1], y_ticks[-1]
    columns = max(1, min(columns, len(curves)))
    rows = math.ceil(len(curves) / columns)
    pad_l, pad_b, pad_t = 30, 22, 18
    width = columns * cell + 10
    height = 24 + rows * (cell + 4) + 40
    parts = _open(width, height, chart.title)
    parts.append(f'<text x="4" y="14" font-weight="bold">{svg_text(chart.title)}</text>')
    plot = cell - pad_l - 8
    for i, curve in enumerate(curves):
        ox = 4 + (i % columns) * cell
        oy = 24 + (i // columns) * (cell + 4)
        x0, y0 = ox + pad_l, oy + pad_t + plot - pad_b
        scale_y = (plot - pad_b) / max_y
        stroke = COLOURS["highlight"] if curve.highlight else COLOURS[""]
        parts.append(
            f'<text x="{ox + pad_l}" y="{oy + 12}" fill="{stroke}">'
            f"<title>{svg_text(curve.label)}{' — ' + svg_text(curve.note) if curve.note else ''}"
            f"</title>{svg_text(curve.label[:18])}</text>"
        )
        for t in y_ticks:
            y = y0 - t * scale_y
            parts.append(
                f'<line x1="{x0}" y1="{_n(y)}" x2="{x0 + plot}" y2="{_n(y)}" stroke="#eee"/>'
                f'<text x="{x0 - 3}" y="{_n(y + 3)}" text-anchor="end" font-size="9">'
                f"{_n(t)}</text>"
            )
        for t in x_ticks:
            x = x0 + t / max_x * plot
            parts.append(
                f'<text x="{_n(x)}" y="{y0 + 11}" text-anchor="middle" font-size="9">{_n(t)}</text>'
            )
        parts.append(
            f'<polyline fill="none" stroke="#999" points="{x0},{oy + pad_t} {x0},{_n(y0)} '
            f'{x0 + plot},{_n(y0)}"/>'
        )
        points = [(0.0, 0.0)] + [(j + 1.0, v) for j, v in enumerate(curve.points)]
        path = " ".join(f"{_n(x0 + x / max_x * plot)},{_n(y0 - y * scale_y)}" for x, y in points)
        parts.append(
            f'<polyline fill="none" stroke="{stroke}" stroke-width="1.6" points="{path}"/>'
        )
    bottom = 24 + rows * (cell + 4)
    parts.append(
        f'<text x="4" y="{bottom + 10}" font-size="10">x: {svg_text(chart.x_label)}; '
        f"y: {svg_text(chart.y_label)}</text>"
    )
    legend = [(m, COLOURS["highlight"] if h else COLOURS[""]) for m, h in chart.legend]
    if legend:
        parts.append(_legend(legend, 4, bottom + 28))
    parts.append("</svg>")
    return "".join(parts)


def _legend(entries: Sequence[tuple[str, str]], x: float, y: float) -> str:
    out = []
    for label, colour in entries:
        out.append(
            f'<rect x="{_n(x)}" y="{_n(y - 8)}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{_n(x + 14)}" y="{_n(y + 1)}">{svg_text(label)}</text>'
        )
        x += 24 + 7 * len(visible(label, one_line=True))
    return "".join(out)
