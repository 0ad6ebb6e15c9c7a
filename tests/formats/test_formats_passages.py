"""How a text file is cut into passages (`workbench.formats.passages`): generated files, single-
and double-spaced, plain and Markdown, checked for what a reader of the passages relies on."""

from __future__ import annotations

import random
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.errors import InputError
from workbench.formats import chunk_text
from workbench.formats.passages import (
    DEFAULT_RULE,
    PARAGRAPHS,
    PassageRule,
    chosen_rule,
    corpus_stats,
    golden_rule,
    merge_passages,
    parse_rule,
    parse_words,
    recorded_rule,
    short_passages_warning,
)

VOCAB = ("maize", "armyworm", "larvae", "whorl", "scout", "field", "neem", "the", "a", "of",
         "farmers", "plant", "leaves", "early", "rain", "soil", "Nairobi", "«quoted»")  # fmt: skip
ENDS = (".", "!", "?", ".”", "।", "。")


def sentence(rnd: random.Random, longest: int = 40) -> str:
    words = [rnd.choice(VOCAB) for _ in range(rnd.randint(3, longest))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rnd.choice(ENDS)


def article(rnd: random.Random, paragraphs: int, markdown: bool = False, longest: int = 40) -> str:
    parts = []
    if markdown:
        parts.append(f"# {rnd.choice(VOCAB).capitalize()} notes")
    for n in range(paragraphs):
        if markdown and rnd.random() < 0.3:
            parts.append(f"## Section {n}")
        elif not markdown and rnd.random() < 0.15:
            parts.append(f"Part {n} of the notes")  # a plain-text heading
        parts.append(" ".join(sentence(rnd, longest) for _ in range(rnd.randint(1, 7))))
    return "\n\n".join(parts) + "\n"


def double_spaced(text: str, width: int = 60) -> str:
    """`text` as an old archive has it: wrapped at `width`, a blank line after every line."""
    return "\n\n".join(
        line for block in text.split("\n\n") for line in textwrap.wrap(block, width)
    )


def words(text: str) -> list[str]:
    return text.split()


def check_cut(text: str, passages: list[str], low: int, high: int) -> None:
    """Every word once, in order; no passage over `high`; one under `low` only where the file
    is, or where merging it with a neighbour would pass `high`."""
    assert [w for p in passages for w in words(p)] == words(text)
    sizes = [len(words(p)) for p in passages]
    assert all(size <= high for size in sizes), sizes
    for i, size in enumerate(sizes):
        if size < low and len(sizes) > 1:
            neighbours = [sizes[j] for j in (i - 1, i + 1) if 0 <= j < len(sizes)]
            assert all(size + other > high for other in neighbours), (i, sizes)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    paragraphs=st.integers(0, 30),
    markdown=st.booleans(),
    spacing=st.sampled_from(["single", "double", "crlf"]),
    bounds=st.sampled_from([(80, 250), (30, 60), (150, 400), (1, 10), (100, 100)]),
)
def test_every_word_lands_once_in_order_and_sizes_hold(
    seed: int, paragraphs: int, markdown: bool, spacing: str, bounds: tuple[int, int]
) -> None:
    rnd = random.Random(seed)
    text = article(rnd, paragraphs, markdown)
    if spacing == "double":
        text = double_spaced(text)
    elif spacing == "crlf":
        text = text.replace("\n", "\r\n")
    low, high = bounds
    passages = merge_passages(text, low, high)
    check_cut(text, passages, low, high)
    assert passages == merge_passages(text, low, high)  # deterministic
    assert all(p == p.strip() and p for p in passages)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("spacing", ["single", "double"])
def test_sentences_shorter_than_the_slack_give_passages_within_bounds(seed, spacing) -> None:
    """Sentences of at most 40 words, default 80:250: every passage within bounds (but in a
    file shorter than 80 words), none cut inside a sentence, every heading with its text."""
    rnd = random.Random(seed)
    markdown = seed % 2 == 0
    text = article(rnd, rnd.randint(1, 40), markdown)
    if spacing == "double":
        text = double_spaced(text)
    passages = merge_passages(text, 80, 250)
    check_cut(text, passages, 80, 250)
    if len(words(text)) >= 80:
        assert all(80 <= len(words(p)) <= 250 for p in passages), [len(words(p)) for p in passages]
    for passage in passages:
        assert passage.rstrip("”").endswith(ENDS), passage[-80:]  # never mid-sentence
        last_line = passage.split("\n")[-1]
        assert not last_line.startswith("#"), passage  # a heading goes with what follows


def test_a_double_spaced_article_becomes_a_few_passages_not_one_a_line() -> None:
    rnd = random.Random(5)
    text = double_spaced(article(rnd, 12), width=55)
    lines = [line for line in text.split("\n") if line.strip()]
    assert len(lines) > 60
    assert len(chunk_text(text)) == len(lines)  # the paragraph rule: one passage a line
    passages = merge_passages(text, 80, 250)
    assert 2 <= len(passages) <= len(words(text)) // 80
    # a blank line inside a sentence joins the lines; one after a sentence's end stays
    first = passages[0]
    assert "\n\n" not in first or all(
        chunk.rstrip("”").endswith(ENDS) for chunk in first.split("\n\n")[:-1]
    )


def test_headings_stay_with_what_follows_and_passages_start_at_them() -> None:
    body = " ".join(["Scout the field early."] * 25)  # 100 words
    text = f"# Maize\n\n{body}\n\n## Control\n\n{body}\n\n## Storage\n\n{body}\n"
    passages = merge_passages(text, 80, 250)
    assert passages == [
        f"# Maize\n{body}\n\n## Control\n{body}",  # 203 words: merged up to the limit
        f"## Storage\n{body}",
    ]
    plain = f"{body}\n\nStorage and drying\n\n{body}\n\n{body}\n"
    assert merge_passages(plain, 80, 150) == [body, f"Storage and drying\n{body}", body]


def test_a_long_paragraph_is_split_at_sentence_ends_and_a_long_sentence_at_max() -> None:
    sentence_30 = " ".join(["word"] * 29) + " end."
    paragraph = " ".join([sentence_30] * 10)  # 300 words, one paragraph
    pieces = merge_passages(paragraph, 80, 250)
    assert [len(words(p)) for p in pieces] == [210, 90]  # the earlier passage the fuller
    assert all(p.endswith("end.") for p in pieces)
    long_sentence = " ".join(f"w{i}" for i in range(600)) + "."
    pieces = merge_passages(long_sentence, 80, 250)
    assert [len(words(p)) for p in pieces] == [250, 250, 100]


def test_short_files_stay_whole_and_empty_ones_give_nothing() -> None:
    assert merge_passages("One line.\n\nAnother line.\n", 80, 250) == ["One line.\n\nAnother line."]
    assert merge_passages("", 80, 250) == [] and merge_passages("\n \n\t\n", 80, 250) == []
    assert merge_passages("# Only a title\n", 80, 250) == ["# Only a title"]


def test_file_and_paragraph_rules() -> None:
    text = "# T\n\nOne.\n\nTwo\n\nthree.\n"
    assert PassageRule("file").chunk(text) == ["# T\nOne.\n\nTwo\nthree."]
    assert PARAGRAPHS.chunk(text) == chunk_text(text) == ["# T\nOne.", "Two", "three."]
    assert PassageRule("merged").chunk(text) == ["# T\nOne.\n\nTwo\nthree."]
    assert DEFAULT_RULE.chunk(text) == [text.rstrip()]  # blocks: the file's own text


def test_rules_are_stored_and_read_back() -> None:
    for rule in (DEFAULT_RULE, PARAGRAPHS, PassageRule("file"), PassageRule("merged", 1, 10)):
        assert parse_rule(str(rule)) == rule
    assert str(DEFAULT_RULE) == "blocks 80:250 rows 20"
    # A store pooled before rows keeps its rule: read back as it was, no row limit.
    assert parse_rule("blocks 80:250") == PassageRule("blocks", 80, 250, 0)
    assert parse_rule("blocks 80:250") != DEFAULT_RULE
    for bad in ("merged", "merged 0:10", "merged 50:20", "merged 1:9", "file 1:2", "chunks", "",
                "merged 80:250 rows 20", "blocks 80:250 rows 4", "blocks 80:250 rows x",
                "blocks 80:250 rows ", "blocks 80:250 rows 20 rows 20",
                "file rows 20"):  # fmt: skip
        assert parse_rule(bad) is None, bad
    assert parse_words("80:250") == (80, 250)
    for bad in ("80", "80-250", ":250", "80:", "-1:20", "٨٠:٢٥٠", "80:250:1", "1:99999999"):
        assert parse_words(bad) is None, bad


def test_the_recorded_rule_of_a_store_or_a_golden_pool(tmp_path) -> None:
    assert recorded_rule([], "s.db") is None
    assert recorded_rule([{"params": {"corpus": "c.jsonl", "passages": None}}], "s.db") is None
    legacy = [{"params": {"corpus": "docs"}}]  # pooled before rules were recorded
    assert recorded_rule(legacy, "s.db") == PARAGRAPHS
    later = [*legacy, {"params": {"passages": "merged 50:100"}}]
    assert recorded_rule(later, "s.db") == PassageRule("merged", 50, 100)
    with pytest.raises(InputError, match="s.db: poolings: params: passages 'nonsense'"):
        recorded_rule([{"params": {"passages": "nonsense"}}], "s.db")
    assert golden_rule(None, "g.yaml") is None
    assert golden_rule({"systems": ["bm25"], "depth": 5, "strategy": "rrf"}, "g") == PARAGRAPHS
    assert golden_rule({"params": {"passages": "file"}}, "g") == PassageRule("file")
    folder = tmp_path / "docs"
    folder.mkdir()
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("")
    assert chosen_rule(folder, None, None, "s.db") == DEFAULT_RULE
    assert chosen_rule(folder, None, PARAGRAPHS, "s.db") == PARAGRAPHS
    assert chosen_rule(folder, PARAGRAPHS, PARAGRAPHS, "s.db") == PARAGRAPHS
    assert chosen_rule(jsonl, None, PARAGRAPHS, "s.db") is None
    with pytest.raises(InputError, match="s.db holds passages cut as paragraphs, not blocks"):
        chosen_rule(folder, DEFAULT_RULE, PARAGRAPHS, "s.db")
    with pytest.raises(InputError, match="is a JSONL corpus"):
        chosen_rule(jsonl, PARAGRAPHS, None, "s.db")


def test_corpus_stats_and_the_short_passage_warning() -> None:
    stats = corpus_stats(["a b c", "a " * 142, "a " * 31, "a " * 250], 423)
    assert stats.line() == "423 files -> 4 passages, median 31 words (shortest 3, longest 250)"
    assert corpus_stats(["x"], 1).line().startswith("1 file -> 1 passage, median 1 words")
    short = corpus_stats(["ten words " * 5] * 9, 9)
    assert short_passages_warning(stats, DEFAULT_RULE) is None
    assert "--passages blocks" in (short_passages_warning(short, PARAGRAPHS) or "")
    assert "corpus.jsonl" in (short_passages_warning(short, None) or "")
    assert "a file shorter than a passage" in (short_passages_warning(short, DEFAULT_RULE) or "")


def test_a_passage_shows_its_title_once_and_headings_as_words() -> None:
    from workbench.core.display import passage_lines

    text = "# Striga, the witchweed\nStriga is a weed.\n\n## Control ##\nPull it.\n#hashtag"
    assert passage_lines("Striga, the witchweed", text) == [
        ("Striga is a weed.", False), ("", False), ("Control", True), ("Pull it.", False),
        ("#hashtag", False),
    ]  # fmt: skip
    assert passage_lines("other.md", "# A title\r\nbody") == [("A title", True), ("body", False)]
    assert passage_lines("T", "[bold]x[/bold]") == [("[bold]x[/bold]", False)]
