"""File formats, read strictly and written atomically: TREC qrels and runs, BEIR JSONL, text
folders and golden.yaml. Every reader reports all problems at once as `path:line: message`."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.core.model import Doc, Query
from workbench.formats.beir import read_corpus, read_queries
from workbench.formats.golden import (
    Golden,
    expand_aliases,
    golden_text,
    load_judgments,
    read_golden,
    write_golden,
)
from workbench.formats.textfolder import chunk_text, read_text_folder
from workbench.formats.trec import read_qrels, read_run, write_qrels, write_run

__all__ = [
    "Golden",
    "chunk_text",
    "expand_aliases",
    "golden_text",
    "load_judgments",
    "read_corpus",
    "read_corpus_any",
    "read_golden",
    "read_qrels",
    "read_queries",
    "read_queries_any",
    "read_run",
    "read_text_folder",
    "write_golden",
    "write_qrels",
    "write_run",
]


def read_corpus_any(path: str | os.PathLike[str]) -> list[Doc]:
    """A folder is a text folder (.txt/.md passages); a file is BEIR corpus JSONL."""
    return read_text_folder(path) if Path(path).is_dir() else read_corpus(path)


def read_queries_any(path: str | os.PathLike[str]) -> list[Query]:
    """A .yaml/.yml file is a golden.yaml (its queries); anything else is queries JSONL."""
    if str(path).lower().endswith((".yaml", ".yml")):
        return read_golden(path).queries
    return read_queries(path)
