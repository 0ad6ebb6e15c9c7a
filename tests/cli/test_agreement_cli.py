"""`workbench agree` through the real CLI and store: table, JSON, the no-overlap message."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.model import Judgment, Query
from workbench.store import Store


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.db"
    with Store(path, create=True) as store:
        store.add_queries([Query("q1", "maize pests")])
    return path


def add(db, *judgments):
    with Store(db) as store:
        for j in judgments:
            store.add_judgment(j)


def test_no_overlap_is_a_message_and_exit_0(db, capsys):
    add(db, Judgment("ann", "q1", "d1", 2), Judgment("bob", "q1", "d2", 1))
    assert main(["agree", "--db", str(db)]) == 0
    assert "No overlap" in capsys.readouterr().out
    assert main(["agree", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == []


def test_empty_store_is_a_message(db, capsys):
    assert main(["agree", "--db", str(db)]) == 0
    assert "No overlap" in capsys.readouterr().out


def test_table_shows_kappa_ci_n_flag_confusion_and_truncated_disagreements(db, capsys):
    grades_ann = [0, 1, 2, 3] * 6
    grades_bob = [0, 1, 2, 3] * 3 + [3, 2, 1, 0] * 3
    add(
        db,
        *[Judgment("ann", "q1", f"d{i:02}", g) for i, g in enumerate(grades_ann)],
        *[Judgment("bob", "q1", f"d{i:02}", g) for i, g in enumerate(grades_bob)],
    )
    assert main(["agree", "--db", str(db), "--show", "3", "--wide"]) == 0
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith("ann vs bob ")]
    assert row.split()[3] == "24" and "BELOW 0.6: kappa" in row
    assert "rows ann, columns bob" in out
    assert "Disagreements between humans: 12" in out
    assert "... and 9 more" in out
    assert main(["agree", "--db", str(db), "--json"]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["pairs"]
    low, high = pair["kappa_ci"]
    assert f"{pair['kappa']:.3f} [{low:.3f}, {high:.3f}]" in row
    assert pair["meets_bar"] is False and len(pair["confusion"]) == 4


def test_markdown_and_html_formats(db, capsys):
    grades = [0, 1, 2, 3] * 3
    add(
        db,
        *[Judgment("ann", "q1", f"d{i:02}", g) for i, g in enumerate(grades)],
        *[Judgment("b|<b>", "q1", f"d{i:02}", (g + (i == 0)) % 4) for i, g in enumerate(grades)],
    )
    assert main(["agree", "--db", str(db), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("# Agreement between annotators")
    assert "| ann vs b\\|&lt;b&gt; |" in markdown  # the name cannot split the table
    assert main(["agree", "--db", str(db), "--format", "html"]) == 0
    html = capsys.readouterr().out
    assert html.startswith("<!DOCTYPE html>") and "<b>" not in html and "b|&lt;b&gt;" in html


def test_regrade_and_undo_use_the_current_grade(db, capsys):
    add(
        db,
        Judgment("ann", "q1", "d1", 0),
        Judgment("ann", "q1", "d1", 2),
        Judgment("bob", "q1", "d1", 2),
        Judgment("ann", "q1", "d2", 1),
        Judgment("bob", "q1", "d2", 3),
        Judgment("bob", "q1", "d2", None),
    )
    assert main(["agree", "--db", str(db), "--json"]) == 0
    (pair,) = json.loads(capsys.readouterr().out)["pairs"]
    assert pair["n"] == 1 and pair["agreement"] == 1.0


def test_missing_store_is_exit_2(tmp_path, capsys):
    assert main(["agree", "--db", str(tmp_path / "none.db")]) == 2
    assert "no such judgments store" in capsys.readouterr().err


def test_agreement_blocks_for_a_larger_report():
    """`workbench report` embeds agree's blocks: callable with the typed report alone, its
    headings one level down, and nothing when there is no overlap."""
    from workbench.core.agreement.agreement import agreement_report
    from workbench.reports.agreement import agreement_blocks, agreement_document
    from workbench.reports.document import Heading
    from workbench.reports.render import render_html

    grades = [0, 1, 2, 3] * 3
    judgments = [Judgment("ann", "q1", f"d{i:02}", g) for i, g in enumerate(grades)]
    judgments += [
        Judgment("bob", "q1", f"d{i:02}", (g + (i < 2)) % 4) for i, g in enumerate(grades)
    ]
    report = agreement_report(judgments, [0, 1, 2, 3])
    assert report.has_overlap
    blocks = agreement_blocks(report, level=3)
    assert {b.level for b in blocks if isinstance(b, Heading)} == {3}
    assert "ann vs bob" in render_html(agreement_document(report))
    alone = agreement_report(judgments[:12], [0, 1, 2, 3])
    assert not alone.has_overlap
    assert "No overlap" in render_html(agreement_document(alone))
