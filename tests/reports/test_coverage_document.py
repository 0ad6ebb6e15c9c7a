"""The coverage report as a Document (tables, the threshold chart, the discovery curves), its
three renderings, and the app's panel, all from the typed report."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest
from rich.text import Text

from workbench.core.coverage import CompletenessRule, CoverageReport, coverage_report
from workbench.core.model import PoolEntry, Provenance, Status
from workbench.reports.coverage import QUERY_COLUMNS, coverage_document, summary_lines
from workbench.reports.document import (
    Document,
    Interval,
    IntervalChart,
    SmallMultiples,
    Styled,
    Table,
)
from workbench.reports.render import render_html, render_markdown, render_text
from workbench.tui.coverage_panel import render_coverage

HOSTILE = "open<b>|&\x1b[31m"
DOCS = [f"d{i}" for i in range(15)]


def pooled(qid: str, doc: str, position: int, *systems: str) -> PoolEntry:
    prov = tuple(Provenance(s, position + 1, 0.0) for s in systems)
    return PoolEntry(qid, doc, position, provenance=prov)


def every_status(open_id: str = "open") -> CoverageReport:
    """Three queries: 'done' judged through the whole corpus (complete), `open_id` with a
    sample outside its pool (incomplete at complete_at 1.0), 'none' without one (unmeasured)."""
    entries = [pooled("done", d, i, "bm25") for i, d in enumerate(DOCS)]
    entries += [pooled(open_id, d, i, "bm25", "dense") for i, d in enumerate(DOCS[:5])]
    entries += [
        PoolEntry(open_id, d, 5 + i, stratum="rank:21-50", inclusion_prob=0.5)
        for i, d in enumerate(DOCS[5:10])
    ]
    entries += [pooled("none", d, i, "dense") for i, d in enumerate(DOCS[:3])]
    grades = {
        "done": {d: int(d == "d0") * 2 for d in DOCS},
        open_id: {d: int(d in ("d0", "d1", "d2")) for d in DOCS[:10]},
        "none": {"d0": 1},
    }
    rule = CompletenessRule(complete_at=1.0)
    return coverage_report(entries, grades, len(DOCS), thresholds=rule, draws=400)


@pytest.fixture(scope="module")
def report() -> CoverageReport:
    return every_status()


def blocks(document: Document, kind: type) -> list:
    return [b for b in document.blocks if isinstance(b, kind)]


def test_report_statuses(report: CoverageReport) -> None:
    assert {q: r.status for q, r in report.queries.items()} == {
        "done": Status.COMPLETE,
        "open": Status.INCOMPLETE,
        "none": Status.UNMEASURED,
    }


def test_the_query_table_carries_the_report_figures(report: CoverageReport) -> None:
    query_table, system_table = blocks(coverage_document(report), Table)
    # 'none' is unmeasured: a "to go" column before the status says what would measure it
    headers = [c.header for c in QUERY_COLUMNS]
    assert [c.header for c in query_table.columns] == [*headers[:-1], "to go", headers[-1]]
    rows = {row[0]: row for row in query_table.rows}
    assert list(rows) == ["done", "open", "none"]
    done = report.queries["done"]
    assert rows["done"][1:4] == [done.pool, done.judged, done.relevant]
    assert rows["done"][4] == Interval(1, 1, 1, digits=0)
    assert rows["done"][5:8] == [1.0, 1.0, done.ceiling_est]
    assert rows["open"][10] == Styled("incomplete", "warn")
    assert rows["none"][4] == Interval(None, None, None, digits=0)
    assert rows["none"][10] == Styled("unmeasured", "muted")
    # a static pool without a sample outside it: no judging gives it an estimate
    assert [rows[q][9] for q in rows] == [None, None, "needs --sample"]
    assert report.queries["none"].to_estimate is None and report.queries["open"].to_estimate == 0
    measured = dataclasses.replace(
        report, queries={q: r for q, r in report.queries.items() if q != "none"}
    )
    (table, _) = blocks(coverage_document(measured), Table)
    assert [c.header for c in table.columns] == headers
    assert [row[0] for row in system_table.rows] == ["bm25", "dense"]
    bm25 = report.summary.systems["bm25"]
    assert system_table.rows[0][1:] == [
        bm25.judged_at[5], bm25.judged_at[10], bm25.judged_at[20], bm25.relevant,
        bm25.unique_relevant,
    ]  # fmt: skip


def test_charts_label_the_threshold_and_highlight_incomplete_queries(
    report: CoverageReport,
) -> None:
    document = coverage_document(report)
    (chart,) = blocks(document, IntervalChart)
    assert chart.threshold == 1.0 and chart.threshold_label == "complete at 1"
    assert [(r.label, r.group) for r in chart.rows] == [
        ("done", "complete"), ("open", "incomplete"), ("none", "unmeasured")
    ]  # fmt: skip
    (curves,) = blocks(document, SmallMultiples)
    assert {c.label: c.highlight for c in curves.curves} == {
        "done": False, "open": True, "none": False
    }  # fmt: skip
    assert list(curves.curves[1].points) == list(report.queries["open"].discovery)


def test_data_strings_go_in_plain_and_each_renderer_escapes_them() -> None:
    report = every_status(HOSTILE)
    document = coverage_document(report)
    assert [row[0] for row in blocks(document, Table)[0].rows][1] == HOSTILE
    text = render_text(document)
    assert "\x1b" not in text and "open<b>|&␛[31m" in text
    markdown = render_markdown(document)
    assert "\x1b" not in markdown and "| open&lt;b&gt;\\|&amp;␛\\[31m |" in markdown
    page = render_html(document)
    assert "<b>" not in page and "\x1b" not in page and "open&lt;b&gt;|&amp;␛[31m" in page
    for svg in page.split("<svg")[1:]:
        ET.fromstring("<svg" + svg.split("</svg>")[0] + "</svg>")


def test_an_empty_store_renders_without_tables() -> None:
    report = coverage_report([], {}, 0, query_ids=[])
    document = coverage_document(report)
    assert not blocks(document, Table) and "No queries" in render_text(document)
    assert json.loads(json.dumps(report.to_json()))["queries"] == {}


def test_the_panel_reads_the_typed_report(report: CoverageReport) -> None:
    panel = render_coverage(report)
    assert isinstance(panel, Text)
    plain = panel.plain
    assert plain.startswith("1 complete · 1 incomplete · 1 unmeasured")
    judged = sum(r.judged for r in report.queries.values())
    assert f"judged {judged}/" in plain
    lines = {line.split()[0]: line for line in plain.splitlines()[2:-1]}
    assert "complete" in lines["done"] and "1/1 [1–1]" in lines["done"]
    assert "unmeasured" in lines["none"] and "(nothing judged)" not in lines["none"]


def test_the_text_curves_say_what_the_mark_means() -> None:
    """The text rendering marks an incomplete query's curve with `!`; a line says so (it was
    left unexplained)."""
    text = render_text(coverage_document(every_status("open")))
    marked = [line for line in text.splitlines() if line.startswith(" !")]
    assert marked and "open" in marked[0]
    assert "  ! incomplete" in text.splitlines()


@pytest.mark.parametrize(("share", "advised"), [(0.2, False), (0.39, False), (0.45, True)])
def test_an_adaptive_summary_says_how_much_lies_outside_the_candidates(share, advised) -> None:
    """The share of the relevant outside the candidates, and where it is as high as cisi's,
    that the intervals allow for it."""
    report = dataclasses.replace(every_status(), policy="adaptive", outside_candidates=share)
    text = " ".join(summary_lines(report))
    assert f"an estimated {share:.0%} of the relevant documents" in text
    assert ("The systems miss much" in text) == advised
    static = " ".join(summary_lines(dataclasses.replace(report, policy="static")))
    assert "outside every system's candidates" not in static


def test_the_outside_share_is_shown_rounded_down_and_zero_is_not_a_finding() -> None:
    """0.395 reads '39%' (the 40% rule did not apply); no relevant reserve passage yet says
    so instead of 'an estimated 0%'."""
    report = dataclasses.replace(every_status(), policy="adaptive", outside_candidates=0.395)
    text = " ".join(summary_lines(report))
    assert "an estimated 39%" in text and "miss much" not in text
    none = " ".join(summary_lines(dataclasses.replace(report, outside_candidates=0.0)))
    assert "cannot be told from none" in none and "estimated 0%" not in none


def saving_document(name: str, saving) -> Document:
    from workbench.core.adaptive.saving import JudgeSaving

    return coverage_document(every_status(), judge=JudgeSaving(name, "v<1>", saving))


def test_the_judges_saving_closes_the_summary_in_every_rendering():
    """One line: the human judgments so far, about what the no-judge design would need for the
    same widths, the difference, and that it is an approximation; data shown literally."""
    from workbench.core.adaptive.saving import Saving

    name = f"llm{HOSTILE}_x_*y*"
    document = saving_document(name, Saving(judged=1234, without=2000, queries=3))
    text = render_text(document, width=80)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  judge llm"))
    said = " ".join(line.strip() for line in lines[start : start + 6])
    assert "judge llmopen<b>|&␛[31m_x_*y* (version v<1>): 1,234 human judgments so far" in said
    assert "would need about 2,000 (saves ≈ 766); an approximation:" in said
    assert all(len(line) <= 80 for line in lines[start : start + 6])
    assert "\x1b" not in text
    markdown = render_markdown(document)
    assert "llmopen&lt;b&gt;" not in markdown  # prose: `<` as an entity, `>` kept
    assert r"- judge llmopen&lt;b>\|&amp;␛\[31m_x\_\*y\* (version v&lt;1>)" in markdown
    page = render_html(document)
    assert "<b>" not in page and "\x1b" not in page
    assert "judge llmopen&lt;b&gt;|&amp;␛[31m_x_*y* (version v&lt;1&gt;)" in page


def test_a_judge_that_cost_judgments_or_has_no_estimate_says_so():
    from workbench.core.adaptive.saving import Saving

    costly = render_text(saving_document("j", Saving(judged=300, without=250, queries=1)))
    assert "about 250 (costs ≈ 50 more: it helps less than rank and text alone)" in costly
    assert "(the 1 query with an estimate)" in costly
    unmeasured = render_text(saving_document("j", Saving(0, 0, 0)))
    assert "judge j (version v<1>): no query has an estimate yet" in unmeasured
    assert "judge j" not in render_text(coverage_document(every_status()))
