"""Overlap on an adaptive study (issue 41, item 3): one item in `every` that a second annotator's
app serves is a passage the first judged (blind), so `agree` has pairs; the study counts each
passage once, so the second grade narrows nothing."""

from __future__ import annotations

from adaptive_fixtures import answer, session_for

from workbench.core.adaptive import PolicyConfig
from workbench.core.adaptive.chooser import policy_chooser
from workbench.core.adaptive.overlap import OverlapSource
from workbench.core.model import PoolEntry
from workbench.core.pool.queue import JudgingQueue


def _queue(session, grades_of_others: dict) -> JudgingQueue:
    pool = [
        PoolEntry(q, d, i)
        for q, rec in session.queries.items()
        for i, d in enumerate(rec.frame.doc_ids)
    ]
    others = {key: {"alice"} for key in grades_of_others}
    return JudgingQueue(pool, others=others)


def _grade(session, truth, queue, choose, steps):
    served, current = [], None
    for _ in range(steps):
        key = queue._servable(current)
        if key is None:
            break
        grade = answer(truth)(*key)
        queue.record(key, grade)
        session.record(*key, grade >= 1)
        served.append(key)
        current = key[0]
    return served


def test_one_in_every_is_a_passage_another_judged_and_the_rest_the_policys():
    session, truth, _ = session_for(21, PolicyConfig(seed=21), queries=3)
    alice = _queue(session, {})
    alice.use_policy(policy_chooser(session, alice.query_ids()))
    alices = _grade(session, truth, alice, None, 30)
    bob = _queue(session, {key: 1 for key in alices})
    source = OverlapSource(bob, 0.25)
    bob.use_policy(policy_chooser(session, bob.query_ids(), overlap=source))
    bobs = _grade(session, truth, bob, None, 40)
    second = [key for key in bobs if key in set(alices)]
    assert len(second) == 40 // 4  # one in 4
    assert all(bobs[n] in set(alices) for n in range(3, 40, 4))  # after every 3 of the policy's
    assert len(set(bobs)) == len(bobs)  # never one passage twice to bob
    assert all(bob.needs(key) == 2 for key in second)


def test_the_source_waits_while_nobody_else_judged_anything():
    session, truth, _ = session_for(22, PolicyConfig(seed=22), queries=2)
    bob = _queue(session, {})
    bob.use_policy(policy_chooser(session, bob.query_ids(), overlap=OverlapSource(bob, 0.5)))
    served = _grade(session, truth, bob, None, 12)
    assert len(served) == 12 and bob.required == {}
