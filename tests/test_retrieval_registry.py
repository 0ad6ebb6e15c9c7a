"""The systems registry: a retriever is one class and one registry line. A toy "title"
retriever and a toy "shortest" reranker, registered by a fixture only, pool through the CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.model import Doc, Query, Run
from workbench.formats import read_run
from workbench.retrieval import (
    RERANKERS,
    RETRIEVERS,
    BM25Retriever,
    BuildOptions,
    Reranker,
    Retriever,
    tokenize,
)
from workbench.store import Store

TITLES = {
    "m1": ("Maize armyworm scouting", "Look for frass in the whorl."),
    "m2": ("Maize storage", "Dry the cobs before shelling."),
    "d1": ("Dairy udder hygiene", "Wash and dry before milking."),
    "d2": ("Dairy feed", "Napier grass and silage."),
    "s1": ("Grain weevils", "Hermetic bags stop them."),
}
QUERIES = {"q_maize": "maize armyworm", "q_dairy": "dairy udder"}


class TitleRetriever:
    """Ranks docs by how many query words their title holds (ties by the ordering rule)."""

    name = "title"
    cache_path = None

    def __init__(self, docs: Sequence[Doc], options: BuildOptions) -> None:
        self.titles = {d.doc_id: set(tokenize(d.title)) for d in docs}

    def search(self, queries: Sequence[Query], depth: int) -> Run:
        run = Run(self.name)
        for query in queries:
            words = set(tokenize(query.text))
            overlap = {d: float(len(words & t)) for d, t in self.titles.items() if words & t}
            top = sorted(overlap.items(), key=lambda p: (-p[1], p[0]))[:depth]
            run.scores[query.query_id] = dict(top)
        return run


class ShortestReranker:
    """Rescores the candidates it is given: the shorter the passage, the higher."""

    name = "shortest"
    seen: dict[str, list[str]] = {}

    def __init__(self, options: BuildOptions) -> None:
        pass

    def rerank(
        self,
        queries: Sequence[Query],
        docs_by_id: Mapping[str, Doc],
        candidates: Mapping[str, Sequence[str]],
        depth: int,
    ) -> Run:
        ShortestReranker.seen = {q: list(c) for q, c in candidates.items()}
        return Run(self.name, {
            q.query_id: {d: -float(len(docs_by_id[d].text)) for d in candidates.get(q.query_id, ())}
            for q in queries
        })  # fmt: skip


@pytest.fixture
def title_system(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one place a new system is added: its registry line."""
    monkeypatch.setitem(RETRIEVERS, "title", TitleRetriever)
    monkeypatch.setitem(RERANKERS, "shortest", ShortestReranker)


@pytest.fixture
def collection(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n"
                              for d, (t, x) in TITLES.items()), encoding="utf-8")  # fmt: skip
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": q, "text": t}) + "\n"
                               for q, t in QUERIES.items()), encoding="utf-8")  # fmt: skip
    return corpus, queries


def pool(tmp_path: Path, corpus: Path, queries: Path, systems: str, *more: str) -> int:
    return main(["pool", "--corpus", str(corpus), "--queries", str(queries), "--systems",
                 systems, "--depth", "2", "--db", str(tmp_path / "j.db"), "--cache-dir",
                 str(tmp_path / "cache"), *more])  # fmt: skip


def test_a_registered_retriever_pools_through_the_cli(
    tmp_path, collection, title_system, capsys
) -> None:
    assert pool(tmp_path, *collection, "title", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["systems"] == {"title": {"status": "ok", "reason": None, "depth": 2}}
    run = read_run(out["runs"]["title"])
    assert run.name == "title"
    assert run.rankings() == {"q_maize": ["m1", "m2"], "q_dairy": ["d1", "d2"]}
    with Store(tmp_path / "j.db") as store:
        pooled = {(e.query_id, e.doc_id) for e in store.pool()}
        assert pooled == {("q_maize", "m1"), ("q_maize", "m2"), ("q_dairy", "d1"),
                          ("q_dairy", "d2")}  # fmt: skip
        assert store.poolings()[0]["systems"] == ["title"]
    assert not list((tmp_path / "cache").glob("run-title-*"))  # no cache_path: not cached


def test_a_registered_reranker_rescores_the_first_stage_union(
    tmp_path, collection, title_system, capsys
) -> None:
    assert pool(tmp_path, *collection, "title,shortest", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["systems"]) == ["title", "shortest"]
    assert ShortestReranker.seen == {"q_maize": ["m1", "m2"], "q_dairy": ["d1", "d2"]}
    assert read_run(out["runs"]["shortest"]).rankings()["q_dairy"] == ["d2", "d1"]


def test_the_checks_read_the_registry(tmp_path, collection, capsys) -> None:
    assert pool(tmp_path, *collection, "title") == 2
    err = capsys.readouterr().err
    assert "--systems: unknown system 'title' (known: bm25, dense, rerank)" in err
    assert pool(tmp_path, *collection, "rerank") == 2
    err = capsys.readouterr().err
    assert "--systems: rerank needs a first-stage system (bm25, dense) or a --run" in err
    assert not (tmp_path / "j.db").exists()


def test_help_lists_a_registered_system(title_system, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["pool", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "bm25, dense, title rank the corpus, rerank, shortest rescores" in help_text


def test_the_built_in_systems_follow_the_protocols(tmp_path) -> None:
    docs = [Doc(d, x, title=t) for d, (t, x) in TITLES.items()]
    bm25 = RETRIEVERS["bm25"](docs, BuildOptions(cache_dir=tmp_path))
    assert isinstance(bm25, BM25Retriever) and isinstance(bm25, Retriever)
    assert bm25.cache_path is not None and bm25.cache_path.parent == tmp_path
    assert isinstance(TitleRetriever(docs, BuildOptions()), Retriever)
    assert isinstance(ShortestReranker(BuildOptions()), Reranker)
    assert not isinstance(ShortestReranker(BuildOptions()), Retriever)  # no search: stage 2
