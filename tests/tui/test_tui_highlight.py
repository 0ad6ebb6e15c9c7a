"""Query-term highlighting: whole words, casefolded, any script, text kept literal."""

from __future__ import annotations

from workbench.tui.highlight import highlight, query_terms, word_spans


def styled_words(text, terms) -> list[str]:  # type: ignore[no-untyped-def]
    rendered = highlight(text, terms)
    return [rendered.plain[span.start : span.end] for span in rendered.spans]


def test_whole_word_casefolded_matches_only() -> None:
    terms = query_terms("What is the Maize pest?")
    assert terms == {"maize", "pest"}
    assert styled_words("MAIZE pests; a pest-free maize.", terms) == ["MAIZE", "pest", "maize"]


def test_combining_marks_stay_inside_words() -> None:
    # Yoruba with combining tone marks (decomposed) matches the precomposed query term.
    decomposed = "o\u0323\u0300ra a\u0300gbàdo"
    assert [t for _, _, t in word_spans(decomposed)][0] == "ọ̀ra".casefold()
    assert styled_words(decomposed + " gbado", query_terms("ọ̀ra")) == ["o\u0323\u0300ra"]


def test_other_scripts_and_markup_stay_literal() -> None:
    text = "日本語 [bold]x[/bold] [@click=app.quit]مرحبا[/]"
    rendered = highlight(text, query_terms("مرحبا bold"))
    assert rendered.plain == text
    assert styled_words(text, query_terms("مرحبا bold")) == ["bold", "bold", "مرحبا"]


def test_spans_agree_with_the_project_tokenizer() -> None:
    from workbench.retrieval.tokenize import tokenize

    samples = [
        "Fall-armyworm_larvae (FAW) in MAIZE, 2016!",
        "o\u0323\u0300ra a\u0300gbàdo ọjọ́ Ẹ̀kọ́",
        "日本語のテキスト、東京。 mixed日本text",
        "Straße STRASSE ǅemal İstanbul",
        "मक्का की फसल  مرحبا بالعالم  Кукуруза",
        "\u0301leading mark, x\u0301y",
    ]
    for text in samples:
        assert [t for _, _, t in word_spans(text)] == tokenize(text), text
