"""`workbench report`: one self-contained HTML page on a judging round, parsed strictly with
html5lib: its sections, tables and charts, no script and no external asset, and data (ids,
names, run tags) that holds `<script>` or escape sequences shown as text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import html5lib
import pytest

from workbench.cli import main
from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.store import open_store

NS = "{http://www.w3.org/1999/xhtml}"
SCRIPT = "<script>alert(1)</script>"
ESC = "\x1b]2;PWNED\x07"


def build_round(path: Path, hostile: bool) -> tuple[Path, Path]:
    """Two queries, a pool with outside samples, two humans on every item, and a run."""
    qid = f"q{SCRIPT}" if hostile else "q1"

    def doc(i: int) -> str:  # a store from an older version may hold controls in an id
        return f"d{i}{ESC}[b]" if hostile and i == 0 else f"d{i}"

    system = f"bm25{ESC}" if hostile else "bm25"
    with open_store(path, create=True) as store:
        store.add_queries([Query(qid, "maize pests"), Query("q2", "milk")])
        store.add_docs([Doc(doc(i), f"passage {i}") for i in range(30)])
        entries = []
        for q in (qid, "q2"):
            entries += [PoolEntry(q, doc(i), i, provenance=(Provenance(system, i + 1, 1.0),))
                        for i in range(8)]  # fmt: skip
            entries += [PoolEntry(q, doc(i), i, stratum="rest", inclusion_prob=0.3)
                        for i in range(8, 14)]  # fmt: skip
        store.add_pool_entries(entries)
        store.set_meta("corpus_size", "30")
        rows = []
        for e in entries:
            grade = 2 if int(e.doc_id[1:].split("\x1b")[0]) < 4 else 0
            rows.append(Judgment(f"ann{SCRIPT}" if hostile else "ann", e.query_id, e.doc_id, grade))
            rows.append(Judgment("bob", e.query_id, e.doc_id, grade if e.position % 5 else 1))
        store.add_judgments(rows)
    run = path.parent / "r.run"
    tag = "sys" if not hostile else "sys<b>"
    run.write_text(
        "".join(f"{q} Q0 d{i} {i + 1} {10 - i} {tag}\n" for q in (qid, "q2") for i in range(10)),
        encoding="utf-8",
    )
    return path, run


@pytest.fixture(params=[False, True], ids=["plain", "hostile"])
def page(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    db, run = build_round(tmp_path / "round.db", request.param)
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "--run", str(run), "-k", "5", "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_the_page_has_every_section_and_parses_strictly(page: str) -> None:
    tree = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(page)
    headings = ["".join(h.itertext()) for h in tree.iter(f"{NS}h2")]
    assert headings[:5] == [
        "The study", "Who judged what", "Coverage", "Metrics per run", "Agreement",
    ]  # fmt: skip
    assert tree.find(f".//{NS}script") is None and tree.find(f".//{NS}link") is None
    assert tree.find(f".//{NS}img") is None and "url(" not in page
    assert len(list(tree.iter(f"{NS}table"))) >= 4  # per query, per system, a run, a pair
    svgs = re.findall(r"<svg .*?</svg>", page, re.S)
    assert len(svgs) == 2  # completeness with its interval, discovery curves
    for svg in svgs:
        chart = ET.fromstring(svg)
        labels = "".join(chart.itertext())
        assert "0.8" in labels and "1" in labels or "relevant found" in labels


def test_data_is_text_never_markup(page: str) -> None:
    assert "\x1b" not in page and "\x07" not in page
    tree = html5lib.HTMLParser(namespaceHTMLElements=True).parse(page)
    text = "".join(tree.find(f".//{NS}body").itertext())  # type: ignore[union-attr]
    if "q<script>" in text:  # the hostile round: shown, escaped, inert
        assert "ann<script>alert(1)</script>" in text and "sys<b>" in text
        assert "␛]2;PWNED␇" in text
        assert tree.find(f".//{NS}b") is None


def test_the_output_is_checked_before_anything_is_written(tmp_path: Path, capsys) -> None:
    db, run = build_round(tmp_path / "round.db", hostile=False)
    before = db.read_bytes()
    assert main(["report", "--db", str(db), "-o", str(db)]) == 2
    assert "would overwrite --db" in capsys.readouterr().err and db.read_bytes() == before
    assert main(["report", "--db", str(db), "--run", str(run), "-o", str(run)]) == 2
    assert main(["report", "--db", str(db), "-o", str(tmp_path / "no-runs.html")]) == 0
    assert "No run given" in (tmp_path / "no-runs.html").read_text()
