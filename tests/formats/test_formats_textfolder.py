"""Text folders: the chunking rule the demo corpus is written against."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.errors import InputError
from workbench.core.model import Query, Run
from workbench.formats import (
    Golden,
    chunk_text,
    read_corpus_any,
    read_golden,
    read_qrels,
    read_run,
    read_text_folder,
    write_golden,
    write_qrels,
    write_run,
)
from workbench.formats.paragraphs import split_long
from workbench.formats.passages import PARAGRAPHS
from workbench.formats.textfolder import path_id

FOLDER = Path(__file__).parents[1] / "fixtures" / "formats" / "textfolder"


def test_folder_passages_ids_titles():
    """The default rule merges a short file's blocks into one passage, its heading kept, the
    passage an exact span of its file that records where it sits."""
    docs = read_text_folder(FOLDER)
    assert [(d.doc_id, d.title) for d in docs] == [
        ("maize.md#1", "Maize pests"),
        ("sub/yoruba.txt#1", "yoruba.txt"),
    ]
    assert docs[0].text == (
        "# Maize pests\n\nFall armyworm is the main pest of maize in Africa.\n"
        "Scout the whorl twice a week.\n\n## Control\n\nHand-pick egg masses. Apply neem "
        "extract early."
    )
    assert docs[1].text == "Àgbẹ̀ ń gbin àgbàdo ní oko.\n\nẸ̀fọn kò sí níbí."
    for doc in docs:
        assert doc.span is not None
        text = (FOLDER / doc.span.source).read_bytes().decode("utf-8-sig")
        assert text[doc.span.start : doc.span.end] == doc.text
    assert read_corpus_any(FOLDER) == docs


def test_folder_passages_by_paragraph():
    docs = read_text_folder(FOLDER, PARAGRAPHS)
    assert [(d.doc_id, d.title) for d in docs] == [
        ("maize.md#1", "Maize pests"),
        ("maize.md#2", "Maize pests"),
        ("sub/yoruba.txt#1", "yoruba.txt"),
        ("sub/yoruba.txt#2", "yoruba.txt"),
    ]
    assert docs[0].text == (
        "# Maize pests\nFall armyworm is the main pest of maize in Africa.\n"
        "Scout the whorl twice a week."
    )
    assert docs[1].text == "## Control\nHand-pick egg masses. Apply neem extract early."
    assert docs[2].text == "Àgbẹ̀ ń gbin àgbàdo ní oko."  # tone marks untouched
    assert read_corpus_any(FOLDER, PARAGRAPHS) == docs


def test_headings_join_the_next_paragraph_and_a_trailing_heading_stands_alone():
    text = "# A\n\n## B\n\nbody one\n\n\n\nbody two\r\n\r\n### C\n"
    assert chunk_text(text) == ["# A\n## B\nbody one", "body two", "### C"]
    assert chunk_text("#hashtag is not a heading\n\nnext") == ["#hashtag is not a heading", "next"]
    assert chunk_text("") == [] and chunk_text("\n  \n\t\n") == []


def test_long_paragraphs_split_at_sentence_ends():
    sentence = " ".join(["word"] * 29) + " end."  # 30 words
    paragraph = " ".join([sentence] * 10)  # 300 words, 10 sentences
    pieces = chunk_text(paragraph)
    assert [len(p.split()) for p in pieces] == [180, 120]
    assert all(p.endswith("end.") for p in pieces)
    assert " ".join(pieces) == paragraph


def test_a_sentence_longer_than_a_piece_is_cut_at_the_word_limit():
    long_sentence = " ".join(f"w{i}" for i in range(450)) + "."
    pieces = split_long("Short one. " + long_sentence + " Tail here.")
    assert [len(p.split()) for p in pieces] == [2, 200, 200, 50, 2]
    assert pieces[0] == "Short one." and pieces[-1] == "Tail here."


def test_other_scripts_sentence_ends_and_closing_quotes():
    sentence = " ".join(["ọ̀rọ̀"] * 99) + " «ìparí.»"  # 100 words, ends inside a quote
    pieces = split_long(" ".join([sentence] * 3))
    assert [len(p.split()) for p in pieces] == [200, 100]
    devanagari = " ".join(["शब्द"] * 149) + " अंत।"
    assert [len(p.split()) for p in split_long(devanagari + " " + devanagari)] == [150, 150]


def test_ordering_is_deterministic_and_hidden_files_skipped(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.md").write_text("bee")
    (tmp_path / "a.txt").write_text("ay")
    (tmp_path / "C.MD").write_text("sea")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "notes.md").write_text("hidden")
    ids = [d.doc_id for d in read_text_folder(tmp_path)]
    assert ids == ["C.MD#1", "a.txt#1", "b/x.md#1"]


def test_empty_or_missing_folders_and_bad_bytes(tmp_path):
    with pytest.raises(InputError, match="no passages"):
        read_text_folder(tmp_path)
    with pytest.raises(InputError, match="not a folder"):
        read_text_folder(tmp_path / "missing")
    (tmp_path / "bad.md").write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputError) as info:
        read_text_folder(tmp_path)
    assert info.value.problems == [f"{tmp_path / 'bad.md'}:2: not UTF-8 text (byte 0xff)"]


# -- ids from paths: one TREC column, read back from every format ---------------------------------

AWKWARD_NAMES = {
    "My Notes [draft].md": "My%20Notes%20[draft].md",
    "a#b.md": "a%23b.md",
    "100%.md": "100%25.md",
    "tab\there.txt": "tab%09here.txt",
    "nbsp\u00a0x.md": "nbsp%C2%A0x.md",
    "esc\x1b[31m.md": "esc%1B[31m.md",
    "#hash.md": "%23hash.md",
    "Àgbẹ̀ (1).md": "Àgbẹ̀%20(1).md",
    "sub dir/n.md": "sub%20dir/n.md",
    "bom\ufeff.md": "bom%EF%BB%BF.md",
}


def test_ids_from_awkward_file_names_are_percent_encoded_titles_keep_the_name(tmp_path):
    for name in AWKWARD_NAMES:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("one paragraph\n\nanother\n")
    (tmp_path / "titled%20.md").write_text("# A heading\n\nbody\n")
    docs = read_text_folder(tmp_path)
    ids = {d.doc_id for d in docs}
    assert ids == {f"{stem}#1" for stem in AWKWARD_NAMES.values()} | {
        "titled%2520.md#1"
    }
    for doc in docs:
        assert len(doc.doc_id.split()) == 1 and doc.doc_id.isprintable()
    titles = {d.doc_id: d.title for d in docs}
    assert titles["My%20Notes%20[draft].md#1"] == "My Notes [draft].md"
    assert titles["esc%1B[31m.md#1"] == "esc\x1b[31m.md"  # shown through display.visible
    assert titles["titled%2520.md#1"] == "A heading"


def test_path_id_is_one_rule_and_injective():
    assert path_id("plain/ascii-name_1.md") == "plain/ascii-name_1.md"
    assert path_id("My Notes [draft].md") == "My%20Notes%20[draft].md"
    assert path_id("a#b.md") == "a%23b.md"
    assert path_id("caf\udce9.md") == "caf%E9.md"  # a byte that is not UTF-8 (os.fsdecode)
    names = ["a b", "a%20b", "a%2520b", "a#b", "a%23b", "a\u2028b", "a%E2%80%A8b"]
    assert len({path_id(n) for n in names}) == len(names)


def test_a_file_name_that_is_not_utf8_gives_a_valid_id_and_title(tmp_path):
    name = os.fsdecode(b"caf\xe9.md")
    try:
        (tmp_path / name).write_text("body\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses a file name that is not UTF-8")
    [doc] = read_text_folder(tmp_path)
    assert doc.doc_id == "caf%E9.md#1" and doc.title == "caf\ufffd.md"
    doc.doc_id.encode("utf-8") and doc.title.encode("utf-8")  # never a lone surrogate


def test_awkward_ids_round_trip_through_golden_qrels_and_runs(tmp_path):
    for name in AWKWARD_NAMES:
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text("text\n")
    doc_ids = sorted(d.doc_id for d in read_text_folder(tmp_path / "docs"))
    qrels = {"q1": {doc_id: i % 4 for i, doc_id in enumerate(doc_ids)}}
    golden = Golden(name="awkward", queries=[Query("q1", "a query")], qrels=qrels)
    golden.aliases = {doc_ids[0]: doc_ids[1]}
    golden.notes = {("q1", doc_ids[2]): "note"}
    write_golden(tmp_path / "g.yaml", golden)
    assert read_golden(tmp_path / "g.yaml") == golden
    write_qrels(tmp_path / "q.txt", qrels)
    assert read_qrels(tmp_path / "q.txt") == qrels
    run = Run(name="sys", scores={"q1": {doc_id: float(i) for i, doc_id in enumerate(doc_ids)}})
    write_run(tmp_path / "r.run", run)
    assert read_run(tmp_path / "r.run").scores == run.scores


def test_awkward_ids_survive_pool_judge_export_eval(tmp_path, capsys):
    """A folder with spaces, '#' and '%' in its file names: pooled, judged (by an oracle),
    exported to golden.yaml and qrels, evaluated from both."""
    from workbench.cli import main

    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "My Notes [draft].md").write_text("maize armyworm control in the field\n")
    (corpus / "a#b.md").write_text("armyworm larvae in maize whorls\n")
    (corpus / "100%.md").write_text("dairy cows and milk yield\n")
    (corpus / "plain.md").write_text("storage of maize grain in bags\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "armyworm in maize"}\n')
    db, runs = tmp_path / "j.db", tmp_path / "runs"
    code = main(["pool", "--corpus", str(corpus), "--queries", str(queries), "--systems",
                 "bm25", "--depth", "3", "--sample", "1", "--db", str(db), "--runs-dir",
                 str(runs)])  # fmt: skip
    assert code == 0, capsys.readouterr()
    oracle = tmp_path / "oracle.qrels"
    ids = [d.doc_id for d in read_text_folder(corpus)]
    write_qrels(oracle, {"q1": {i: (2 if "armyworm" in i or "a%23b" in i else 0) for i in ids}})
    assert main(["simulate", "--db", str(db), "--oracle", str(oracle)]) == 0
    golden_path, qrels_path = tmp_path / "golden.yaml", tmp_path / "golden.qrels"
    code = main(["export", "--db", str(db), "--golden", str(golden_path), "--qrels",
                 str(qrels_path)])  # fmt: skip
    assert code == 0, capsys.readouterr()
    golden = read_golden(golden_path)
    assert "My%20Notes%20[draft].md#1" in golden.qrels["q1"]
    assert "a%23b.md#1" in golden.qrels["q1"]
    assert read_qrels(qrels_path)["q1"] == golden.expanded_qrels()["q1"]
    [run_file] = sorted(runs.glob("*.run"))
    capsys.readouterr()
    for judgments in (golden_path, qrels_path):
        assert main(["eval", "--qrels", str(judgments), "--run", str(run_file)]) == 0
        assert "My Notes" not in capsys.readouterr().err


def test_many_bad_files_give_a_capped_list_of_problems(tmp_path):
    for i in range(60):
        (tmp_path / f"bad{i:02}.md").write_bytes(b"\xff\n")
    with pytest.raises(InputError) as info:
        read_text_folder(tmp_path)
    problems = info.value.problems
    assert len(problems) == 51 and problems[-1] == f"{tmp_path}: ... and 10 more problems"
    assert problems[0] == f"{tmp_path / 'bad00.md'}:1: not UTF-8 text (byte 0xff)"
