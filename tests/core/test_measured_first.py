"""Every query measured first (issue 41, item 2): the app's order of work (`policy_chooser`)
serves a query until it has an estimate and then the query nearest one, the forecast "N to an
estimate" is what the queue then serves, a jump holds the chosen query, and only then does the
study's plan decide."""

from __future__ import annotations

from adaptive_fixtures import answer, session_for

from workbench.core.adaptive import PolicyConfig
from workbench.core.adaptive.chooser import BATCH, policy_chooser
from workbench.core.adaptive.projection import has_estimate, more_to_estimate, to_first_figure


def _judge(session, truth, choose, current, steps, chosen=False):
    """Grade `steps` picks in the chooser's order (after a jump to `current` when `chosen`);
    the picks made."""
    picks = []
    for step in range(steps):
        found = choose(current, frozenset(), chosen and step == 0)
        if found is None:
            break
        query_id, doc_id = found
        session.record(query_id, doc_id, answer(truth)(query_id, doc_id) >= 1)
        picks.append(found)
        current = query_id
    return picks, current


def test_the_queue_measures_each_query_before_it_narrows_anything():
    session, truth, _ = session_for(11, PolicyConfig(seed=11), queries=6)
    order = list(session.queries)
    choose = policy_chooser(session, order, ranked=lambda: list(reversed(order)))
    current = None
    served: list[str] = []
    first_figure = to_first_figure(session, order)
    while not all(has_estimate(session, q) for q in order):
        # the forecast for the query about to be served is what it then takes
        query_id = choose(current)[0]  # asked again by _judge: the same pick
        forecast = more_to_estimate(session, query_id, has_estimate(session, query_id))
        taken = 0
        while not has_estimate(session, query_id):
            picks, current = _judge(session, truth, choose, current, 1)
            assert picks[0][0] == query_id  # held until it has an estimate
            taken += 1
        assert taken == forecast, (query_id, taken, forecast)
        served.append(query_id)
    assert sorted(served) == sorted(order)  # each query once, none left for the plan to pass over
    judged = sum(len(q.grades) for q in session.queries.values())
    assert judged == first_figure  # "first figure in ≈ N" was what it took


def test_a_jump_holds_the_chosen_query_for_a_batch_though_others_wait_for_an_estimate():
    session, truth, _ = session_for(12, PolicyConfig(seed=12), queries=4)
    order = list(session.queries)
    measured = order[0]
    while not has_estimate(session, measured):  # judged outside the chooser
        pick = session.next_pick(measured)
        session.record(measured, pick.doc_id, answer(truth)(measured, pick.doc_id) >= 1)
    choose = policy_chooser(session, order)
    picks, _ = _judge(session, truth, choose, measured, BATCH + 1, chosen=True)
    assert [q for q, _ in picks] == [measured] * BATCH + [picks[-1][0]]
    assert picks[-1][0] != measured
    # without the jump the queue goes straight to a query with no estimate yet
    plain = policy_chooser(session, order)
    assert plain(measured, frozenset(), False)[0] != measured


def test_an_unmeasured_query_jumped_to_keeps_the_queue_until_it_has_an_estimate():
    session, truth, _ = session_for(13, PolicyConfig(seed=13), queries=4)
    order = list(session.queries)
    choose = policy_chooser(session, order)
    target = order[2]
    forecast = more_to_estimate(session, target, False)
    assert forecast is not None and forecast > BATCH  # the fair start alone is longer
    picks, _ = _judge(session, truth, choose, target, forecast, chosen=True)
    assert [q for q, _ in picks] == [target] * forecast
    assert has_estimate(session, target)


def test_the_status_counts_down_to_the_first_figure_and_asks_for_it_when_due():
    """The app's study words: 'first figure in ≈ N', one nearer each judgment between two
    rankings (the queue serves the unmeasured queries first), and a new ranking due when N
    judgments are made (not only every REFRESH)."""
    from workbench.core.study.target import StudyRanking, target_of
    from workbench.reports.ranking_words import ranking_words

    session, truth, _ = session_for(14, PolicyConfig(seed=14), queries=3)
    ranking = StudyRanking(session, [], target_of(None))
    ranking.refresh()
    first = ranking.latest.to_first
    assert ranking_words(ranking, "q0") == f"study R@10: first figure in ≈ {first}"
    choose = policy_chooser(session, list(session.queries), ranking)
    _judge(session, truth, choose, None, 3)
    assert ranking_words(ranking, "q0") == f"study R@10: first figure in ≈ {first - 3}"
    assert not ranking.due()
    _judge(session, truth, choose, None, first - 3)
    assert ranking.due()
