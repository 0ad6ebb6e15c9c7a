"""The document model's three renderers: one number format, data shown literally in each
(terminal: control characters visible; Markdown: no cell can split a table, no markup starts;
HTML: a well-formed, self-contained page where an id holding `<script>` stays text)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import html5lib
import pytest

from workbench.reports.document import (
    Bullets,
    Column,
    Curve,
    Document,
    Heading,
    Interval,
    IntervalChart,
    IntervalRow,
    Paragraph,
    SmallMultiples,
    Styled,
    Table,
    figure,
    percent,
)
from workbench.reports.render import render_html, render_markdown, render_text
from workbench.reports.svg import nice_ticks

HOSTILE = "<script>alert(1)</script>\x1b]2;PWNED\x07|[@click=app.quit]q"
NS = "{http://www.w3.org/1999/xhtml}"


def hostile_document() -> Document:
    doc = Document(f"Study {HOSTILE}", subtitle=f"store {HOSTILE}")
    doc.add(
        Heading(f"Per query {HOSTILE}"),
        Table(
            [Column("query", "left", help=HOSTILE), Column("P@5"), Column("est |Rel|")],
            [
                [HOSTILE, 0.4, Interval(3.25, 1.0, 8.5, 1)],
                ["q2", None, Styled("incomplete", "warn")],
            ],
            title=HOSTILE,
            footer=[["mean", 0.4, None]],
        ),
        Paragraph(f"careful {HOSTILE}", "warning"),
        Bullets([HOSTILE, "second"]),
        IntervalChart(
            HOSTILE,
            [IntervalRow(HOSTILE, 0.5, 0.2, 0.9, "incomplete")],
            "completeness",
            0.8,
            "complete at 0.8",
        ),  # fmt: skip
        SmallMultiples(
            HOSTILE,
            [Curve(HOSTILE, [1, 2, 2], True), Curve("q2", [1])],
            "judgments",
            "relevant found",
            [("incomplete", True)],
        ),  # fmt: skip
    )
    return doc


def test_one_number_format() -> None:
    assert [figure(None), figure(3), figure(0.4), figure(0.12345, 2)] == ["-", "3", "0.400", "0.12"]
    assert percent(0.456) == "46%" and percent(None) == "-"
    assert Interval(3.25, 1.0, 8.5, 1).text() == "3.2 [1.0, 8.5]"
    assert Interval(None, 0.1, 0.2).text() == "[0.100, 0.200]"
    assert nice_ticks(7)[-1] >= 7 and nice_ticks(0.0) == [0.0, 1.0]


def test_text_shows_control_characters_and_aligns_columns() -> None:
    text = render_text(hostile_document())
    assert "\x1b" not in text and "\x07" not in text and "␛]2;PWNED␇" in text
    table = text.split("\n")
    header = next(line for line in table if line.startswith("query"))
    mean = next(line for line in table if line.startswith("mean"))
    assert header.index("P@5") + len("P@5") == mean.index("0.400") + len("0.400")


def test_markdown_cells_cannot_split_the_table_or_start_markup() -> None:
    text = render_markdown(hostile_document())
    assert "\x1b" not in text and "<script>" not in text
    row = next(line for line in text.split("\n") if line.startswith("| &lt;script"))
    assert row.count(" | ") == 2  # three cells: the pipe in the id is escaped
    assert "\\|" in row


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(hostile_document())


def test_html_is_well_formed_and_self_contained(page: str) -> None:
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True)
    tree = parser.parse(page)
    assert tree.find(f".//{NS}script") is None
    assert tree.find(f".//{NS}link") is None and "http://" not in page.replace(
        "http://www.w3.org/2000/svg", ""
    )
    title = tree.find(f".//{NS}title")
    assert title is not None and title.text is not None and "<script>" in title.text
    cells = [td for td in tree.iter(f"{NS}td")]
    assert any(HOSTILE.split("\x1b")[0] in "".join(td.itertext()) for td in cells)
    svgs = list(tree.iter("{http://www.w3.org/2000/svg}svg"))
    assert len(svgs) == 2
    for svg in re.findall(r"<svg .*?</svg>", page, re.S):  # valid XML on its own (embeds)
        ET.fromstring(svg)
    assert "\x1b" not in page and "\x07" not in page


def test_html_tables_carry_alignment_and_styles(page: str) -> None:
    assert 'class="right warn"' in page and "<tfoot>" in page
    assert 'title="&lt;script&gt;' in page  # a column's help, escaped into an attribute
