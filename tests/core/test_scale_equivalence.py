"""The fast paths for large corpora give exactly what the plain code gave: the outside-pool
sample (same seed, same draws), passage folding and the tokenizer (same strings)."""

from __future__ import annotations

import random
import sys
import unicodedata
from pathlib import Path

import pytest

from workbench.core.model import PoolEntry, normalize_passage
from workbench.core.pool.sampling import (
    ALLOC_POWER,
    REST,
    allocate,
    best_ranks,
    interleaved_positions,
    sample_outside_pool,
    stratum_bands,
)
from workbench.core.random_streams import frame_random
from workbench.core.tokenize import _pattern, tokenize


def plain_sample(rankings, pool, corpus_ids, n, seed, *, depth=20, rank_depth=1000):
    """The sampler as it was: a walk over the whole corpus for every query."""
    bands = stratum_bands(depth, rank_depth)
    corpus_order = list(dict.fromkeys(corpus_ids))
    entries = []
    for query_id in pool:
        pooled = pool[query_id]
        best = best_ranks(rankings, query_id)
        members = {name: [] for name, _, _ in bands}
        members[REST] = []
        rank_sum = {name: 0.0 for name in members}
        for doc_id in corpus_order:
            if doc_id in pooled:
                continue
            rank = best.get(doc_id)
            name = REST
            if rank is not None and rank <= rank_depth:
                name = next((b for b, _, last in bands if rank <= last), REST)
            members[name].append(doc_id)
            prior_rank = rank if rank is not None and name != REST else 2 * rank_depth
            rank_sum[name] += 1.0 / max(prior_rank, 1)
        names = [name for name in members if members[name]]
        sizes = [len(members[name]) for name in names]
        weights = [len(members[m]) * (rank_sum[m] / len(members[m])) ** ALLOC_POWER for m in names]
        counts = allocate(sizes, weights, n)
        rng = frame_random(seed, query_id)
        drawn = []
        for name, size, count in zip(names, sizes, counts, strict=True):
            if count:
                drawn.extend((d, name, count / size) for d in rng.sample(members[name], count))
        rng.shuffle(drawn)
        positions = interleaved_positions(len(pooled), len(drawn))
        for (doc_id, name, prob), position in zip(drawn, positions, strict=True):
            entries.append(PoolEntry(query_id, doc_id, position, stratum=name, inclusion_prob=prob))
    return entries


@pytest.mark.parametrize("case", range(40))
def test_the_sample_is_the_plain_walks_draw_for_draw(case):
    rng = random.Random(case)
    corpus = [f"d{i}" for i in range(rng.choice([5, 40, 300, 3000]))]
    frame = corpus + rng.sample(corpus, min(5, len(corpus)))  # repeats keep their first place
    rank_depth = rng.choice([10, 50, 400])
    depth = rng.choice([1, 5, 20])
    rankings = {
        system: {
            q: rng.sample(
                corpus + ["elsewhere"], min(len(corpus), rng.randrange(0, 2 * rank_depth))
            )
            for q in ("q1", "q2", "q3")
        }
        for system in ("a", "b")
    }
    pool = {
        q: {d for r in rankings.values() for d in r[q][:depth]} | {"not-in-frame"}
        for q in ("q1", "q2", "q3")
    }
    n = rng.choice([0, 3, 25, 10_000])
    seed = rng.randrange(100)
    fast = sample_outside_pool(rankings, pool, frame, n, seed, depth=depth, rank_depth=rank_depth)
    plain = plain_sample(rankings, pool, frame, n, seed, depth=depth, rank_depth=rank_depth)
    assert fast == plain


def plain_normalize(text: str) -> str:
    folded = "".join(
        ch if ch.isalnum() or unicodedata.category(ch)[0] == "M" else " "
        for ch in unicodedata.normalize("NFC", text).casefold()
    )
    return " ".join(folded.split())


def plain_tokenize(text: str) -> list[str]:
    return _pattern().findall(
        unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    )


def test_folding_and_tokens_match_the_plain_code_across_unicode():
    """Every codepoint below U+3000 (scripts with marks, ASCII's fast path), then every 61st."""
    codepoints = [*range(0x3000), *range(0x3000, sys.maxunicode + 1, 61)]
    for start in range(0, len(codepoints), 4096):
        text = " ".join(f"a{chr(cp)}b{chr(cp)}" for cp in codepoints[start : start + 4096])
        assert normalize_passage(text) == plain_normalize(text)
        assert tokenize(text) == plain_tokenize(text)
    rng = random.Random(0)
    for _ in range(2000):
        text = "".join(
            chr(rng.choice([rng.randrange(128), rng.randrange(0x3000), rng.randrange(0x110000)]))
            for _ in range(rng.randrange(30))
        )
        ascii_text = "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(30)))
        for t in (text, ascii_text, ascii_text.upper()):
            assert normalize_passage(t) == plain_normalize(t)
            assert tokenize(t) == plain_tokenize(t)


def test_auto_is_rank_bm25_below_1000_passages_and_bm25s_from_there(tmp_path):
    from workbench.core.model import Doc
    from workbench.retrieval.bm25 import AUTO_BM25S_FROM, BM25Retriever

    docs = [Doc(f"d{i}", f"maize note{i % 7} pest{i % 13}") for i in range(AUTO_BM25S_FROM)]
    small = BM25Retriever(docs[:-1], backend="auto", cache_dir=tmp_path)
    large = BM25Retriever(docs, backend="auto", cache_dir=tmp_path)
    assert (small.backend, large.backend) == ("rank_bm25", "bm25s")
    explicit = BM25Retriever(docs[:-1], backend="bm25s", cache_dir=tmp_path)
    assert explicit.backend == "bm25s"
    assert (explicit.scores("maize pest3") == small.scores("maize pest3")).all()


def test_identical_passage_groups_are_cached_by_corpus(tmp_path, monkeypatch):
    import workbench.flows.twins as twins_module
    from workbench.core.model import Doc
    from workbench.flows.twins import corpus_twins

    docs = [Doc("a", "Maize pests."), Doc("b", "maize, PESTS"), Doc("c", "dairy"), Doc("d", "")]
    assert corpus_twins(docs, tmp_path / "small") == {"a": ("a", "b"), "b": ("a", "b")}
    assert not (tmp_path / "small").exists()  # a small corpus folds again: no cache written
    monkeypatch.setattr(twins_module, "TWINS_CACHE_FROM", 0)
    first = corpus_twins(docs, tmp_path)
    assert first == {"a": ("a", "b"), "b": ("a", "b")}
    assert [p.name.startswith("twins-") for p in tmp_path.iterdir()].count(True) == 2
    assert corpus_twins(docs, tmp_path) == first
    assert corpus_twins([*docs, Doc("e", "Dairy!")], tmp_path)["e"] == ("c", "e")


def test_a_forged_groups_entry_folds_nothing_that_differs(tmp_path, monkeypatch):
    """An entry whose manifest was rewritten to match is still checked group by group."""
    import json

    import workbench.flows.twins as twins_module
    from workbench.core.model import Doc
    from workbench.flows.twins import corpus_twins
    from workbench.retrieval.cache import store_entry

    monkeypatch.setattr(twins_module, "TWINS_CACHE_FROM", 0)
    docs = [Doc("a", "Maize pests."), Doc("b", "maize, PESTS"), Doc("c", "dairy")]
    corpus_twins(docs, tmp_path)
    [entry] = [p for p in tmp_path.iterdir() if p.suffix == ".json" and p.name.count(".") == 1]
    manifest = json.loads(Path(f"{entry}.json").read_text())
    store_entry(entry, json.dumps([["a", "c"]]).encode(), manifest["key"])
    assert corpus_twins(docs, tmp_path) == {"a": ("a", "b"), "b": ("a", "b")}


def test_a_cache_folder_that_cannot_be_written_is_skipped(tmp_path, monkeypatch):
    import workbench.flows.twins as twins_module
    from workbench.core.model import Doc
    from workbench.flows.twins import corpus_twins

    monkeypatch.setattr(twins_module, "TWINS_CACHE_FROM", 0)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder would be")
    docs = [Doc("a", "Maize pests."), Doc("b", "maize, PESTS")]
    assert corpus_twins(docs, blocker / "inner") == {"a": ("a", "b"), "b": ("a", "b")}


def plain_frame(query_id, rankings, corpus_ids, seed, depth=100, reserve=300, exclude=()):  # type: ignore[no-untyped-def]
    """The adaptive frame as it was: the rest listed in full, then walked, per query."""
    import math

    import numpy as np

    from workbench.core.adaptive.frame import Band, QueryFrame, _prior, fair_order

    systems = sorted(rankings)
    best: dict[str, dict[str, int]] = {}
    for system in systems:
        for rank, doc_id in enumerate(rankings[system][:depth], start=1):
            if doc_id not in exclude:
                best.setdefault(doc_id, {}).setdefault(system, rank)
    fused = {d: sum(1.0 / (60 + r) for r in ranks.values()) for d, ranks in best.items()}
    candidates = sorted(best, key=lambda d: (-fused[d], d))
    rest = [d for d in dict.fromkeys(corpus_ids) if d not in set(candidates) and d not in exclude]
    ranked = best_ranks({s: {query_id: r} for s, r in rankings.items()}, query_id)
    deepest = max((len(r) for r in rankings.values()), default=0)
    limits = stratum_bands(depth, max(deepest, depth + 1))
    members = {name: [] for name, _, _ in limits}
    members[REST] = []
    prior = dict.fromkeys(members, 0.0)
    for doc_id in rest:
        rank = ranked.get(doc_id)
        name = next((b for b, _, last in limits if rank is not None and rank <= last), REST)
        members[name].append(doc_id)
        prior[name] += 1.0 / (rank if rank is not None and name != REST else 2 * max(deepest, 1))
    names = [n for n in members if members[n]]
    sizes = [len(members[n]) for n in names]
    weights = [len(members[n]) * math.sqrt(prior[n] / len(members[n])) for n in names]
    counts = allocate(sizes, weights, min(reserve, len(rest)))
    rng = frame_random(seed, query_id)
    bands, drawn = [], []
    for name, count in zip(names, counts, strict=True):
        picked = rng.sample(members[name], count)
        start = len(drawn)
        drawn.extend(picked)
        bands.append(Band(name, len(members[name]), tuple(range(start, len(drawn))), _prior(name)))
    doc_ids = candidates + drawn
    ranks = np.zeros((len(doc_ids), len(systems)))
    for i, doc_id in enumerate(candidates):
        for s, system in enumerate(systems):
            ranks[i, s] = best[doc_id].get(system, 0)
    weight = np.ones(len(doc_ids))
    for band in bands:
        for i in band.members:
            weight[len(candidates) + i] = band.weight
    bands = [
        Band(b.name, b.size, tuple(len(candidates) + i for i in b.members), b.prior) for b in bands
    ]
    return QueryFrame(query_id, doc_ids, systems, ranks, weight, len(candidates), len(rest),
                      fair_order(ranks), bands)  # fmt: skip


@pytest.mark.parametrize("case", range(25))
def test_the_adaptive_frame_is_the_plain_walks_draw_for_draw(case):
    import numpy as np

    from workbench.core.adaptive import build_frame
    from workbench.core.pool.sampling import CorpusOrder

    rng = random.Random(case)
    corpus = [f"d{i}" for i in range(rng.choice([50, 400, 3000]))]
    order = CorpusOrder(corpus + corpus[:7])
    exclude = set(rng.sample(corpus, 5))
    for query_id in ("q1", "q2"):
        rankings = {
            s: rng.sample(corpus, min(len(corpus), rng.randrange(0, 1500))) for s in ("a", "b")
        }
        seed = rng.randrange(50)
        fast = build_frame(query_id, rankings, order, seed, exclude=exclude)
        plain = plain_frame(query_id, rankings, corpus + corpus[:7], seed, exclude=exclude)
        assert (fast.doc_ids, fast.systems, fast.candidates, fast.rest_size, fast.fair_order,
                fast.bands) == (plain.doc_ids, plain.systems, plain.candidates, plain.rest_size,
                                plain.fair_order, plain.bands)  # fmt: skip
        assert np.array_equal(fast.ranks, plain.ranks)
        assert np.array_equal(fast.weight, plain.weight)
        assert (
            build_frame(query_id, rankings, corpus, seed, exclude=exclude).doc_ids == fast.doc_ids
        )
