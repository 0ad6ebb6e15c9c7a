"""Every printed report shows text from data literally: control characters drawn visibly, never
sent to the terminal; Markdown cells keep their columns; SVG stays valid XML. JSON output is
left as it is (json.dumps escapes control characters)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from workbench.cli import main
from workbench.commands.agree import format_report
from workbench.core.agreement.agreement import agreement_report
from workbench.core.coverage import coverage_report
from workbench.core.model import Judgment, PoolEntry, Provenance, Query
from workbench.reports.coverage import coverage_document
from workbench.reports.render import render_markdown, render_text
from workbench.reports.svg import svg_text
from workbench.store import Store

ESC = "\x1b"
QID = f"q{ESC}[31m|x\\"
SYSTEM = f"bm{ESC}]0;pwn\a25"
BAD = [ESC, "\a", "\x9b", "\x00", "\ufffe"]


def hostile_coverage():  # type: ignore[no-untyped-def]
    docs = [f"d{i}" for i in range(30)]
    entries = [
        PoolEntry(QID, d, i, provenance=(Provenance(SYSTEM, i + 1, 1.0),))
        for i, d in enumerate(docs[:5])
    ]
    entries += [
        PoolEntry(QID, d, 5 + i, stratum="rest", inclusion_prob=0.4)
        for i, d in enumerate(docs[5:15])
    ]
    entries += [
        PoolEntry("plain", d, i, provenance=(Provenance(SYSTEM, i + 1, 1.0),))
        for i, d in enumerate(docs[:5])
    ]
    grades = {QID: {d: int(i < 2) for i, d in enumerate(docs[:15])}, "plain": {"d0": 1}}
    return coverage_report(entries, grades, len(docs), draws=200)


def assert_inert(text: str) -> None:
    for char in BAD:
        assert char not in text, repr(char)


def test_coverage_table_and_markdown_show_ids_visibly():
    document = coverage_document(hostile_coverage())
    table = render_text(document)
    assert_inert(table)
    assert "q␛[31m|x\\" in table and "bm␛]0;pwn␇25" in table
    markdown = render_markdown(document)
    assert_inert(markdown)
    assert "| q␛\\[31m\\|x\\\\ |" in markdown  # pipe and backslash escaped in the cell
    for block in re.findall(r"(?:^\|.*\n)+", markdown, re.M):  # every table keeps its columns
        rows = block.splitlines()
        assert len({line.replace("\\\\", "").replace("\\|", "").count("|") for line in rows}) == 1
    for svg in re.findall(r"<svg.*?</svg>", markdown, re.S):  # charts: inert, valid XML
        assert_inert(svg)
        ET.fromstring(svg)  # a raw ESC (or U+FFFE) would make this raise
    assert svg_text("a\ufffe<b>\x1b") == "a\\ufffe&lt;b&gt;␛"


def test_coverage_refuses_an_empty_annotator_name(tmp_path, capsys):
    db = tmp_path / "s.db"
    with Store(db, create=True) as store:
        store.add_queries([Query("q1", "text")])
    for name in ("", "bad name"):
        with pytest.raises(SystemExit) as exit_:  # argparse refuses it: usage, exit 2
            main(["coverage", "--db", str(db), "--annotator", name])
        assert exit_.value.code == 2
    assert "a name is required" in capsys.readouterr().err


def test_agree_shows_names_and_ids_visibly():
    ann, bob = f"ann{ESC}[2J", "bob"
    judgments = [
        Judgment(who, f"q{ESC}[1m", f"d{ESC}]8;;x{i}", (i + (who == bob)) % 4)
        for i in range(12)
        for who in (ann, bob)
    ]
    text = "\n".join(format_report(agreement_report(judgments, [0, 1, 2, 3])))
    assert_inert(text)
    assert "ann␛[2J vs bob" in text and "q␛[1m" in text and "d␛]8;;x" in text


def test_position_bias_shows_ids_visibly(tmp_path, capsys):
    def rec(qid, a, b, first, preferred):
        return json.dumps({"qid": qid, "a": a, "b": b, "first": first, "preferred": preferred})

    path = tmp_path / f"judge{ESC}[2J.jsonl"
    q, a, b = f"q{ESC}[31m", f"a{ESC}]0;t\a", "b\x9b1"
    path.write_text(
        "\n".join([rec(q, a, b, "a", "a"), rec(q, a, b, "b", "b"), rec("r", a, b, "a", "a")]) + "\n"
    )
    assert main(["position-bias", str(path)]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    assert "q␛[31m" in out and "a␛]0;t␇" in out and "b\\x9b1" in out and "judge␛[2J" in out


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_coverage_cli_output_is_inert(tmp_path, capsys, fmt):
    db = tmp_path / "s.db"
    with Store(db, create=True) as store:
        store.add_queries([Query(f"q{ESC}[5m", "text")])
    assert main(["coverage", "--db", str(db), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    assert "q␛[5m" in out
