"""Commands against hostile paths and files: nothing is written onto an input, someone else's
file is never changed, a killed pool leaves a store the next run accepts, one rule for names."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pool_fixtures import make_collection, pool_cli, write_run_file

from workbench.cli import main
from workbench.store import Store

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_pool_refuses_a_run_file_where_it_writes_a_systems_run(tmp_path, capsys) -> None:
    corpus, queries = make_collection(tmp_path)
    runs = tmp_path / "j-runs"
    runs.mkdir()
    mine = write_run_file(runs / "bm25.run", "prod", [("q_maize", "maize1", 2.0)])
    before = digest(mine)
    code = pool_cli("--corpus", corpus, "--queries", queries, "--systems", "bm25", "--run",
                    mine, "--db", tmp_path / "j.db", "--cache-dir", tmp_path / "c")  # fmt: skip
    assert code == 2
    assert "would overwrite --run" in capsys.readouterr().err
    assert digest(mine) == before and not (tmp_path / "j.db").exists()


@pytest.mark.parametrize("target", ["corpus", "queries"])
def test_pool_refuses_a_store_onto_its_corpus_or_queries(tmp_path, capsys, target) -> None:
    corpus, queries = make_collection(tmp_path)
    victim = corpus if target == "corpus" else queries
    before = digest(victim)
    code = pool_cli("--corpus", corpus, "--queries", queries, "--systems", "bm25",
                    "--db", victim, "--cache-dir", tmp_path / "c")  # fmt: skip
    assert code == 2 and digest(victim) == before
    assert str(victim) in capsys.readouterr().err


def foreign_sqlite(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    return path


STORE_COMMANDS = [
    ["coverage", "--db", "{db}"],
    ["export", "--db", "{db}", "--qrels", "{tmp}/out.qrels"],
    ["eval", "--qrels", "{db}", "--run", "{run}"],
    ["agree", "--db", "{db}"],
    ["simulate", "--db", "{db}", "--oracle", "{qrels}"],
    ["assign", "--db", "{db}", "--overlap", "0.2"],
    ["import-labels", "--db", "{db}", "--as", "llm", "{qrels}"],
    ["judge", "--db", "{db}", "--annotator", "alice"],
    ["pool", "--corpus", "{corpus}", "--queries", "{queries}", "--systems", "bm25",
     "--db", "{db}", "--cache-dir", "{tmp}/c"],
]  # fmt: skip


@pytest.mark.parametrize("kind", ["foreign", "empty", "text"])
@pytest.mark.parametrize("command", STORE_COMMANDS, ids=lambda c: c[0])
def test_a_file_that_is_not_a_store_is_refused_unchanged(tmp_path, capsys, kind, command) -> None:
    corpus, queries = make_collection(tmp_path)
    db = tmp_path / "x.db"
    if kind == "foreign":
        foreign_sqlite(db)
    elif kind == "empty":
        db.write_bytes(b"")
    else:
        db.write_text("not a database\n")
    qrels = tmp_path / "o.qrels"
    qrels.write_text("q_maize 0 maize1 1\n")
    run = write_run_file(tmp_path / "r.run", "r", [("q_maize", "maize1", 1.0)])
    before = (digest(db), db.stat().st_size)
    args = [
        a.format(db=db, tmp=tmp_path, run=run, qrels=qrels, corpus=corpus, queries=queries)
        for a in command
    ]
    code = main(args)
    err = capsys.readouterr().err
    if kind != "foreign" and command[0] == "eval":
        assert code == 2 and "x.db" in err  # read as TREC qrels: named by line
    else:
        assert code == 2, err
        assert "x.db" in err and "judgments store" in err
    assert (digest(db), db.stat().st_size) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("x.db")) == ["x.db"]


KILLER = r"""
import os, sys, time
from pathlib import Path
import workbench.store.sqlite as store_module

path = Path(sys.argv[1])
real = store_module.sqlite3.connect

def slow_connect(*args, **kwargs):
    conn = real(*args, **kwargs)
    print("connected", flush=True)
    time.sleep(0.3)
    return conn

store_module.sqlite3.connect = slow_connect
store_module.Store(path, create=True)
"""


def test_a_store_killed_while_being_created_is_absent_or_whole(tmp_path) -> None:
    """SIGKILL at each moment of creation (after each sqlite3.connect of it): the path then
    holds no store, or a whole one that opens."""
    for kill_after in (1, 2):  # creation connects twice: to build, then to open
        path = tmp_path / f"s{kill_after}.db"
        child = subprocess.Popen(
            [sys.executable, "-c", KILLER, str(path)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        for _ in range(kill_after):
            assert child.stdout.readline() == "connected\n"
        child.send_signal(signal.SIGKILL)
        child.wait()
        if path.exists():
            Store(path).close()
        Store(path, create=True).close()  # a rerun accepts what is there
        Store(path).close()
    leftovers = [p.name for p in tmp_path.iterdir() if not p.name.endswith((".db", "-wal", "-shm"))]
    assert leftovers == []


POOL_KILLED_WHILE_WRITING = r"""
import sys, time
import workbench.store as store_module
from workbench.cli import main

real = store_module.Store.add_pooling

def slow_add(self, *args, **kwargs):  # the store exists, the pool is being written
    print("writing", flush=True)
    time.sleep(60)
    return real(self, *args, **kwargs)

store_module.Store.add_pooling = slow_add
sys.exit(main(sys.argv[1:]))
"""


def test_pool_killed_while_writing_the_store_is_rerun_cleanly(tmp_path) -> None:
    corpus, queries = make_collection(tmp_path)
    db = tmp_path / "j.db"
    args = ["pool", "--corpus", str(corpus), "--queries", str(queries), "--systems", "bm25",
            "--db", str(db), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-c", POOL_KILLED_WHILE_WRITING, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "writing\n"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert db.exists()
    rerun = subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True,
                           text=True)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    with Store(db) as store:
        assert store.pool()


NAME_COMMANDS = [
    ["judge", "--db", "{db}", "--annotator", "{name}"],
    ["demo", "--db", "{db}", "--annotator", "{name}"],
    ["simulate", "--db", "{db}", "--oracle", "{qrels}", "--annotator", "{name}"],
    ["import-labels", "--db", "{db}", "--as", "{name}", "{qrels}"],
    ["judge-model", "--db", "{db}", "--as", "{name}"],
    ["coverage", "--db", "{db}", "--annotator", "{name}"],
]


@pytest.mark.parametrize("name", ["", "a b", "[@click=app.quit]", "x\x1b]2;T\x07", " alice"])
@pytest.mark.parametrize("command", NAME_COMMANDS, ids=lambda c: c[0])
def test_one_rule_for_names_at_every_entry(tmp_path, capsys, command, name) -> None:
    db = tmp_path / "s.db"
    Store(db, create=True).close()
    qrels = tmp_path / "o.qrels"
    qrels.write_text("q 0 d 1\n")
    before = digest(db)
    with pytest.raises(SystemExit) as exit_info:
        main([a.format(db=db, qrels=qrels, name=name) for a in command])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "not a valid name" in err or "a name is required" in err
    assert "\x1b" not in err
    assert digest(db) == before


def test_names_that_follow_the_rule_pass_through_export_and_eval(tmp_path, capsys) -> None:
    corpus, queries = make_collection(tmp_path)
    db = tmp_path / "s.db"
    assert pool_cli("--corpus", corpus, "--queries", queries, "--systems", "bm25", "--depth",
                    "3", "--db", db, "--cache-dir", tmp_path / "c") == 0  # fmt: skip
    oracle = tmp_path / "o.qrels"
    oracle.write_text("q_maize 0 maize1 2\nq_dairy 0 dairy1 1\nq_storage 0 storage2 3\n")
    assert main(["simulate", "--db", str(db), "--oracle", str(oracle),
                 "--annotator", "José.Müller@lab+1"]) == 0  # fmt: skip
    golden = tmp_path / "g.yaml"
    assert main(["export", "--db", str(db), "--golden", str(golden)]) == 0
    run = tmp_path / "s-runs" / "bm25.run"
    capsys.readouterr()
    assert main(["eval", "--qrels", str(golden), "--run", str(run), "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["runs"]


def test_identity_is_the_title_and_text_the_annotator_sees(tmp_path) -> None:
    """Five abstracts reading 'NO ABSTRACT AVAILABLE.' under five titles are five items; a true
    re-ingested copy (same title, same text up to case and punctuation) is one."""
    docs = [{"_id": f"n{i}", "title": f"paper {w}", "text": "NO ABSTRACT AVAILABLE."}
            for i, w in enumerate(["alpha", "beta", "gamma", "delta", "epsilon"])]  # fmt: skip
    docs += [
        {"_id": "c1", "title": "Maize pests", "text": "Scout maize early."},
        {"_id": "c1-copy", "title": "MAIZE PESTS", "text": "scout maize early"},
        {"_id": "t1", "title": "maize", "text": "pests scout maize early"},  # words moved
    ]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q", "text": "paper abstract maize"}\n', encoding="utf-8")
    code = pool_cli("--corpus", corpus, "--queries", queries, "--systems", "bm25", "--depth",
                    "20", "--db", tmp_path / "s.db", "--cache-dir", tmp_path / "c")  # fmt: skip
    assert code == 0
    with Store(tmp_path / "s.db") as store:
        assert store.aliases() in ({"c1-copy": "c1"}, {"c1": "c1-copy"})
        assert len(store.pool("q")) == 7


@pytest.mark.parametrize("command", ["judge", "demo"])
def test_the_app_refuses_to_start_without_a_terminal(tmp_path, command) -> None:
    corpus, queries = make_collection(tmp_path)
    db = tmp_path / "s.db"
    assert pool_cli("--corpus", corpus, "--queries", queries, "--systems", "bm25", "--depth",
                    "2", "--db", db, "--cache-dir", tmp_path / "c") == 0  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "workbench", command, "--db", str(db),
                           "--annotator", "alice"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "needs a terminal" in done.stderr
    assert done.stdout == ""
