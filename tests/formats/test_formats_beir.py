"""BEIR JSONL corpus and queries: strict, every problem with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.errors import InputError
from workbench.core.model import Doc, Query
from workbench.formats import read_corpus, read_corpus_any, read_queries, read_queries_any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats"


def problems_of(call, *args) -> list[str]:
    with pytest.raises(InputError) as info:
        call(*args)
    return info.value.problems


def test_corpus_reads_titles_empty_text_metadata_and_any_script():
    docs = read_corpus(FIXTURES / "corpus_ok.jsonl")
    assert docs == [
        Doc("d1", "Fall armyworm larvae feed in the maize whorl.", "Fall armyworm"),
        Doc("d2", "", "A title-only document"),
        Doc("3", "Ọmọ náà ń jẹun. 玉米 ölçü", ""),
    ]
    assert read_corpus_any(FIXTURES / "corpus_ok.jsonl") == docs


def test_corpus_reports_every_problem():
    path = FIXTURES / "corpus_bad.jsonl"
    problems = problems_of(read_corpus, path)
    assert problems == [
        f"{path}:2: duplicate doc id 'd1' (first on line 1)",
        f"{path}:3: missing '_id'",
        f"{path}:4: missing 'text'",
        f"{path}:5: 'text' must be a string, found 5",
        f"{path}:6: unknown key(s) 'url' (allowed: ['_id', 'metadata', 'text', 'title'])",
        problems[5],
        f"{path}:8: expected a JSON object, found list",
        f"{path}:9: '_id' must be a string, found 1.5",
        f"{path}:10: '_id' 'has space' must be non-empty without spaces",
    ]
    assert problems[5].startswith(f"{path}:7: bad JSON (")


def test_queries_read_narrative_from_field_or_metadata():
    queries = read_queries(FIXTURES / "queries_ok.jsonl")
    assert queries == [
        Query("q1", "fall armyworm control"),
        Query("q2", "aflatoxin in stored maize", "Storage practices only."),
        Query("q3", "milk yield", "Dairy cows, not goats."),
    ]
    assert read_queries_any(FIXTURES / "queries_ok.jsonl") == queries


def test_queries_report_every_problem():
    path = FIXTURES / "queries_bad.jsonl"
    assert problems_of(read_queries, path) == [
        f"{path}:2: duplicate query id 'q1' (first on line 1)",
        f"{path}:3: query 'q2': 'text' is empty",
        f"{path}:4: missing 'text'",
        f"{path}:5: 'narrative' must be a string, found null",
    ]


def test_empty_jsonl_is_an_error():
    path = FIXTURES / "empty.txt"
    assert problems_of(read_corpus, path) == [
        f"{path}: no doc records (expected one JSON object per line)"
    ]


def test_queries_any_reads_golden_yaml():
    queries = read_queries_any(Path(__file__).parents[2] / "golden" / "seed-example.yaml")
    assert [q.query_id for q in queries] == ["q_faw", "q_store", "q_milk", "q_broad"]
    assert all(q.text and q.narrative for q in queries)


# -- hostile lines: each once gave a traceback, or a string no file or terminal can take ---------


def test_hostile_json_lines_are_problems_naming_their_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    lines = [
        '{"_id": "ok", "text": "fine"}',
        '{"_id": "deep", "text": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"_id": ' + "1" * 5000 + ', "text": "x"}',
        '{"_id": "a", "text": "\\ud800"}',
        '{"_id": "b", "title": "x\\udfff", "text": "t"}',
        '{"_id": "c\\ud800", "text": "t"}',
        '{"_id": "d", "text": "t", "metadata": {"k": ["\\uDC00"]}}',
        '{"_id": "e", "_id": "f", "text": "t"}',
        '{"_id": "g\\u001b[31m", "text": "t"}',
        '{"_id": "h\\u202e", "text": "t"}',
        '{"_id": NaN, "text": "t"}',
        '{"_id": "i", "text": "t", "metadata": {"a": 1, "a": 2}}',
        '{"_id": "j", "text": "\\ud83d\\ude00 a pair is fine"}',
        '{"_id": "k", "text": ' + '"x' * 1 + "y" * 1_000_000 + '", "title": [1, 2]}',
    ]
    path.write_text("\n".join(lines) + "\n")
    assert problems_of(read_corpus, path) == [
        f"{path}:2: bad JSON (nested too deeply)",
        f"{path}:3: bad JSON (a number with too many digits)",
        f"{path}:4: 'text': not valid Unicode (lone surrogate)",
        f"{path}:5: 'title': not valid Unicode (lone surrogate)",
        f"{path}:6: '_id': not valid Unicode (lone surrogate)",
        f"{path}:7: 'metadata'.'k'[0]: not valid Unicode (lone surrogate)",
        f"{path}:8: duplicate key '_id'",
        f"{path}:9: '_id' 'g\\x1b[31m' has a control character",
        f"{path}:10: '_id' 'h\\u202e' has a control character",
        f"{path}:11: '_id' must be a string, found NaN",
        f"{path}:12: duplicate key 'a'",
        f"{path}:14: 'text' is 1,000,001 characters long (at most 1,000,000)",  # the bound
        f"{path}:14: 'title' must be a string, found a list",
    ]


def test_queries_refuse_surrogates_in_every_field(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_text(
        '{"_id": "q1", "text": "t", "narrative": "\\ud800"}\n'
        '{"_id": "q2", "text": "t", "metadata": {"narrative": "\\ud800"}}\n'
        '{"_id": "q3", "text": "t", "\\ud800": 1}\n'
        '{"_id": "q4", "text": "t\\u0000 NUL in text is kept"}\n'
    )
    assert problems_of(read_queries, path) == [
        f"{path}:1: 'narrative': not valid Unicode (lone surrogate)",
        f"{path}:2: 'metadata'.'narrative': not valid Unicode (lone surrogate)",
        f"{path}:3: key '\\ud800': not valid Unicode (lone surrogate)",
    ]
