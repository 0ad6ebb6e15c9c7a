"""A seeded synthetic collection of any size, for scale benchmarks (not a test collection).

Words are pseudo-words drawn from a Zipf vocabulary (frequency ~ 1/rank^1.1), so term
statistics look like text's: a few very common words and a long tail. Passages are 30-90
words; about 1 in 200 is a re-ingested copy of an earlier one (case and punctuation changed),
so identical-passage folding has work to do. Queries are 2-5 words of the mid-frequency band.
Also writes, on request, a TREC run (each query x depth docs) and random embeddings (.npy +
.ids) for the corpus and the queries.

    .venv/bin/python bench/synthetic.py OUT_DIR --docs 100000 --queries 500
        [--run-depth 1000] [--dim 64] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["an", "el", "or", "us", "ix"]
VOCABULARY = 50_000
ZIPF = 1.1
COPY_EVERY = 200


def vocabulary(rng: np.random.Generator, size: int = VOCABULARY) -> list[str]:
    """`size` distinct pseudo-words of 2-4 syllables."""
    words: dict[str, None] = {}
    while len(words) < size:
        count = int(rng.integers(2, 5))
        words["".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), count))] = None
    return list(words)


def zipf_weights(size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** ZIPF
    return weights / weights.sum()


def write_corpus(path: Path, docs: int, seed: int) -> list[str]:
    """BEIR corpus JSONL of `docs` passages; returns the doc ids in order."""
    rng = np.random.default_rng(seed)
    words = np.array(vocabulary(rng))
    weights = zipf_weights(len(words))
    ids: list[str] = []
    block = 10_000
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, docs, block):
            count = min(block, docs - start)
            lengths = rng.integers(30, 91, count)
            drawn = words[rng.choice(len(words), size=int(lengths.sum()), p=weights)]
            offset = 0
            lines = []
            texts: list[str] = []
            for i, length in enumerate(lengths.tolist()):
                doc_number = start + i
                text = " ".join(drawn[offset : offset + length].tolist())
                offset += length
                if doc_number % COPY_EVERY == COPY_EVERY - 1 and texts:
                    text = texts[int(rng.integers(0, len(texts)))].upper() + " ."
                texts.append(text)
                doc_id = f"d{doc_number:07d}"
                ids.append(doc_id)
                lines.append(json.dumps({"_id": doc_id, "title": "", "text": text}))
            out.write("\n".join(lines) + "\n")
    return ids


def write_queries(path: Path, queries: int, seed: int) -> list[str]:
    """Queries JSONL: 2-5 words from the vocabulary's ranks 50-5,000."""
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    rng = np.random.default_rng(seed + 1)
    ids = [f"q{i}" for i in range(queries)]
    with path.open("w", encoding="utf-8") as out:
        for qid in ids:
            picks = rng.integers(50, 5_000, int(rng.integers(2, 6)))
            out.write(json.dumps({"_id": qid, "text": " ".join(words[i] for i in picks)}) + "\n")
    return ids


def write_run(path: Path, query_ids: list[str], doc_ids: list[str], depth: int, seed: int) -> None:
    """A TREC run: each query's `depth` random docs with descending scores."""
    rng = np.random.default_rng(seed + 2)
    with path.open("w", encoding="utf-8") as out:
        for qid in query_ids:
            picks = rng.choice(len(doc_ids), size=min(depth, len(doc_ids)), replace=False)
            out.write(
                "".join(
                    f"{qid} Q0 {doc_ids[d]} {rank} {depth - rank + 1:.4f} synth\n"
                    for rank, d in enumerate(picks.tolist(), start=1)
                )
            )


def write_vectors(stem: Path, ids: list[str], dim: int, seed: int) -> None:
    """`stem`.npy (float32, one row per id) and `stem`.ids (one id per line)."""
    rng = np.random.default_rng(seed)
    np.save(stem.with_suffix(".npy"), rng.standard_normal((len(ids), dim), dtype=np.float32))
    stem.with_suffix(".ids").write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--run-depth", type=int, default=0, help="also write run.trec")
    parser.add_argument("--dim", type=int, default=0, help="also write doc/query vectors")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    doc_ids = write_corpus(args.out / "corpus.jsonl", args.docs, args.seed)
    query_ids = write_queries(args.out / "queries.jsonl", args.queries, args.seed)
    if args.run_depth:
        write_run(args.out / "run.trec", query_ids, doc_ids, args.run_depth, args.seed)
    if args.dim:
        write_vectors(args.out / "doc_vectors", doc_ids, args.dim, args.seed + 3)
        write_vectors(args.out / "query_vectors", query_ids, args.dim, args.seed + 4)
    return 0


if __name__ == "__main__":
    sys.exit(main())
