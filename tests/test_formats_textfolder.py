"""Text folders: the chunking rule the demo corpus is written against."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import InputError
from workbench.formats import chunk_text, read_corpus_any, read_text_folder
from workbench.formats.textfolder import split_long

FOLDER = Path(__file__).parent / "fixtures" / "formats" / "textfolder"


def test_folder_passages_ids_titles():
    docs = read_text_folder(FOLDER)
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
    assert read_corpus_any(FOLDER) == docs


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
