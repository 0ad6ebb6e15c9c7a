"""File formats, read strictly and written atomically: TREC qrels and runs, BEIR JSONL, text
folders and golden.yaml. Every reader reports all problems at once as `path:line: message`.

The names below are imported from their modules when first used, so that reading a TREC file
does not load YAML or the BEIR reader (`workbench eval` starts fast)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.core.model import Doc, Qrels, Query
    from workbench.formats.beir import read_corpus, read_queries
    from workbench.formats.golden import (
        Golden,
        expand_aliases,
        golden_text,
        read_golden,
        write_golden,
    )
    from workbench.formats.paragraphs import chunk_text
    from workbench.formats.passages import PassageRule
    from workbench.formats.textfolder import read_text_folder
    from workbench.formats.trec import qrels_text, read_qrels, read_run, write_qrels, write_run

_HOME = {
    **dict.fromkeys(("read_corpus", "read_queries"), "beir"),
    **dict.fromkeys(
        ("Golden", "expand_aliases", "golden_text", "read_golden", "write_golden"),
        "golden",
    ),
    "chunk_text": "paragraphs",
    "read_text_folder": "textfolder",
    **dict.fromkeys(
        ("qrels_text", "read_qrels", "read_run", "write_qrels", "write_run"), "trec"
    ),
}


def __getattr__(name: str) -> Any:
    """A format's name, from its module (imported on first use)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'workbench.formats' has no attribute {name!r}")
    return getattr(importlib.import_module(f"workbench.formats.{home}"), name)


__all__ = [
    "Golden",
    "chunk_text",
    "expand_aliases",
    "golden_text",
    "load_judgments",
    "qrels_text",
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


def read_corpus_any(
    path: str | os.PathLike[str], passages: PassageRule | None = None
) -> list[Doc]:
    """A folder is a text folder (.txt/.md files cut by `passages`, by default
    `passages.DEFAULT_RULE`); a file is BEIR corpus JSONL."""
    from workbench.formats.beir import read_corpus
    from workbench.formats.passages import DEFAULT_RULE
    from workbench.formats.textfolder import read_text_folder

    if Path(path).is_dir():
        return read_text_folder(path, passages or DEFAULT_RULE)
    return read_corpus(path)


def read_queries_any(path: str | os.PathLike[str]) -> list[Query]:
    """A .yaml/.yml file is a golden.yaml (its queries); anything else is queries JSONL."""
    if str(path).lower().endswith((".yaml", ".yml")):
        from workbench.formats.golden import read_golden

        return read_golden(path).queries
    from workbench.formats.beir import read_queries

    return read_queries(path)


def load_judgments(path: str | os.PathLike[str]) -> tuple[Qrels, Golden | None]:
    """A golden.yaml (.yaml/.yml; its qrels with aliases expanded, matching the TREC export)
    or TREC qrels (YAML is not loaded for them)."""
    if str(path).lower().endswith((".yaml", ".yml")):
        from workbench.formats.golden import read_golden

        golden = read_golden(path)
        return golden.expanded_qrels(), golden
    from workbench.formats.trec import read_qrels

    return read_qrels(path), None
