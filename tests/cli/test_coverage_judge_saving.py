"""A judge covariate's cost as a figure through the commands: `coverage` (text, Markdown,
HTML) and `report` say how many human judgments the stored judge saved, its name shown
literally; the study target (`--target`) counts human judgments only, whatever the judge
labelled."""

from __future__ import annotations

import json
import re
from pathlib import Path

import html5lib
import pytest
from adaptive_fixtures import make_study, pool

from workbench.cli import main
from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.model import Judgment, Role
from workbench.flows.adaptive import choose_judge
from workbench.store import Store

NS = "{http://www.w3.org/1999/xhtml}"
HOSTILE = "llm<script>alert(1)</script>\x1b]2;PWNED\x07_x_"
"""A store written by another tool may hold any name: it must show as text."""
PER_QUERY = 40


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An adaptive study whose model judge labelled every pooled passage (the truth's grade),
    chosen as the covariate, then an oracle's walk of PER_QUERY judgments per query."""
    s = make_study(tmp_path_factory.mktemp("judged"))
    assert pool(s, "--seed", "1") == 0
    with Store(s["db"]) as store:
        pooled = sorted({(e.query_id, e.doc_id) for e in store.pool()})
        store.add_annotator(HOSTILE, Role.MODEL)
        version = store.record_judge(HOSTILE, JudgeIdentity("import-labels", scorer="truth"))
        store.add_judgments(
            Judgment(HOSTILE, q, d, s["truth"].get(q, {}).get(d, 0), role=Role.MODEL,
                     judge_version=version)
            for q, d in pooled
        )  # fmt: skip
        choose_judge(store, HOSTILE)
    simulate = ["simulate", "--db", str(s["db"]), "--oracle", str(s["qrels"]), "--no-stop"]
    assert main([*simulate, "--per-query", str(PER_QUERY)]) == 0
    with Store(s["db"]) as store:
        s["human"] = len(store.current_judgments("oracle"))
        s["labels"] = len(store.current_judgments(HOSTILE))
        s["version"] = version
    return s


def said(out: str) -> str:
    """The saving line, its wrapped lines joined."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("judge llm"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    return " ".join(line.strip() for line in lines[start:end])


def test_coverage_says_what_the_judge_saved_in_text_markdown_and_html(judged, capsys, monkeypatch):
    db = str(judged["db"])
    capsys.readouterr()
    assert main(["coverage", "--db", db, "--json"]) == 0
    saving = json.loads(capsys.readouterr().out)["judge"]["saving"]
    assert 0 < saving["judged"] <= judged["human"]
    monkeypatch.setenv("COLUMNS", "72")
    assert main(["coverage", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and all(len(line) <= 72 for line in out.splitlines())
    line = said(out)
    shown = "llm<script>alert(1)</script>␛]2;PWNED␇_x_"
    assert line.startswith(
        f"judge {shown} (version {judged['version']}): {saving['judged']:,} human judgments so far"
    )
    effect = f"saves ≈ {saving['saved']:,})" if saving["saved"] > 0 else "costs ≈"
    effect = "no saving)" if saving["saved"] == 0 else effect
    assert f"would need about {saving['without_judge']:,} ({effect}" in line
    assert "an approximation" in line
    assert main(["coverage", "--db", db, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert r"- judge llm&lt;script>alert(1)&lt;/script>␛\]2;PWNED␇\_x\_ (version" in markdown
    assert main(["coverage", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    tree = html5lib.HTMLParser(namespaceHTMLElements=True).parse(page)
    assert tree.find(f".//{NS}script") is None and "\x1b" not in page
    text = "".join(tree.find(f".//{NS}body").itertext())  # type: ignore[union-attr]
    assert f"judge {shown} (version {judged['version']}): {saving['judged']:,} human" in text


def test_report_says_what_the_judge_saved(judged, tmp_path: Path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(judged["db"]), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    tree = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(page)
    assert tree.find(f".//{NS}script") is None and "\x1b" not in page
    text = re.sub(r"\s+", " ", "".join(tree.find(f".//{NS}body").itertext()))  # type: ignore[union-attr]
    assert "judge llm<script>alert(1)</script>␛]2;PWNED␇_x_ (version" in text
    assert "human judgments so far" in text and "without the judge the same width" in text
    # the round's own count: people's judgments, not the judge's labels of the whole pool
    assert f"{judged['human']} judged ({judged['labels']} labelled by a model" in text


def test_the_target_counts_human_judgments_only(judged, capsys):
    """The judge labelled every pooled passage: none of its labels is a judgment so far, and
    none is taken off what the frames leave for people to judge."""
    db = str(judged["db"])
    assert judged["labels"] > 2 * judged["human"]
    capsys.readouterr()
    assert main(["coverage", "--db", db, "--json", "--target", "R@10:0.02"]) == 0
    data = json.loads(capsys.readouterr().out)
    study = data["study"]
    assert study["judged"] == judged["human"]
    assert sum(q["judged"] for q in data["queries"].values()) == judged["human"]
    assert not study["reached"] and study["to_target"] is not None and study["to_target"] > 0
    with Store(judged["db"]) as store:
        frames = sum(1 for e in store.pool() if e.stratum == "candidate" or
                     e.stratum.startswith("reserve"))  # fmt: skip
    assert study["to_target"] <= frames - judged["human"]
    assert main(["coverage", "--db", db, "--target", "R@10:0.02"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"more human judgments ({judged['human']:,} so far)" in text
