"""`workbench pool` run in process on a collection small enough to reason about by hand: three
topics of ten passages with distinct word mixes (`make_collection`), run files written from
(query, doc, score) lines (`write_run_file`), and the command itself (`pool_cli`)."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.cli import main

TOPICS = {
    "maize": "maize armyworm larvae leaves whorl scouting",
    "dairy": "dairy milk cow udder mastitis hygiene",
    "storage": "grain storage weevil aflatoxin hermetic bags",
}


def make_collection(folder: Path, twins: bool = False) -> tuple[Path, Path]:
    """30 passages, 10 per topic, each with a distinct word mix; queries one per topic."""
    docs = []
    for topic, words in TOPICS.items():
        vocab = words.split()
        for i in range(10):
            text = " ".join(vocab[: 1 + i % len(vocab)]) + f" note{i} {topic} item {i}."
            docs.append({"_id": f"{topic}{i}", "title": topic, "text": text})
    if twins:  # a re-ingested copy of maize0: same words, other case and punctuation
        docs.append({"_id": "maize0-copy", "title": "maize", "text": docs[0]["text"].upper()})
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    queries = folder / "queries.jsonl"
    queries.write_text(
        "".join(
            json.dumps({"_id": f"q_{t}", "text": f"{t} {w.split()[1]}"}) + "\n"
            for t, w in TOPICS.items()
        ),
        encoding="utf-8",
    )
    return corpus, queries


def write_run_file(path: Path, tag: str, lines: list[tuple[str, str, float]]) -> Path:
    """A TREC run file of `lines` in their order (ranks from 1), every line tagged `tag`."""
    path.write_text(
        "".join(f"{q} Q0 {d} {i} {s} {tag}\n" for i, (q, d, s) in enumerate(lines, 1)),
        encoding="utf-8",
    )
    return path


def pool_cli(*args: str | Path) -> int:
    """`workbench pool args` in this process; its exit code."""
    return main(["pool", *map(str, args)])
