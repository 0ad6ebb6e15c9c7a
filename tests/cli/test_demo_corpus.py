"""The embedded demo corpus: its size, stable ids, queries and deliberate features."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from workbench.core.model import normalize_passage

pytest.importorskip(
    "workbench.formats.textfolder",
    reason="workbench.formats (text folder reader) is not written yet",
)
from workbench.formats import chunk_text, read_queries, read_text_folder  # noqa: E402
from workbench.formats.passages import PARAGRAPHS  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
DOCS = DEMO / "docs"
HERMETIC_COPIES = (
    "storage/hermetic-bags.md",
    "storage/hermetic-bags-copy.md",
    "archive/HERMETIC_BAGS_old.md",
)
ID = re.compile(r"(?P<path>[a-z]+/[A-Za-z_-]+\.md)#(?P<n>[1-9][0-9]*)")


@pytest.fixture(scope="module")
def passages():
    """The demo is written a paragraph a passage: `workbench demo` pools it so (PARAGRAPHS)."""
    return read_text_folder(DOCS, PARAGRAPHS)


@pytest.fixture(scope="module")
def queries():
    return read_queries(DEMO / "queries.jsonl")


def body_words(text: str) -> int:
    """Words outside heading lines: what the reader sees as the paragraph's content."""
    return sum(len(line.split()) for line in text.splitlines() if not line.lstrip().startswith("#"))


def by_file(passages) -> dict[str, list]:
    files: dict[str, list] = defaultdict(list)
    for doc in passages:
        files[doc.doc_id.split("#")[0]].append(doc)
    return files


def test_passage_and_document_counts(passages):
    files = by_file(passages)
    assert 150 <= len(passages) <= 300
    assert 20 <= len(files) <= 40
    # Golden files refer to these ids: a change here means the corpus was edited, not extended.
    assert len(passages) == 175
    assert len(files) == 31


def test_every_file_starts_with_a_title():
    for path in sorted(DOCS.rglob("*.md")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# ") and len(first) > 3, path


def test_passage_lengths(passages):
    lengths = {doc.doc_id: body_words(doc.text) for doc in passages}
    too_short_or_long = {i: n for i, n in lengths.items() if not 40 <= n <= 120}
    assert not too_short_or_long


def test_ids_are_path_and_paragraph_number(passages):
    for path, docs in by_file(passages).items():
        numbers = []
        for doc in docs:
            match = ID.fullmatch(doc.doc_id)
            assert match and match["path"] == path, doc.doc_id
            numbers.append(int(match["n"]))
        assert numbers == list(range(1, len(docs) + 1)), path
        assert [d.text for d in docs] == chunk_text((DOCS / path).read_text(encoding="utf-8"))


def test_ids_are_stable(passages):
    again = read_text_folder(DOCS, PARAGRAPHS)
    assert [(d.doc_id, d.text) for d in again] == [(d.doc_id, d.text) for d in passages]
    texts = {d.doc_id: d.text for d in passages}
    assert texts["storage/hermetic-bags.md#1"].startswith("# Storing grain in hermetic bags\n")
    assert texts["dairy/mastitis.md#2"].startswith("## Clinical mastitis\n")
    assert texts["soil/water-harvesting.md#5"].startswith("## Farm ponds\n")
    assert "maize/fall-armyworm-identification.md#8" not in texts


def test_queries(queries):
    assert 10 <= len(queries) <= 15
    assert len({q.query_id for q in queries}) == len(queries)
    for query in queries:
        assert query.text.strip(), query.query_id
        sentences = re.findall(r"[.!?](?:\s|$)", query.narrative)
        assert 2 <= len(sentences) <= 3, query.query_id


def test_hermetic_copies_normalize_equal(passages):
    files = by_file(passages)
    original, copy, old = ([d.text for d in files[name]] for name in HERMETIC_COPIES)
    assert copy == original
    assert old != original  # the archive copy differs as typed ...
    assert [normalize_passage(t) for t in old] == [normalize_passage(t) for t in original]


def test_only_the_hermetic_copies_are_duplicates(passages):
    groups: dict[str, list[str]] = defaultdict(list)
    for doc in passages:
        groups[normalize_passage(doc.text)].append(doc.doc_id)
    duplicated = sorted(sorted(ids) for ids in groups.values() if len(ids) > 1)
    assert len(duplicated) == 6
    for n, ids in enumerate(duplicated, 1):
        assert ids == [f"{name}#{n}" for name in sorted(HERMETIC_COPIES)]


def test_markup_looking_passage_is_literal(passages):
    marked = [d for d in passages if "[bold]Warning[/bold]" in d.text]
    assert [d.doc_id for d in marked] == ["poultry/biosecurity.md#5"]
    assert "[link=http://example.org]" in marked[0].text


def test_swahili_and_unicode(passages):
    swahili = [d.doc_id for d in passages if "Muhtasari kwa Kiswahili" in d.text]
    assert len(swahili) >= 3
    non_ascii = [d.doc_id for d in passages if not d.text.isascii()]
    assert len(non_ascii) >= 3
