"""The judgments store, on SQLite and PostgreSQL alike: append-only history, current grades,
pool positions, concurrency."""

from __future__ import annotations

import multiprocessing

import pytest
from conftest import raw_execute

from workbench.core.errors import InputError
from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.store import Store, open_store


@pytest.fixture
def store(store_location):
    with open_store(store_location, create=True) as s:
        s.add_queries([Query("q1", "maize pests"), Query("q2", "milk")])
        s.add_docs([Doc(f"d{i}", f"text {i}") for i in range(5)])
        s.add_pool_entries(
            [
                PoolEntry("q1", f"d{i}", i, provenance=(Provenance("bm25", i + 1, 1.0),))
                for i in range(3)
            ]
        )
        yield s


def test_regrade_and_undo_append_rows_and_current_is_latest(store):
    store.add_judgment(Judgment("ann", "q1", "d0", 1))
    store.add_judgment(Judgment("ann", "q1", "d0", 3))
    store.add_judgment(Judgment("ann", "q1", "d1", 2))
    store.add_judgment(Judgment("ann", "q1", "d1", None))  # undo
    assert [j.grade for j in store.judgments()] == [1, 3, 2, None]
    current = {(j.query_id, j.doc_id): j.grade for j in store.current_judgments("ann")}
    assert current == {("q1", "d0"): 3}


def test_judgments_cannot_be_updated_or_deleted(store, store_location):
    store.add_judgment(Judgment("ann", "q1", "d0", 1))
    with pytest.raises(Exception, match="append-only"):
        raw_execute(store_location, "UPDATE judgments SET grade = 0")
    with pytest.raises(Exception, match="append-only"):
        raw_execute(store_location, "DELETE FROM judgments")
    assert [j.grade for j in store.judgments()] == [1]


def test_grade_outside_scale_is_refused(store):
    with pytest.raises(InputError, match="outside"):
        store.add_judgment(Judgment("ann", "q1", "d0", 7))
    assert store.judgments() == []


def test_repooling_keeps_positions_and_appends_new_items(store):
    new = store.add_pool_entries(
        [
            PoolEntry("q1", "d4", 0),
            PoolEntry("q1", "d0", 0, provenance=(Provenance("dense", 1, 0.9),)),
        ]
    )
    assert new == 1
    pool = store.pool("q1")
    assert [(e.doc_id, e.position) for e in pool] == [("d0", 0), ("d1", 1), ("d2", 2), ("d4", 3)]
    assert {p.system for p in pool[0].provenance} == {"bm25", "dense"}


def test_has_pool_says_whether_anything_is_pooled_without_reading_the_pool(store_location):
    with open_store(store_location, create=True) as s:
        s.add_queries([Query("q1", "maize pests")])
        s.add_docs([Doc("d0", "text")])
        assert not s.has_pool()
        s.add_pool_entries([PoolEntry("q1", "d0", 0)])
        assert s.has_pool()


def test_opening_a_missing_or_foreign_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such judgments store"):
        Store(tmp_path / "missing.db")
    (tmp_path / "junk.db").write_text("not sqlite at all " * 100)
    with pytest.raises(InputError, match="not a workbench judgments store"):
        Store(tmp_path / "junk.db")


def _grade_many(location: str, annotator: str, count: int) -> None:
    with open_store(location) as s:
        for i in range(count):
            s.add_judgment(Judgment(annotator, "q1", f"d{i % 3}", i % 4))


def test_two_processes_writing_at_once_lose_nothing(store, store_location):
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_grade_many, args=(store_location, n, 150)) for n in "ab"]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    rows = store.judgments()
    assert len(rows) == 300
    assert {j.annotator for j in rows} == {"a", "b"}


def _claim(location: str, annotator: str, start, won) -> None:  # type: ignore[no-untyped-def]
    with open_store(location) as s:
        start.wait(30)
        if s.claim(annotator, "q1", "d1"):
            won.put(annotator)


def test_eight_annotators_claiming_one_item_at_once_one_wins(store, store_location):
    ctx = multiprocessing.get_context("spawn")
    start, won = ctx.Event(), ctx.Queue()
    workers = [
        ctx.Process(target=_claim, args=(store_location, f"a{i}", start, won)) for i in range(8)
    ]
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    winners = []
    while not won.empty():
        winners.append(won.get())
    assert len(winners) == 1
    assert list(store.claims()) == winners


def test_a_stamped_judgment_sent_twice_is_added_once(store):
    """The app resends a grade the server may have taken before the connection broke."""
    stamped = Judgment("ann", "q1", "d0", 2, graded_at=1_800_000_000.123456)
    first = store.add_judgment(stamped)
    assert store.add_judgment(stamped) == first
    undo = Judgment("ann", "q1", "d0", None, graded_at=1_800_000_001.5)
    assert store.add_judgment(undo) == store.add_judgment(undo)
    assert [j.grade for j in store.judgments()] == [2, None]
    store.add_judgment(Judgment("ann", "q1", "d0", 3, graded_at=1_800_000_000.123456))
    assert [j.grade for j in store.judgments()] == [2, None, 3]  # another grade: a new row


def test_store_copy_append_adds_nothing_twice_and_never_reorders_a_history(tmp_path, capsys):
    from workbench.cli import main

    source, dest = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    with open_store(source, create=True) as s:
        s.add_queries([Query("q1", "x")])
        s.add_judgment(Judgment("alice", "q1", "d1", 0, graded_at=1000.0))
        s.add_judgment(Judgment("bob", "q1", "d1", 2, graded_at=1001.0))
    assert main(["store", "copy", source, dest]) == 0
    assert main(["store", "copy", source, dest, "--append"]) == 0  # nothing new
    with open_store(dest) as d:
        assert len(d.judgments()) == 2
        d.add_judgment(Judgment("alice", "q1", "d1", 3, graded_at=2000.0))  # a later regrade
    with open_store(source) as s:
        s.add_judgment(Judgment("alice", "q1", "d1", 1, graded_at=1500.0))  # older than it
    capsys.readouterr()
    assert main(["store", "copy", source, dest, "--append"]) == 2
    assert "would become the current" in capsys.readouterr().err
    with open_store(dest) as d:
        assert [j.grade for j in d.current_judgments("alice")] == [3]
        assert len(d.judgments()) == 3


def test_a_passage_keeps_its_span_and_headings_and_an_older_store_reads_without(
    store, store_location
):
    """Where a passage sits in its file is stored beside it; a store made before the spans
    table (dropped here) reads its passages as before and makes the table on the first span."""
    from workbench.core.model import SourceSpan

    raw_execute(store_location, "DROP TABLE IF EXISTS doc_spans")
    assert store.doc("d1") == Doc("d1", "text 1")
    spanned = Doc("f.md#1", "## A\n\n`x`", "F", SourceSpan("dir/f.md", 7, 16, "```py"),
                  ("F", "Sec [b]x[/b]"))  # fmt: skip
    assert store.add_docs([spanned, Doc("d9", "plain")]) == 2
    assert store.docs(["f.md#1", "d9", "d1"]) == {
        "f.md#1": spanned, "d9": Doc("d9", "plain"), "d1": Doc("d1", "text 1"),
    }  # fmt: skip
    assert store.doc("f.md#1") == spanned
