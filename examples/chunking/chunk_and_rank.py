"""A RAG system's own chunker and retriever, as the docs' worked example (docs/chunks.md) uses
them: each .txt/.md file of a folder cut into windows of N words (exact spans: the chunks file
records each window's offsets), and BM25 over those windows, written as a TREC run.

    python examples/chunking/chunk_and_rank.py FOLDER --words 128 --queries queries.jsonl \
        --chunks chunks-128.jsonl --run bm25-128.run
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from workbench.core.model import Doc
from workbench.formats import read_queries_any, write_run
from workbench.formats.textfolder import folder_texts
from workbench.retrieval.bm25 import BM25Retriever

WORD = re.compile(r"\S+")


def windows(text: str, words: int) -> list[tuple[int, int]]:
    """[start, end) of each run of `words` words of `text` (the last may be shorter)."""
    spans = [m.span() for m in WORD.finditer(text)]
    return [(spans[i][0], spans[min(i + words, len(spans)) - 1][1])
            for i in range(0, len(spans), words)]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--words", type=int, required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--chunks", required=True, help="the chunks JSONL to write")
    parser.add_argument("--run", required=True, help="the TREC run to write")
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()
    texts, _ = folder_texts(args.folder)
    docs: list[Doc] = []
    with open(args.chunks, "w", encoding="utf-8") as out:
        for source, text in texts.items():
            for n, (start, end) in enumerate(windows(text, args.words), 1):
                chunk_id = f"w{args.words}:{source}:{n}"
                out.write(json.dumps({"_id": chunk_id, "source": source, "start": start,
                                      "end": end}) + "\n")  # fmt: skip
                docs.append(Doc(chunk_id, text[start:end]))
    retriever = BM25Retriever(docs, cache_dir=Path(args.run).parent / ".bm25-cache")
    run = retriever.search(read_queries_any(args.queries), args.depth)
    write_run(args.run, run, tag=f"bm25-w{args.words}")
    print(f"{len(docs)} chunks of {args.words} words -> {args.chunks}, run -> {args.run}")


if __name__ == "__main__":
    main()
