"""The judging queue: resume point, advance, skip, undo, progress counts."""

from __future__ import annotations

from workbench.core.model import Judgment, PoolEntry
from workbench.core.pool.queue import JudgingQueue, QueueCounts


def pool(queries: int = 2, per_query: int = 4) -> list[PoolEntry]:
    return [PoolEntry(f"q{q}", f"d{q}{i}", i) for q in range(queries) for i in range(per_query)]


def test_resume_starts_at_first_open_and_counts_progress() -> None:
    judgments = [
        Judgment("a", "q0", "d00", 2),
        Judgment("a", "q0", "d01", 0),
        Judgment("a", "q0", "d03", 1),
        Judgment("a", "zz", "not-pooled", 3),
    ]
    queue = JudgingQueue.from_judgments(pool(), judgments)
    assert queue.cursor == 2
    assert queue.progress("q0") == QueueCounts(3, 4, 2)
    assert queue.overall() == QueueCounts(3, 8, 2)
    assert queue.history == [("q0", "d00"), ("q0", "d01"), ("q0", "d03")]


def test_advance_skips_graded_items_and_wraps() -> None:
    queue = JudgingQueue(pool(1, 4), {("q0", "d01"): 1})
    assert queue.cursor == 0
    queue.record(("q0", "d00"), 3)
    assert queue.advance() and queue.cursor == 2
    queue.record(("q0", "d02"), 0)
    queue.record(("q0", "d03"), 0)
    queue.cursor = 3
    assert not queue.advance() and queue.done
    assert queue.progress("q0") == QueueCounts(4, 4, 2)


def test_regrade_replaces_counts_and_moves_to_end_of_history() -> None:
    queue = JudgingQueue(pool(1, 3))
    queue.record(("q0", "d00"), 3)
    queue.record(("q0", "d01"), 2)
    queue.record(("q0", "d00"), 0)
    assert queue.progress("q0") == QueueCounts(2, 3, 1)
    assert queue.last_graded() == ("q0", "d00")


def test_skip_moves_item_to_end_and_shows_the_next() -> None:
    queue = JudgingQueue(pool(1, 4))
    queue.skip()
    assert [e.doc_id for e in queue.items] == ["d01", "d02", "d03", "d00"]
    assert queue.current.doc_id == "d01"
    for doc in ("d01", "d02", "d03"):
        queue.record(("q0", doc), 1)
        queue.advance()
    assert queue.current.doc_id == "d00"


def test_skip_of_last_item_wraps_to_earlier_unjudged() -> None:
    queue = JudgingQueue(pool(1, 3), {("q0", "d01"): 1})
    queue.cursor = 2
    queue.skip()
    assert queue.current.doc_id == "d00"


def test_undo_returns_to_item_and_clears_grade() -> None:
    queue = JudgingQueue(pool(1, 3))
    queue.record(("q0", "d00"), 2)
    queue.advance()
    queue.record(("q0", "d01"), 1)
    queue.advance()
    key = queue.last_graded()
    queue.undo(key)
    assert queue.current.doc_id == "d01" and queue.grade_of(key) is None
    assert queue.last_graded() == ("q0", "d00")
    assert queue.progress("q0") == QueueCounts(1, 3, 1)


def test_move_and_jump() -> None:
    queue = JudgingQueue(pool(2, 3), {("q1", "d10"): 0})
    assert not queue.move(-1)
    assert queue.move(1) and queue.cursor == 1
    assert queue.jump_to_query("q1") and queue.current.doc_id == "d11"
    assert not queue.jump_to_query("nope")
    assert queue.query_ids() == ["q0", "q1"]


def test_with_a_policy_prev_and_next_go_through_own_grades_and_the_pick_only() -> None:
    """Under a policy, k/j never reach a passage the policy did not choose (the next one in
    pool order used to be shown, and could be graded)."""
    picks = iter([("q0", "d02"), ("q0", "d00"), ("q1", "d13")])
    chosen: list = [next(picks)]
    queue = JudgingQueue(pool(2, 4))
    queue.use_policy(lambda _query, _skip, _chosen: chosen[-1])
    assert queue.current.doc_id == "d02"
    assert not queue.move(1)  # the pick is the last place
    for _ in range(2):
        queue.record(queue.key_at(queue.cursor), 1)
        chosen.append(next(picks))
        assert queue.advance()
    assert queue.current.doc_id == "d13"
    assert queue.move(-1) and queue.current.doc_id == "d00"
    assert queue.move(-1) and queue.current.doc_id == "d02"
    assert not queue.move(-1) and queue.current.doc_id == "d02"
    assert queue.move(1) and queue.current.doc_id == "d00"
    assert queue.move(1) and queue.current.doc_id == "d13"
    assert not queue.move(1) and queue.current.doc_id == "d13"


def test_with_a_policy_reopening_goes_on_in_the_query_of_the_last_grade() -> None:
    judgments = [Judgment("a", "q0", "d00", 1), Judgment("a", "q1", "d10", 0)]
    queue = JudgingQueue.from_judgments(pool(2, 4), judgments)
    asked: list = []
    queue.use_policy(lambda q, _skip, _chosen: asked.append(q) or (q or "q0", f"d{q[1]}1"))
    assert asked == ["q1"] and queue.current.doc_id == "d11"


def test_shared_queue_skips_what_others_judged_and_keeps_overlap_open() -> None:
    current = [
        Judgment("b", "q0", "d00", 3),
        Judgment("b", "q0", "d01", 1),
        Judgment("b", "q0", "d02", 0),
        Judgment("llm", "q0", "d03", 2, role="model"),
        Judgment("a", "q1", "d10", 2),
    ]
    queue = JudgingQueue.from_judgments(pool(), current, annotator="a", required={("q0", "d01"): 2})
    # d00 and d02 have their one judge; d01 needs a second; a model's grade counts for nothing.
    assert [queue.is_open(queue.key_at(i)) for i in range(4)] == [False, True, False, True]
    assert queue.cursor == 1
    assert queue.progress("q0") == QueueCounts(2, 4, 0, 0)
    assert queue.progress("q1") == QueueCounts(1, 4, 1, 1)
    assert queue.overall() == QueueCounts(3, 8, 1, 1)
    queue.record(("q0", "d01"), 2)
    assert queue.advance() and queue.current.doc_id == "d03"
    assert queue.progress("q0") == QueueCounts(3, 4, 1, 1)
    # prev/next pass over items others judged.
    assert queue.move(-1) and queue.current.doc_id == "d01"
    assert not queue.move(-1)


def test_claims_and_later_rows_of_others_update_the_queue() -> None:
    queue = JudgingQueue.from_judgments(
        pool(1, 4), [], annotator="a", claims={"b": ("q0", "d00"), "a": ("q0", "d03")}
    )
    # b has d00 open: a starts on d01; a's own claim never keeps a out.
    assert queue.cursor == 1 and queue.is_open(("q0", "d03"))
    assert queue.progress("q0") == QueueCounts(0, 4, 0, 0)  # a claim is not a judgment
    queue.observe(Judgment("b", "q0", "d00", 2))
    queue.observe(Judgment("c", "q0", "d02", 1))
    queue.observe(Judgment("adj", "q0", "d03", 1, role="adjudicator"))
    queue.set_claims({"b": ("q0", "d01")})
    assert queue.progress("q0") == QueueCounts(2, 4, 0, 0)
    assert [queue.is_open(queue.key_at(i)) for i in range(4)] == [False, False, False, True]
    assert queue.advance() and queue.current.doc_id == "d03"
    # An undo by another annotator gives the item back.
    queue.observe(Judgment("c", "q0", "d02", None))
    assert queue.is_open(("q0", "d02")) and queue.progress("q0") == QueueCounts(1, 4, 0, 0)
    assert queue.jump_to_query("q0") and queue.current.doc_id == "d02"


def test_nothing_left_for_this_annotator() -> None:
    current = [Judgment("b", "q0", f"d0{i}", 1) for i in range(3)]
    queue = JudgingQueue.from_judgments(pool(1, 3), current, annotator="a")
    assert queue.done and not queue.advance()
    assert not queue.jump_to_query("q0")
    assert queue.progress("q0") == QueueCounts(3, 3, 0, 0)


def test_single_annotator_without_overlap_is_unchanged() -> None:
    # With everyone's rows but no other annotator, the queue is the old one: not yet graded.
    current = [Judgment("a", "q0", "d01", 1), Judgment("a", "q0", "d00", 0)]
    shared = JudgingQueue.from_judgments(pool(), current, annotator="a")
    plain = JudgingQueue.from_judgments(pool(), current)
    assert shared.cursor == plain.cursor == 2
    assert shared.history == plain.history
    for qid in ("q0", "q1"):
        assert shared.progress(qid) == plain.progress(qid)


def test_with_a_policy_a_pick_another_holds_gives_another_querys_pick_not_a_neighbour() -> None:
    """Two annotators' sessions make the same pick: the one who does not hold it gets the next
    query's pick (it used to get the next passage in pool order, which the policy never chose)."""
    picks = {"q0": ("q0", "d02"), "q1": ("q1", "d13")}

    def choose(query, skip, chosen):
        for q in (query or "q0", "q1" if (query or "q0") == "q0" else "q0"):
            if q not in skip:
                return picks[q]
        return None

    queue = JudgingQueue.from_judgments(pool(2, 4), [], annotator="a", claims={"b": ("q0", "d02")})
    queue.use_policy(choose)
    assert queue.current.doc_id == "d13"
    queue.set_claims({"b": ("q0", "d02"), "c": ("q1", "d13")})
    assert queue.done and not queue.advance()


def test_with_a_policy_and_nothing_left_the_cursor_rests_on_the_last_own_grade() -> None:
    judgments = [Judgment("a", "q0", "d02", 1), Judgment("a", "q1", "d11", 0)]
    queue = JudgingQueue.from_judgments(pool(2, 4), judgments)
    queue.use_policy(lambda _query, _skip, _chosen: None)
    assert queue.done and queue.current.doc_id == "d11"
    assert queue.jump_to_query("q0") and queue.current.doc_id == "d02"  # own grade only
    queue.record(("q1", "d11"), 0)
    assert not queue.jump_to_query("nope")
    fresh = JudgingQueue(pool(1, 4))
    fresh.use_policy(lambda _query, _skip, _chosen: None)
    assert fresh.done and not fresh.jump_to_query("q0")
