"""The BM25 tokenizer keeps words whole in every script (tone marks, vowel signs), CJK too."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from workbench.core.model import Doc
from workbench.retrieval import corpus_hash, default_cache_dir, tokenize

ROOT = Path(__file__).resolve().parents[2]


def test_swahili_is_split_on_spaces_and_punctuation_and_casefolded():
    assert tokenize("Wakulima wa Kenya wanapambana na viwavijeshi-vamizi, mwaka 2024.") == [
        "wakulima",
        "wa",
        "kenya",
        "wanapambana",
        "na",
        "viwavijeshi",
        "vamizi",
        "mwaka",
        "2024",
    ]


def test_yoruba_tone_marks_stay_inside_their_word():
    text = "Àgbẹ̀ náà gbin àgbàdo ní oko rẹ̀."
    tokens = tokenize(text)
    assert tokens == [
        unicodedata.normalize("NFC", t)
        for t in ["àgbẹ̀", "náà", "gbin", "àgbàdo", "ní", "oko", "rẹ̀"]
    ]
    # The dot below + grave has no precomposed form: a combining mark survives NFC.
    assert any(unicodedata.category(ch) == "Mn" for ch in tokens[0])


def test_decomposed_and_composed_input_give_the_same_tokens():
    composed = "Ọjọ́ ìbí"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    assert tokenize(decomposed) == tokenize(composed) == ["ọjọ́", "ìbí"]


def test_devanagari_vowel_signs_do_not_split_words():
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


def test_cjk_becomes_one_token_per_character():
    assert tokenize("玉米害虫") == ["玉", "米", "害", "虫"]
    assert tokenize("ひらがなカタカナ") == list("ひらがなカタカナ")
    assert tokenize("カタ・カナ゠") == [
        "カ",
        "タ",
        "カ",
        "ナ",
    ]  # kana-block punctuation is not a word


def test_mixed_scripts_numbers_and_underscores():
    assert tokenize("Maize 玉米 FAW_2024: l’été, Straße!") == [
        "maize",
        "玉",
        "米",
        "faw",
        "2024",
        "l",
        "été",
        "strasse",
    ]


def test_empty_and_punctuation_only_text_have_no_tokens():
    assert tokenize("") == []
    assert tokenize(" -- ?! … ") == []


@given(st.text())
def test_tokens_are_nfc_free_of_separators_and_stable_when_retokenized(text):
    tokens = tokenize(text)
    for token in tokens:
        assert token and token == unicodedata.normalize("NFC", token)
        assert not any(
            ch.isspace() or ch == "_" or unicodedata.category(ch)[0] in "PSZC" for ch in token
        )
    assert tokenize(" ".join(tokens)) == tokens


def test_corpus_hash_is_stable_and_sensitive_to_every_field():
    docs = [Doc("a", "text one", "title"), Doc("b", "text two")]
    expected = hashlib.sha256(b"workbench-corpus-v1\0")
    for field in ("a", "title", "text one", "b", "", "text two"):
        expected.update(len(field.encode()).to_bytes(8, "little") + field.encode())
    assert corpus_hash(docs) == expected.hexdigest()
    assert corpus_hash([Doc("a", "text one", "titl"), docs[1]]) != corpus_hash(docs)
    assert corpus_hash([Doc("a", "etext one", "titl"), docs[1]]) != corpus_hash(docs)
    assert corpus_hash(docs[::-1]) != corpus_hash(docs)


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("WORKBENCH_CACHE_DIR")
    monkeypatch.chdir(tmp_path)
    assert default_cache_dir() == tmp_path / ".workbench" / "cache"


def test_importing_retrieval_loads_no_heavy_library():
    probe = "import workbench.retrieval, json, sys; print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    loaded = {m.split(".")[0] for m in json.loads(done.stdout)}
    heavy = {"torch", "sentence_transformers", "transformers", "bm25s", "rank_bm25", "numpy"}
    assert not loaded & heavy, sorted(loaded & heavy)


def test_the_mark_table_is_this_pythons_unicode_and_normalize_keeps_exactly_alnum_and_marks():
    """`unicode_marks` (read instead of scanning every codepoint at each process start) is the
    scan's; `normalize_passage`'s `[^\\W_]` is `str.isalnum`: both checked on every codepoint."""
    from workbench.core.model import _kept_runs
    from workbench.core.tokenize import class_ranges, mark_class, mark_codepoints
    from workbench.core.unicode_marks import UNICODE_VERSION

    marks = mark_codepoints()
    if UNICODE_VERSION == unicodedata.unidata_version:
        assert mark_class() == class_ranges(marks)
    kept = _kept_runs()
    mark_set = set(marks)
    wrong = [
        cp
        for cp in range(sys.maxunicode + 1)
        if (kept.fullmatch(chr(cp)) is not None) != (chr(cp).isalnum() or cp in mark_set)
    ]
    assert wrong == []
