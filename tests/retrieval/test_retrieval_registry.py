"""The systems registry: a retriever is one class and one registry line, or an entry point of
its own package. A toy "title" retriever and a toy "shortest" reranker, registered by a fixture
only, pool through the CLI; a "titles" retriever installed as a package pools by its entry
point."""

from __future__ import annotations

import json
import subprocess
import sys
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


PLUGIN = '''
from workbench.core.model import Run
from workbench.retrieval import tokenize


class Titles:
    name = "titles"
    cache_path = None

    def __init__(self, docs, options):
        self.titles = {d.doc_id: set(tokenize(d.title)) for d in docs}

    def search(self, queries, depth):
        run = Run(self.name)
        for query in queries:
            words = set(tokenize(query.text))
            overlap = {d: float(len(words & t)) for d, t in self.titles.items() if words & t}
            top = sorted(overlap.items(), key=lambda p: (-p[1], p[0]))[:depth]
            run.scores[query.query_id] = dict(top)
        return run
'''


def install_plugin(site: Path, entry_points: str, modules: dict[str, str]) -> None:
    """A package installed into `site` as pip lays one out: its modules and a dist-info whose
    entry_points.txt names the systems."""
    info = site / "workbench_titles-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: workbench-titles\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for name, text in modules.items():
        (site / f"{name}.py").write_text(text)


def pool_process(
    site: Path, tmp_path: Path, collection, systems: str
) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    corpus, queries = collection
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", "pool", "--corpus", str(corpus), "--queries",
         str(queries), "--systems", systems, "--depth", "2", "--db", str(tmp_path / "j.db"),
         "--cache-dir", str(tmp_path / "cache"), "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def test_a_retriever_shipped_as_its_own_package_pools_by_its_entry_point(
    tmp_path, collection
) -> None:
    site = tmp_path / "site"
    install_plugin(site, "[workbench.retrievers]\ntitles = titles_plugin:Titles\n"
                   "bm25 = titles_plugin:Titles\n", {"titles_plugin": PLUGIN})  # fmt: skip
    done = pool_process(site, tmp_path, collection, "bm25,titles")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out["systems"]) == ["bm25", "titles"]  # bm25 keeps its built-in meaning
    assert read_run(out["runs"]["titles"]).rankings() == {
        "q_maize": ["m1", "m2"], "q_dairy": ["d1", "d2"]
    }  # fmt: skip


def test_a_plugin_that_does_not_load_is_named_not_a_traceback(tmp_path, collection) -> None:
    site = tmp_path / "site"
    install_plugin(site, "[workbench.retrievers]\nbroken = broken_plugin:Titles\n",
                   {"broken_plugin": "raise ImportError('needs libfoo')\n"})  # fmt: skip
    done = pool_process(site, tmp_path, collection, "bm25,broken")
    assert done.returncode == 2, done.stderr
    assert "--systems: broken: its package's entry point broken_plugin:Titles does not load" in (
        done.stderr
    )
    assert "needs libfoo" in done.stderr and "Traceback" not in done.stderr
