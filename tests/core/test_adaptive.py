"""The adaptive queue (workbench.core.adaptive) on seeded random studies: the estimate is
unbiased by construction (checked exactly, by enumerating a draw), no system is starved, the
cap holds, the walk is reproducible, and a query is never certified on too little."""

from __future__ import annotations

import random

import numpy as np
import pytest
from adaptive_fixtures import WORDS, answer, session_for, study

from workbench.core.adaptive import (
    FAIR_DEPTH,
    AdaptiveSession,
    Draw,
    PolicyConfig,
    build_frame,
    candidate_total,
    walk,
)
from workbench.core.adaptive.rest import BandSample, RestSample, fit_rest, rest_draws
from workbench.core.model import Status


def test_a_draw_is_unbiased_exactly_whatever_was_judged_before():
    """E[t] = T, by summing q(d) t(d) over every passage the draw could have picked, after
    feedback picks chosen by the model (not at random)."""
    session, truth, _ = session_for(3, PolicyConfig(seed=3, draw_share=0.35, rest_share=0.0))
    walk(session, answer(truth), per_query=30)
    qid = "q0"
    q = session.queries[qid]
    frame = q.frame
    unjudged = [i for i in range(frame.candidates) if i not in q.grades]
    p = session.probabilities(qid)
    idx = np.asarray(unjudged)
    prob = np.clip(p[idx], 1e-6, 1 - 1e-6)
    tilt = np.sqrt(prob * (1 - prob))
    eps = session.config.defensive
    dist = (1 - eps) * tilt / tilt.sum() + eps / len(idx)
    dist = dist / dist.sum()
    relevant = {frame.doc_ids[i] for i in range(frame.candidates)} & set(truth[qid])
    excluded = tuple(frame.doc_ids[i] for i in q.order if i < frame.candidates)
    grades = {d: d in relevant for d in frame.doc_ids[: frame.candidates]}
    expected = 0.0
    for k, i in enumerate(unjudged):
        draw = Draw(qid, frame.doc_ids[i], float(dist[k]), excluded, 1.0, float(prob.sum()),
                    float(prob[k]))  # fmt: skip
        known = {d: grades[d] for d in (*excluded, draw.doc_id)}
        expected += dist[k] * candidate_total([draw], known).est
    assert expected == pytest.approx(len(relevant), abs=1e-9)


def test_the_candidates_estimate_is_unbiased_over_seeds():
    """Mean over 40 independent walks of the candidates' estimate vs the truth."""
    errors = []
    for seed in range(40):
        session, truth, _ = session_for(
            11, PolicyConfig(seed=seed, rest_share=0.0), queries=2, corpus=400
        )
        walk(session, answer(truth), per_query=40)
        for qid, q in session.queries.items():
            frame = q.frame
            true = len(set(frame.doc_ids[: frame.candidates]) & set(truth[qid]))
            errors.append(session.candidates_total(qid).est - true)
    assert abs(np.mean(errors)) < 3 * np.std(errors) / np.sqrt(len(errors)) + 0.05


def test_every_system_top_k_is_judged_first_then_the_draws_an_estimate_needs():
    session, truth, rankings = session_for(5, PolicyConfig(seed=5), systems=3)
    steps = walk(session, answer(truth), per_query=40)
    for qid in session.queries:
        mine = [s.pick for s in steps if s.pick.query_id == qid]
        top = {d for ranking in rankings.values() for d in ranking[qid][:FAIR_DEPTH]}
        assert {p.doc_id for p in mine[: len(top)]} == top
        assert [p.kind for p in mine[: len(top)]] == ["fair"] * len(top)
        # then the two candidate draws its estimate needs, before any feedback pick
        after = [p for p in mine[len(top) :]]
        assert [p.kind for p in after[:2]] == ["draw", "draw"]
        assert not any(p.draw.reserve for p in after[:2])


def test_the_cap_holds_and_a_capped_query_is_not_called_complete():
    session, truth, _ = session_for(7, PolicyConfig(seed=7, max_per_query=12))
    steps = walk(session, answer(truth), per_query=1000)
    for qid in session.queries:
        assert sum(1 for s in steps if s.pick.query_id == qid) == 12
        state = session.state(qid)
        assert state.capped
        if state.status == Status.COMPLETE:
            assert state.total.completeness_low >= 0.8
        assert state.more_to_certify is None


def test_the_walk_is_reproducible_and_seeds_differ():
    def picks(seed):
        session, truth, _ = session_for(9, PolicyConfig(seed=seed))
        return [(s.pick.query_id, s.pick.doc_id) for s in walk(session, answer(truth), 25)]

    assert picks(1) == picks(1)
    assert picks(1) != picks(2)


def test_draws_record_positive_probabilities_and_what_was_judged_before():
    session, truth, _ = session_for(13, PolicyConfig(seed=13))
    steps = walk(session, answer(truth), per_query=40)
    seen: dict[str, list[str]] = {}
    for step in steps:
        qid = step.pick.query_id
        if step.pick.draw is not None:
            draw = step.pick.draw
            assert 0 < draw.prob <= 1
            if not draw.reserve:
                frame = session.queries[qid].frame
                candidates = set(frame.doc_ids[: frame.candidates])
                assert set(draw.excluded) == {d for d in seen.get(qid, []) if d in candidates}
        seen.setdefault(qid, []).append(step.pick.doc_id)


def test_an_unjudged_draw_is_served_again_before_anything_else():
    session, truth, _ = session_for(17, PolicyConfig(seed=17))
    walk(session, answer(truth), per_query=20)
    pick = None
    for _ in range(10):
        pick = session.next_pick("q1")
        if pick and pick.kind == "draw":
            break
        session.record("q1", pick.doc_id, False)
    assert pick is not None and pick.kind == "draw"
    again = session.next_pick("q1")
    assert again.doc_id == pick.doc_id and again.draw == pick.draw


def test_the_rest_interval_is_positive_when_no_sample_was_relevant():
    bands = (BandSample("rank:101-300", 200, 10, 0), BandSample("rest", 800, 10, 0))
    samples = [RestSample(bands, 5.0) for _ in range(30)]
    model = fit_rest(samples)
    draws = rest_draws(model, samples[0], 4000, np.random.default_rng(0))
    assert np.quantile(draws, 0.975) > 0
    assert draws.min() >= 0 and draws.max() <= 1000 - 20


def test_a_deeper_band_is_never_estimated_richer_than_the_one_above():
    """Relevance does not rise with rank: 'rest' sampled little and never hit must not get a
    higher rate than the band above that was sampled a lot (its prior's half hit alone)."""
    hit = (BandSample("rank:101-300", 200, 100, 1), BandSample("rest", 5000, 1, 0))
    miss = (BandSample("rank:101-300", 200, 100, 0), BandSample("rest", 5000, 1, 0))
    model = fit_rest([RestSample(hit, 5.0)] + [RestSample(miss, 5.0) for _ in range(19)])
    assert model.rate("rest") > model.rate("rank:101-300")  # uncapped, the prior dominates
    only_rest = (BandSample("rank:101-300", 200, 200, 0), BandSample("rest", 5000, 1, 0))
    capped = rest_draws(model, RestSample(only_rest, 5.0), 4000, np.random.default_rng(1))
    # Capped, the rest's rate per passage is about band 101-300's (1.5 / 2000): 4 of 5000;
    # its own Jeffreys rate would say 0.5 / 20 per passage: 125.
    assert np.median(capped) < 20


def test_the_candidates_interval_reaches_as_far_as_the_models_expected_unjudged():
    """Thirty draws that hit no relevant candidate leave the draws' estimate below what was
    found, with a small spread; the model still expects 3 relevant among the unjudged, so the
    upper end must reach found + Poisson(3)'s 97.5% point (7), not stop near found."""
    from workbench.core.adaptive.estimate import CandidateTotal, combine

    rest = np.zeros(4000)
    quiet = CandidateTotal(4, 30, 3.0, 1.0, 1.0, 0.0)
    told = CandidateTotal(4, 30, 3.0, 1.0, 1.0, 3.0)
    assert combine(quiet, rest, 0, 0).high <= 6
    total = combine(told, rest, 0, 0)
    assert total.high >= 4 + 7 and total.low >= 4
    assert total.est == 4  # the point estimate is the draws' (never below what was found)


def test_the_rests_scale_weighs_relevant_candidates_by_their_depth():
    """A relevant candidate at rank 90 says more about the rest than one at rank 2: the scale
    counts each candidate by best rank / 100, a judged one by its grade, the others by the
    model's probability."""
    session, truth, _ = session_for(5, PolicyConfig(seed=5, refit_every=10_000))
    frame = session.queries["q0"].frame
    best = np.where(frame.ranks > 0, frame.ranks, np.inf).min(axis=1)[: frame.candidates]
    deep = next(i for i in range(frame.candidates) if best[i] >= 90)
    shallow = next(i for i in range(frame.candidates) if best[i] <= 2)
    session.record("q0", frame.doc_ids[deep], True, refit=False)
    session.record("q0", frame.doc_ids[shallow], False, refit=False)
    relevant = np.array(session.probabilities("q0")[: frame.candidates])
    relevant[deep], relevant[shallow] = 1.0, 0.0
    expected = float((best / 100 * relevant).sum())
    assert session.rest_sample("q0").weighted == pytest.approx(expected)
    assert session.rest_sample("q0").scale == pytest.approx((expected + 0.5) / 1000)


def test_a_regrade_or_a_refit_is_never_hidden_by_a_cache():
    """Regrading the query's last judged passage keeps its count and last index, and a refit
    changes no judgment: the candidates' total, the rest's scale and the probabilities must
    follow both (a live session must agree with one rebuilt from the store)."""
    session, truth, _ = session_for(5, PolicyConfig(seed=5, refit_every=10_000))
    frame = session.queries["q0"].frame
    for i in range(4):
        session.record("q0", frame.doc_ids[i], False, refit=False)
    before = session.candidates_total("q0").found
    weighted = session.rest_sample("q0").weighted
    session.record("q0", frame.doc_ids[3], True, refit=False)
    assert session.candidates_total("q0").found == before + 1
    assert session.rest_sample("q0").weighted > weighted
    for qid in session.queries:
        for d in frame.doc_ids[4:30]:
            session.record(qid, d, bool(truth.get(qid, {}).get(d)), refit=False)
    stale = session.rest_sample("q0").weighted
    session.refit()
    fresh = np.array(session.probabilities("q0")[: frame.candidates])
    best = np.where(frame.ranks > 0, frame.ranks, np.inf).min(axis=1)[: frame.candidates]
    for i, r in session.queries["q0"].grades.items():
        fresh[i] = float(r)
    assert session.rest_sample("q0").weighted == pytest.approx(float((best / 100 * fresh).sum()))
    assert session.rest_sample("q0").weighted != pytest.approx(stale)


def test_certification_needs_a_measured_interval():
    session, truth, _ = session_for(19, PolicyConfig(seed=19))
    for qid in session.queries:
        assert session.state(qid).status == Status.UNMEASURED


def test_no_estimate_before_any_reserve_passage_is_judged():
    """Before any query's reserve is sampled the rest may hold anything: no estimate, not a
    point estimate of the prior's middle (it read as a finding: 410 [5, 8342])."""
    session, truth, _ = session_for(21, PolicyConfig(seed=21, rest_share=0.0))
    walk(session, answer(truth), per_query=30)
    assert not any(i >= q.frame.candidates for q in session.queries.values() for i in q.grades)
    for qid in session.queries:
        state = session.state(qid)
        assert state.total.est is None and state.status == Status.UNMEASURED
    session.config = PolicyConfig(seed=21)
    walk(session, answer(truth), per_query=30)
    assert all(session.total(qid).est is not None for qid in session.queries)


def test_a_pending_draw_does_not_pass_the_cap():
    """A draw read back from the store and never judged is served next, but not past the cap
    (a second `simulate --per-query 100` judged a 101st)."""
    session, truth, _ = session_for(17, PolicyConfig(seed=17, max_per_query=12))
    walk(session, answer(truth), per_query=12)
    q = session.queries["q1"]
    unjudged = next(d for i, d in enumerate(q.frame.doc_ids) if i not in q.grades)
    session.restore_draw(Draw("q1", unjudged, 0.5, ()))
    assert q.pending is not None and len(q.grades) == 12
    assert session.next_pick("q1") is None


def test_frame_similarities_are_the_cosines_of_the_tfidf_vectors():
    from collections import Counter

    from workbench.core.adaptive.text import FrameIndex, Vectors, document_frequencies

    rng = random.Random(1)
    tokens = {f"d{i}": rng.choices(WORDS[:40], k=rng.randint(0, 20)) for i in range(50)}
    vectors = Vectors(tokens, document_frequencies(tokens), 50)
    ids = list(tokens)[:30]
    index = FrameIndex(ids, vectors)
    df = document_frequencies(tokens)

    def dense(words):
        counts = Counter(words)
        v = {t: (1 + np.log(c)) * (np.log(51 / (df.get(t, 0) + 1)) + 1) for t, c in counts.items()}
        norm = np.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    for i in (0, 7, 29):
        expected = [sum(dense(tokens[ids[i]]).get(t, 0) * w for t, w in dense(tokens[d]).items())
                    for d in ids]  # fmt: skip
        assert list(index.similarities(i)) == pytest.approx(expected, abs=1e-12)
    query = ["w1", "w2", "w2", "zzz"]
    expected = [sum(dense(query).get(t, 0) * w for t, w in dense(tokens[d]).items()) for d in ids]
    assert list(index.to_text(query)) == pytest.approx(expected, abs=1e-12)


def test_a_query_judged_through_is_known_exactly():
    """Every passage of the frame and of the corpus judged: |Rel| is what was found, with no
    interval around it, and the query is complete (the draws' residual noise kept the estimate a
    hair above the found count, and a query with none relevant could never be complete)."""
    config = PolicyConfig(seed=3, stop_when_certified=False)
    session, truth, _ = session_for(3, config, queries=3, corpus=150)
    walk(session, answer(truth), per_query=10_000)
    for qid, q in session.queries.items():
        assert len(q.grades) == len(q.frame.doc_ids)
        found = sum(1 for d in truth[qid] if d in q.position)
        state = session.state(qid)
        assert state.total.est == state.total.low == state.total.high == found
        assert state.status == Status.COMPLETE


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_when_the_walk_ends_no_query_under_its_cap_is_left_short_of_certified(seed):
    """Certification rests on models every query's grades move: a query found certified early
    may not be on the final models. The walk asks again at the end, so each query it leaves is
    certified on the models as they end, or has nothing left to judge."""
    session, truth, _ = session_for(seed, PolicyConfig(seed=seed), queries=8, corpus=500)
    walk(session, answer(truth), per_query=10_000)
    session.refit()
    for qid, q in session.queries.items():
        left = len(q.frame.doc_ids) - len(q.grades)
        assert session.state(qid).status == Status.COMPLETE or left == 0, qid


def test_a_study_whose_rest_holds_a_heavy_share_lets_queries_tails_differ_more():
    """The rest's share of the relevant by Horvitz-Thompson over the reserve (hits x size /
    judged) against the candidates' estimated relevant; at HEAVY_REST or more, alpha is fitted
    only up to HEAVY_ALPHA (a query's rest follows its scale loosely there: cisi)."""
    from workbench.core.adaptive.rest import HEAVY_ALPHA, HEAVY_REST, outside_share

    def study(hits: int, candidates: float) -> list[RestSample]:
        band = BandSample("rank:101-300", 200, 20, hits)
        missed = BandSample("rank:101-300", 200, 20, 0)
        return [RestSample((band if q % 2 else missed,), 4.0, candidates) for q in range(40)]

    light, heavy = study(1, 40.0), study(2, 10.0)
    # per query with a hit: 1 x 200 / 20 = 10 outside against 40 candidates; half the queries
    assert outside_share(light) == pytest.approx(200 / (200 + 1600))
    assert outside_share(heavy) == pytest.approx(0.5) and HEAVY_REST <= 0.5
    assert max(alpha for _, alpha, _ in fit_rest(light).grid) > HEAVY_ALPHA
    assert max(alpha for _, alpha, _ in fit_rest(heavy).grid) == HEAVY_ALPHA
    assert fit_rest(heavy).outside == outside_share(heavy)
    unjudged = [RestSample((BandSample("rank:101-300", 200, 0, 0),), 4.0, 10.0)]
    assert outside_share(unjudged) is None


@pytest.mark.parametrize("seed", [3, 8])
def test_grades_recorded_before_the_vectors_are_built_count_as_those_recorded_after(seed):
    """The app records the fair start's grades before the passages' vectors exist (built in a
    thread): a session given its vectors later, with a regrade in between and the refit
    deferred, has the features, the model and the walk's next picks of one built at once."""
    from workbench.core.adaptive.chooser import needs_vectors
    from workbench.core.adaptive.text import Vectors, document_frequencies

    ids, tokens, query_tokens, truth, rankings = study(seed)
    frames = [
        build_frame(q, {s: r[q] for s, r in rankings.items()}, ids, seed) for q in query_tokens
    ]
    config = PolicyConfig(seed=seed)
    eager = AdaptiveSession(frames, tokens, query_tokens, len(ids), config)
    built: list[int] = []

    def vectors() -> Vectors:
        built.append(1)
        return Vectors(tokens, document_frequencies(tokens), len(ids))

    lazy = AdaptiveSession(frames, {}, query_tokens, len(ids), config, vectors=vectors)
    for session in (eager, lazy):
        for n, (qid, q) in enumerate(session.queries.items()):
            fair = [q.frame.doc_ids[i] for i in q.frame.fair_order]
            for d in fair[:-1]:
                session.record(qid, d, bool(truth.get(qid, {}).get(d)), refit=False)
            # the last fair pick of the last query is the one whose next pick needs them
            last = n == len(session.queries) - 1
            assert needs_vectors(session, qid, fair[-1]) == (session is lazy and last)
            session.record(qid, fair[-1], bool(truth.get(qid, {}).get(fair[-1])), refit=False)
            session.record(qid, fair[0], not truth.get(qid, {}).get(fair[0]), refit=False)
        session.refit(deferred=True)
    assert not built and not lazy.vectors_built  # nothing so far needed them
    for qid in eager.queries:
        a, b = eager.queries[qid], lazy.queries[qid]
        assert (eager.features(a, leave_out=True) == lazy.features(b, leave_out=True)).all()
    assert built == [1]
    for qid in eager.queries:
        assert eager.next_pick(qid) == lazy.next_pick(qid)
    assert (eager.weights == lazy.weights).all()
    assert walk(eager, answer(truth), 40) == walk(lazy, answer(truth), 40)


def test_until_the_vectors_are_built_the_chooser_serves_fair_starts_and_builds_none():
    """A resumed app whose current query is past its fair start: its next pick needs every
    passage's vector (seconds at 100,000 x 500, built in a thread), so the chooser serves the
    other queries' fair starts first, in the store's order from there, and builds nothing;
    once no fair start is left, the pick builds them (the app refuses that grade's key until
    its thread has: `needs_vectors`)."""
    from workbench.core.adaptive.chooser import needs_vectors, policy_chooser
    from workbench.core.adaptive.text import Vectors, document_frequencies

    ids, tokens, query_tokens, truth, rankings = study(5, queries=4)
    frames = [build_frame(q, {s: r[q] for s, r in rankings.items()}, ids, 5) for q in query_tokens]
    built: list[int] = []

    def vectors() -> Vectors:
        built.append(1)
        return Vectors(tokens, document_frequencies(tokens), len(ids))

    session = AdaptiveSession(
        frames, {}, query_tokens, len(ids), PolicyConfig(seed=5), vectors=vectors
    )
    order = list(session.queries)
    first = session.queries[order[1]]
    for i in first.frame.fair_order:
        session.record(order[1], first.frame.doc_ids[i], bool(i % 2), refit=False)
    session.refit(deferred=True)
    choose = policy_chooser(session, order, ranked=lambda: list(reversed(order)), batch=1)
    served, current = [], order[1]
    while not needs_vectors(session, *(pick := choose(current, frozenset()))):
        assert not built
        served.append(pick[0])
        session.record(*pick, False, refit=False)
        current = pick[0]
    fair = {q: len(session.queries[q].frame.fair_order) for q in order}
    assert served == [q for q in order[2:] + order[:1] for _ in range(fair[q])][:-1]
    assert not built and pick[0] == order[0]
    session.record(*pick, False, refit=False)
    assert choose(pick[0], frozenset()) is not None and built == [1]
