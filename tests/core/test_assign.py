"""Overlap assignment: the share per query, spread through the queue, seeded, adds only; the
store's required judges and claims; `workbench assign` and `workbench pool --overlap`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.agreement.assign import bands, choose_overlap, overlap_target
from workbench.core.model import Judgment, PoolEntry
from workbench.store import Store


def pool(queries: int = 3, per_query: int = 25) -> list[PoolEntry]:
    return [
        PoolEntry(f"q{q}", f"d{q}-{i:02d}", i) for q in range(queries) for i in range(per_query)
    ]


def positions(chosen: dict, query: str) -> list[int]:
    return sorted(int(d.split("-")[1]) for (q, d) in chosen if q == query)


def test_target_rounds_half_up_and_bands_cover_the_queue() -> None:
    assert [overlap_target(n, 0.2) for n in (0, 1, 2, 3, 12, 25, 27)] == [0, 0, 0, 1, 2, 5, 5]
    assert overlap_target(5, 0.5) == 3 and overlap_target(4, 1.0) == 4
    assert bands(10, 3) == [range(0, 3), range(3, 6), range(6, 10)]
    assert [i for band in bands(25, 5) for i in band] == list(range(25))


def test_share_per_query_one_per_band() -> None:
    chosen = choose_overlap(pool(), 0.2, seed=0)
    assert set(chosen.values()) == {2}
    for q in ("q0", "q1", "q2"):
        marked = positions(chosen, q)
        assert len(marked) == 5
        # One mark in each fifth of the queue: never bunched at the end.
        assert [p // 5 for p in marked] == [0, 1, 2, 3, 4]
    # Seeded: the same seed gives the same marks; queries draw independently.
    assert choose_overlap(pool(), 0.2, seed=0) == chosen
    assert choose_overlap(pool(), 0.2, seed=1) != chosen
    alone = choose_overlap([e for e in pool() if e.query_id == "q1"], 0.2, seed=0)
    assert positions(alone, "q1") == positions(chosen, "q1")


def test_spread_holds_over_many_seeds() -> None:
    # Averaged over seeds, each position is marked about equally often (no end or start bias).
    counts = [0] * 25
    for seed in range(400):
        for p in positions(choose_overlap(pool(1), 0.2, seed=seed), "q0"):
            counts[p] += 1
    expected = 400 * 5 / 25
    assert all(abs(c - expected) < 0.35 * expected for c in counts), counts


def test_rerun_is_idempotent_and_a_larger_share_adds() -> None:
    items = pool()
    first = choose_overlap(items, 0.2, seed=3)
    assert choose_overlap(items, 0.2, seed=3, existing=first) == {}
    assert choose_overlap(items, 0.1, seed=3, existing=first) == {}
    more = choose_overlap(items, 0.4, seed=3, existing=first)
    assert not set(more) & set(first)
    both = {**first, **more}
    for q in ("q0", "q1", "q2"):
        marked = positions(both, q)
        assert len(marked) == 10
        # The added ones fill the tenths that had no mark yet.
        tenths = bands(25, 10)
        assert [sum(p in band for p in marked) for band in tenths] == [1] * 10
    # Items already marked by other means (required 2) count toward the share.
    assert choose_overlap(items, 0.4, seed=3, existing=both) == {}


def test_growing_pool_gets_its_share_and_bad_input_is_refused() -> None:
    small = pool(1, 10)
    first = choose_overlap(small, 0.2, seed=0)
    grown = pool(1, 20)
    added = choose_overlap(grown, 0.2, seed=0, existing=first)
    assert len(first) == 2 and len(added) == 2
    assert choose_overlap(pool(1, 2), 0.2) == {}
    assert len(choose_overlap(pool(1, 4), 1.0)) == 4
    with pytest.raises(ValueError):
        choose_overlap(small, 1.5)
    with pytest.raises(ValueError):
        choose_overlap(small, 0.2, judges=1)


def test_store_required_judges_only_rise_and_old_stores_open(tmp_path: Path) -> None:
    with build_store(tmp_path / "r.db", queries=1, per_query=3) as store:
        assert store.required_judges() == {}
        assert store.set_required_judges({("q0", "d0-001"): 2}) == 1
        assert store.set_required_judges({("q0", "d0-001"): 2}) == 0
        assert store.set_required_judges({("q0", "d0-001"): 3, ("q0", "d0-002"): 2}) == 2
        assert store.set_required_judges({("q0", "d0-001"): 2}) == 0
        assert store.required_judges() == {("q0", "d0-001"): 3, ("q0", "d0-002"): 2}
    # A store made before the sharing tables existed opens, reads as "no overlap", and gets
    # the tables on its first sharing write.
    import sqlite3

    old = tmp_path / "old.db"
    build_store(old, queries=1, per_query=2).close()
    with sqlite3.connect(old) as conn:
        conn.execute("DROP TABLE assignments")
        conn.execute("DROP TABLE claims")
    with Store(old) as store:
        assert store.required_judges() == {} and store.claims() == {}
        store.release_claim("a")
        assert store.claim("a", "q0", "d0-000")
        assert store.claims() == {"a": ("q0", "d0-000")}


def test_claims_let_only_as_many_judges_as_required(tmp_path: Path) -> None:
    with build_store(tmp_path / "c.db", queries=1, per_query=3) as store:
        assert store.claim("a", "q0", "d0-000")
        assert not store.claim("b", "q0", "d0-000")  # a has it open
        assert store.claims() == {"a": ("q0", "d0-000")}
        store.set_required_judges({("q0", "d0-000"): 2})
        assert store.claim("b", "q0", "d0-000")  # an overlap item takes two
        assert not store.claim("c", "q0", "d0-000")
        assert "c" not in store.claims()
        # A judged item counts its human judge; an undo frees the place; models never count.
        store.add_judgment(Judgment("a", "q0", "d0-001", 2))
        assert not store.claim("b", "q0", "d0-001")
        store.add_judgment(Judgment("a", "q0", "d0-001", None))
        store.add_judgment(Judgment("llm", "q0", "d0-001", 1, role="model"))
        assert store.claim("b", "q0", "d0-001")
        # One claim each: b's new claim replaced the old one.
        assert store.claims()["b"] == ("q0", "d0-001")
        # A stale claim (a crashed app) keeps nobody out.
        assert store.claim("a", "q0", "d0-002")
        assert store.claim("c", "q0", "d0-002", ttl_s=0.0)
        store.release_claim("c")
        assert "c" not in store.claims() and not store.renew_claim("c")
        assert store.renew_claim("a")
        last, rows = store.judgments_since(0)
        assert len(rows) == 3 and last == store.last_judgment_id()
        assert store.judgments_since(last) == (last, [])


def test_assign_command_and_pool_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "a.db"
    build_store(db, queries=2, per_query=10).close()
    assert main(["assign", "--db", str(db), "--overlap", "0.2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["overlap_items"] == 4 and summary["added"] == 4
    assert summary["per_query"] == {"q0": 2, "q1": 2}
    assert main(["assign", "--db", str(db), "--overlap", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "4 of 20 items" in out and "0 marked now" in out
    with Store(db) as store:
        before = store.required_judges()
    assert main(["assign", "--db", str(db), "--overlap", "0.2"]) == 0
    with Store(db) as store:
        assert store.required_judges() == before
    capsys.readouterr()
    assert main(["assign", "--db", str(db), "--overlap", "1.5"]) == 2
    assert "--overlap" in capsys.readouterr().err
    assert main(["assign", "--db", str(tmp_path / "none.db"), "--overlap", "0.2"]) == 2


def test_pool_overlap_marks_after_pooling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for i in range(12):
        (corpus / f"p{i:02d}.txt").write_text(f"maize pest number {i} " + "word " * (i % 4))
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "maize pest"}\n')
    db = tmp_path / "p.db"
    args = ["pool", "--corpus", str(corpus), "--queries", str(queries), "--systems", "bm25"]
    assert main([*args, "--db", str(db), "--depth", "10", "--overlap", "0.2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["overlap"]["overlap_items"] == 2 and out["overlap"]["added"] == 2
    with Store(db) as store:
        marked = store.required_judges()
        pool_keys = {(e.query_id, e.doc_id) for e in store.pool()}
    assert set(marked) <= pool_keys and set(marked.values()) == {2}
    assert main([*args, "--db", str(db), "--depth", "10", "--overlap", "0.2"]) == 0
    assert "0 marked now" in capsys.readouterr().out
    with Store(db) as store:
        assert store.required_judges() == marked
