"""Seeded random studies for the adaptive queue's tests: one in memory for the core (`study`,
`session_for`, `answer`), one as the files `workbench pool` reads for the commands and the app
(`make_study`, `pool`). In both a query's relevant passages share its words, so the systems and
the queue's similarities find them as real ones would, noisily."""

from __future__ import annotations

import json
import random
from pathlib import Path

from workbench.core.adaptive import AdaptiveSession, PolicyConfig, build_frame

WORDS = [f"w{i}" for i in range(300)]


def study(seed: int, queries: int = 6, corpus: int = 600, systems: int = 2):
    """A random corpus whose relevant passages share a topic's words, systems that rank
    them noisily, and the truth."""
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(corpus)]
    tokens = {d: rng.choices(WORDS, k=30) for d in ids}
    query_tokens, truth, rankings = {}, {}, {f"s{k}": {} for k in range(systems)}
    for q in range(queries):
        qid = f"q{q}"
        topic = rng.sample(WORDS, 5)
        relevant = set(rng.sample(ids, rng.randint(3, 25)))
        for d in relevant:
            tokens[d] = tokens[d][:20] + rng.choices(topic, k=10)
        query_tokens[qid] = topic
        truth[qid] = {d: rng.choice([1, 2, 3]) for d in relevant}
        for system in rankings:
            noisy = {d: (3.0 if d in relevant else 0.0) + rng.gauss(0, 1.5) for d in ids}
            rankings[system][qid] = sorted(ids, key=lambda d: -noisy[d])[:1000]
    return ids, tokens, query_tokens, truth, rankings


def session_for(seed: int, config: PolicyConfig, **kwargs):
    """An adaptive session over `study(seed, **kwargs)`; with the truth and the rankings."""
    ids, tokens, query_tokens, truth, rankings = study(seed, **kwargs)
    frames = [
        build_frame(q, {s: r[q] for s, r in rankings.items()}, ids, seed) for q in query_tokens
    ]
    return AdaptiveSession(frames, tokens, query_tokens, len(ids), config), truth, rankings


def answer(truth):
    """An oracle that grades from the truth (0 for a passage it does not hold)."""
    return lambda q, d: truth.get(q, {}).get(d, 0)


QUERIES = 4
CORPUS = 400
"""The size of `make_study`'s collection: queries, and passages in its corpus."""


def make_study(tmp_path: Path) -> dict:
    """corpus.jsonl, queries.jsonl, two run files (1000 deep) and qrels, from a seeded random
    collection whose relevant passages share their query's words."""
    rng = random.Random(42)
    words = [f"w{i}" for i in range(200)]
    ids = [f"d{i}" for i in range(CORPUS)]
    text = {d: rng.choices(words, k=25) for d in ids}
    qrels, runs = {}, {"bm25": [], "dense": []}
    queries = []
    for q in range(QUERIES):
        qid = f"q{q}"
        topic = rng.sample(words, 4)
        queries.append({"_id": qid, "text": " ".join(topic)})
        relevant = rng.sample(ids, rng.randint(4, 15))
        for d in relevant:
            text[d] = text[d][:15] + rng.choices(topic, k=10)
        qrels[qid] = {d: rng.choice([1, 2, 3]) for d in relevant}
        for system in runs:
            score = {d: (2.5 if d in relevant else 0.0) + rng.gauss(0, 1.5) for d in ids}
            for rank, d in enumerate(sorted(ids, key=lambda d: -score[d]), start=1):
                runs[system].append(f"{qid} Q0 {d} {rank} {score[d]:.4f} {system}\n")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"_id": d, "text": " ".join(t)}) + "\n" for d, t in text.items())
    )
    query_file = tmp_path / "queries.jsonl"
    query_file.write_text("".join(json.dumps(q) + "\n" for q in queries))
    run_paths = []
    for system, lines in runs.items():
        path = tmp_path / f"{system}.run"
        path.write_text("".join(lines))
        run_paths.append(path)
    qrels_path = tmp_path / "qrels.tsv"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    return {"corpus": corpus, "queries": query_file, "runs": run_paths, "qrels": qrels_path,
            "db": tmp_path / "study.db", "truth": qrels}  # fmt: skip


def pool(study: dict, *extra: str) -> int:
    """`workbench pool --policy adaptive` over the study's run files (no system of its own)."""
    from workbench.cli import main

    args = ["pool", "--corpus", str(study["corpus"]), "--queries", str(study["queries"]),
            "--db", str(study["db"]), "--systems", "", "--policy", "adaptive", *extra]  # fmt: skip
    for run in study["runs"]:
        args += ["--run", str(run)]
    return main(args)
