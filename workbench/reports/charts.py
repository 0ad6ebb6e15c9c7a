"""Charts of a coverage report: terminal strings (unicode blocks) and SVG (for Markdown). Pure."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.display import visible

BLOCKS = " ▁▂▃▄▅▆▇█"
_NOT_XML = re.compile("[\ufffe\uffff]")
"""Characters XML 1.0 forbids that `visible` leaves alone (it draws the C0/C1 controls)."""


def svg_text(text: str) -> str:
    """`text` for SVG/HTML text or an attribute: control characters drawn visibly (XML 1.0
    forbids most C0 controls: a raw ESC would make the SVG invalid), the two non-characters
    XML also forbids written out, and markup escaped."""
    shown = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", visible(text, one_line=True))
    return html.escape(shown)


def resample(values: Sequence[float], width: int) -> list[float]:
    """Values at `width` evenly spaced points (the last of each bucket: curves are cumulative)."""
    if not values or width <= 0:
        return []
    if len(values) <= width:
        return list(values)
    return [
        values[min(len(values) - 1, ((i + 1) * len(values)) // width - 1)] for i in range(width)
    ]


def sparkline(values: Sequence[float], width: int = 24, top: float | None = None) -> str:
    """A one-line chart: each character's height is the value over `top` (default: the max)."""
    points = resample(values, width)
    if not points:
        return ""
    ceiling = top if top is not None else max(points)
    if ceiling <= 0:
        return BLOCKS[1] * len(points)
    steps = len(BLOCKS) - 1
    return "".join(BLOCKS[max(1, round(min(v, ceiling) / ceiling * steps))] for v in points)


def interval_bar(
    value: float | None, low: float | None, high: float | None, width: int = 20
) -> str:
    """A 0..1 scale: '█' up to the estimate, '▒' across the rest of the interval, '·' beyond."""
    if value is None:
        return "·" * width
    cells = []
    for i in range(width):
        middle = (i + 0.5) / width
        if middle <= value:
            cells.append("█")
        elif low is not None and high is not None and low <= middle <= high:
            cells.append("▒")
        else:
            cells.append("·")
    return "".join(cells)


def terminal_chart(report: Mapping[str, Any], width: int = 20) -> str:
    """Per query: completeness with its interval, and the discovery curve as a sparkline."""
    queries = {visible(q, one_line=True): row for q, row in report.get("queries", {}).items()}
    if not queries:
        return "(no queries)"
    name_width = min(max(len(q) for q in queries), 16)
    lines = [
        f"{'query':<{name_width}}  {'completeness 0 → 1':<{width}}"
        "  discovery (relevant vs judgments)"
    ]
    for qid, row in queries.items():
        bar = interval_bar(
            row.get("completeness"),
            row.get("completeness_low"),
            row.get("completeness_high"),
            width,
        )
        curve = row.get("discovery") or []
        lines.append(f"{qid[:name_width]:<{name_width}}  {bar}  {sparkline(curve, width)}")
    lines.append(f"{'':<{name_width}}  █ estimate  ▒ 95% interval  · beyond")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def discovery_svg(report: Mapping[str, Any], width: int = 560, height: int = 220) -> str:
    """Each query's discovery curve (relevant found vs judgments made), one line per query."""
    curves = [(q, row.get("discovery") or []) for q, row in report.get("queries", {}).items()]
    curves = [(q, c) for q, c in curves if c]
    left, bottom, top, right = 40, 30, 10, 10
    plot_w, plot_h = width - left - right, height - top - bottom
    max_x = max((len(c) for _, c in curves), default=1)
    max_y = max((c[-1] for _, c in curves), default=1) or 1
    parts = [_svg_open(width, height, "Discovery curves: relevant found vs judgments made")]
    parts.append(
        _axes(left, top, plot_w, plot_h, f"judgments (max {max_x})", f"relevant (max {max_y})")
    )
    for qid, curve in curves:
        points = [(0.0, 0.0)] + [(i + 1, v) for i, v in enumerate(curve)]
        path = " ".join(
            f"{_fmt(left + x / max_x * plot_w)},{_fmt(top + plot_h - y / max_y * plot_h)}"
            for x, y in points
        )
        parts.append(
            f'<polyline fill="none" stroke="#3b6ea8" stroke-opacity="0.6" stroke-width="1.5" '
            f'points="{path}"><title>{svg_text(qid)}</title></polyline>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def completeness_svg(report: Mapping[str, Any], width: int = 560, row_height: int = 16) -> str:
    """Per query: estimated completeness (dot) and its 95% interval (bar), with the threshold."""
    rows = list(report.get("queries", {}).items())
    threshold = report.get("thresholds", {}).get("complete_at")
    left, right, top, bottom = 110, 20, 10, 30
    plot_w = width - left - right
    height = top + bottom + row_height * max(len(rows), 1)
    parts = [_svg_open(width, height, "Label completeness per query, with 95% intervals")]
    parts.append(_axes(left, top, plot_w, height - top - bottom, "completeness (0 to 1)", ""))
    if threshold is not None:
        x = _fmt(left + threshold * plot_w)
        parts.append(
            f'<line x1="{x}" y1="{top}" x2="{x}" y2="{height - bottom}" stroke="#b03a2e" '
            f'stroke-dasharray="4 3"><title>complete at {svg_text(str(threshold))}</title></line>'
        )
    colors = {"complete": "#2e7d32", "incomplete": "#c77700", "unmeasured": "#888888"}
    for i, (qid, row) in enumerate(rows):
        y = top + row_height * i + row_height / 2
        parts.append(
            f'<text x="{left - 6}" y="{_fmt(y + 4)}" text-anchor="end" font-size="11">'
            f"{svg_text(qid[:16])}</text>"
        )
        value, low, high = (
            row.get("completeness"),
            row.get("completeness_low"),
            row.get("completeness_high"),
        )
        color = colors.get(row.get("status", ""), "#888888")
        if low is not None and high is not None:
            parts.append(
                f'<line x1="{_fmt(left + low * plot_w)}" y1="{_fmt(y)}" '
                f'x2="{_fmt(left + high * plot_w)}" '
                f'y2="{_fmt(y)}" stroke="{color}" stroke-width="4" stroke-opacity="0.5"/>'
            )
        if value is not None:
            parts.append(
                f'<circle cx="{_fmt(left + min(value, 1.0) * plot_w)}" cy="{_fmt(y)}" r="4" '
                f'fill="{color}">'
                f"<title>{svg_text(qid)}: {value:.2f} ({svg_text(str(row.get('status')))})"
                "</title></circle>"
            )
    parts.append("</svg>")
    return "\n".join(parts)


def _svg_open(width: int, height: int, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img">'
        f"<title>{svg_text(title)}</title>"
    )


def _axes(left: int, top: int, plot_w: int, plot_h: int, x_label: str, y_label: str) -> str:
    bottom = top + plot_h
    return (
        f'<line x1="{left}" y1="{bottom}" x2="{left + plot_w}" y2="{bottom}" stroke="#333"/>'
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/>'
        f'<text x="{left + plot_w / 2}" y="{bottom + 22}" text-anchor="middle" font-size="11">'
        f"{svg_text(x_label)}</text>"
        + (
            f'<text x="12" y="{top + plot_h / 2}" text-anchor="middle" font-size="11" '
            f'transform="rotate(-90 12 {top + plot_h / 2})">{svg_text(y_label)}</text>'
            if y_label
            else ""
        )
    )
