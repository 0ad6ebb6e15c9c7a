"""`workbench demo`: finds the embedded corpus, says so plainly when it is missing, reopens an
existing demo pool without pooling again."""

from __future__ import annotations

from pathlib import Path

import pytest
from pty_app import PtyApp
from tui_fixtures import build_store, run_async, screen_text, settle, title_of

from workbench.cli import main
from workbench.commands import demo
from workbench.flows import demo as demo_flow


def test_demo_corpus_is_found_in_a_checkout() -> None:
    corpus = demo_flow.find_demo_corpus()
    assert corpus is not None
    assert (corpus / "queries.jsonl").is_file() and (corpus / "docs").is_dir()


def test_missing_demo_corpus_exits_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        "workbench.flows.demo.demo_corpus_candidates", lambda: [tmp_path / "nowhere"]
    )
    assert main(["demo", "--db", str(tmp_path / "d.db")]) == 2
    err = capsys.readouterr().err
    assert "demo corpus is not installed" in err and str(tmp_path / "nowhere") in err
    assert not (tmp_path / "d.db").exists()


def test_is_pooled(tmp_path: Path) -> None:
    assert not demo_flow.is_pooled(tmp_path / "absent.db")
    build_store(tmp_path / "p.db", queries=1, per_query=2).close()
    assert demo_flow.is_pooled(tmp_path / "p.db")


@pytest.mark.slow
def test_demo_reopens_an_existing_pool(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    build_store(db, queries=1, per_query=3).close()
    app = PtyApp(["demo", "--db", str(db), "--annotator", "a"])
    app.wait_for(title_of(0, 0), timeout=15)
    app.send("2q")
    assert app.wait_exit() == 0
    assert "Opening the demo pool" in app.text
    assert "1 current grade(s)" in app.text  # said on quit, after the app gives the screen back


def test_a_reopened_demo_repeats_which_system_was_skipped(tmp_path):
    from workbench.flows.demo import skipped_notices
    from workbench.store import Store

    with Store(tmp_path / "d.db", create=True) as store:
        store.record_pooling(["bm25"], 20, "rrf", 0, {"skipped": {"rerank": "no model here"}})
    assert skipped_notices(tmp_path / "d.db") == (
        "The demo pool was built without rerank: no model here",
    )


@run_async
async def test_the_demo_pools_a_paragraph_a_passage_and_shows_each_heading_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo corpus is written a paragraph a passage (its ids are the golden set's); in the
    app a passage's title shows once, and a `##` heading as its words."""
    from workbench.formats import read_text_folder
    from workbench.formats.passages import PARAGRAPHS
    from workbench.store import Store
    from workbench.tui.app import JudgeApp
    from workbench.tui.passage import PassageView

    monkeypatch.setattr(demo, "DEMO_SYSTEMS", ("bm25",))  # the rest need a model
    corpus = demo_flow.find_demo_corpus()
    assert corpus is not None
    demo.pool_demo(corpus, tmp_path / "d.db")
    assert ("Corpus: 31 files -> 175 passages, median 72 words (shortest 45, longest 92): a "
            "paragraph a passage.") in capsys.readouterr().err  # fmt: skip
    docs = {d.doc_id: d for d in read_text_folder(corpus / "docs", PARAGRAPHS)}
    with Store(tmp_path / "d.db") as store:
        assert store.poolings()[-1]["params"]["passages"] == "paragraphs"
        assert all(store.doc(d.doc_id) in (d, None) for d in docs.values())
        app = JudgeApp(store, "a")
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            view = app.screen.query_one(PassageView)
            for doc_id, title, heading in (
                ("storage/hermetic-bags.md#1", "Storing grain in hermetic bags", None),
                ("dairy/mastitis.md#2", "Mastitis in dairy cows", "Clinical mastitis"),
            ):
                doc = docs[doc_id]
                assert doc.title == title and doc.text.startswith("#")
                view.show(doc, doc_id, frozenset())
                await pilot.pause()
                shown = screen_text(app)  # a Markdown file's passage: rendered
                lines = [line.strip("│ ") for line in shown.split("\n")]
                at = lines.index(title)
                assert shown.count(title) == 1 and "#" not in "".join(lines[at:]), shown
                if heading:
                    assert lines[at + 1] == heading
                else:
                    assert lines[at + 1].startswith("Hermetic bags")  # no blank row between
