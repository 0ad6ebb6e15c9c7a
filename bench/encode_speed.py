"""Dense encoding speed and quality by backend: torch fp32, ONNX Runtime fp32, ONNX Runtime int8
and int8 smoothed, on the same passages in one run (prints figures; not a timed test).

Each collection's corpus is encoded in chunks; every chunk goes through all the backends in a
rotating order before the next chunk, so a change of load on a shared machine falls on all alike
(queries through each backend's `embed_queries`: fp32 for onnx-int8-smooth). Speed is passages per
second of encoding time (models loaded and graphs exported before the clock starts). Quality is
measured against torch fp32 on the same collection: the mean top-20 overlap of each query's ranking,
and the share of qrels-relevant pairs found in the top 20 ("found-relevant share", summed over the
queries that have a relevant document).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/encode_speed.py [cranfield cisi] \
        [--collections-dir ../shared/collections] [--chunk 128] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from workbench.retrieval import passage_text
from workbench.retrieval.encoder_choice import VARIANTS
from workbench.retrieval.encoders import SentenceEncoder
from workbench.retrieval.models import DEFAULT_DENSE_MODEL, resolve_model

COLLECTIONS = Path(__file__).resolve().parents[2] / "shared" / "collections"
DEPTH = 20


def load(folder: Path, limit: int | None) -> tuple[list[str], list[str], list[tuple[str, str]],
                                                   dict[str, set[str]]]:  # fmt: skip
    """(doc ids, passages, (query id, text), relevant doc ids per query) of one collection."""
    from workbench.core.model import Doc

    rows = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    rows = rows[:limit] if limit else rows
    doc_ids = [r["_id"] for r in rows]
    passages = [passage_text(Doc(r["_id"], r.get("text", ""), r.get("title", ""))) for r in rows]
    queries = [
        (r["_id"], r["text"])
        for r in map(json.loads, (folder / "queries.jsonl").open(encoding="utf-8"))
    ]
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) >= 1:
            relevant[parts[0]].add(parts[2])
    return doc_ids, passages, queries, relevant


def top_ids(doc_ids: list[str], matrix: np.ndarray, query_vectors: np.ndarray) -> list[list[str]]:
    """Each query's top `DEPTH` doc ids by dot product (ties by the lower corpus position)."""
    scores = query_vectors @ matrix.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :DEPTH]
    return [[doc_ids[i] for i in row] for row in order]


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="*", default=["cranfield", "cisi"])
    parser.add_argument("--collections-dir", type=Path, default=COLLECTIONS)
    parser.add_argument("--chunk", type=int, default=128, help="passages per interleaved chunk")
    parser.add_argument("--limit", type=int, help="only the first N passages of each corpus")
    parser.add_argument("--cache-dir", type=Path, help="exported graphs (default: a temp dir)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as temporary:
        cache = args.cache_dir or Path(temporary)
        model = resolve_model(DEFAULT_DENSE_MODEL)
        started = time.perf_counter()
        encoders = {v: SentenceEncoder(model, v, "cpu", cache) for v in VARIANTS}
        for encoder in encoders.values():
            encoder.embed(["warm up: the first batch pays for allocation"] * 4)
        print(f"model {model}")
        print(f"backends loaded (ONNX export and int8 quantisation included) in "
              f"{time.perf_counter() - started:.1f}s; {load_line()}")  # fmt: skip
        seconds: dict[str, float] = defaultdict(float)
        encoded = 0
        quality: dict[str, dict[str, tuple[float, float, float]]] = {}
        for name in args.collections:
            doc_ids, passages, queries, relevant = load(args.collections_dir / name, args.limit)
            parts: dict[str, list[np.ndarray]] = defaultdict(list)
            for number, start in enumerate(range(0, len(passages), args.chunk)):
                chunk = passages[start : start + args.chunk]
                rotation = number % len(VARIANTS)
                for variant in VARIANTS[rotation:] + VARIANTS[:rotation]:
                    begin = time.perf_counter()
                    parts[variant].append(encoders[variant].embed(chunk))
                    seconds[variant] += time.perf_counter() - begin
                encoded += len(chunk)
            print(f"{name}: {len(passages)} passages encoded by each backend; {load_line()}")
            matrices = {v: np.concatenate(parts[v]) for v in VARIANTS}
            tops = {
                v: top_ids(doc_ids, matrices[v], encoders[v].embed_queries([t for _, t in queries]))
                for v in VARIANTS
            }
            judged = [i for i, (qid, _) in enumerate(queries) if relevant.get(qid)]
            total_relevant = sum(len(relevant[queries[i][0]]) for i in judged)
            quality[name] = {}
            for variant in VARIANTS:
                pairs = zip(tops[variant], tops["torch"], strict=True)
                overlap = np.mean([len(set(a) & set(b)) / DEPTH for a, b in pairs])
                found = sum(len(set(tops[variant][i]) & relevant[queries[i][0]]) for i in judged)
                cosine = float(np.mean(np.sum(matrices[variant] * matrices["torch"], axis=1)))
                quality[name][variant] = (float(overlap), found / total_relevant, cosine)
            print(f"  {len(queries)} queries, {len(judged)} with relevant documents "
                  f"({total_relevant} relevant pairs)")  # fmt: skip

    print()
    print(f"Speed over the same {encoded} passages per backend, interleaved in chunks of "
          f"{args.chunk}:")  # fmt: skip
    print(f"{'backend':<11} {'passages/s':>10} {'vs torch':>9}")
    for variant in VARIANTS:
        rate = encoded / seconds[variant]
        speedup = seconds["torch"] / seconds[variant]
        print(f"{variant:<11} {rate:>10.1f} {speedup:>8.2f}x")
    print()
    print(f"Quality against torch fp32 (top-{DEPTH}):")
    print(f"{'collection':<11} {'backend':<11} {'overlap':>8} {'found-rel':>10} {'cosine':>8}")
    for name, rows in quality.items():
        for variant, (overlap, found, cosine) in rows.items():
            print(f"{name:<11} {variant:<11} {overlap:>8.3f} {found:>10.3f} {cosine:>8.4f}")
    print(load_line())


if __name__ == "__main__":
    main()
