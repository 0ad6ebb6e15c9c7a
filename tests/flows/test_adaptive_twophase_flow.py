"""Two-phase sampling is an experiment, off by default: a model judge that labelled the whole
pool (the reserve included), chosen with `simulate --judge`, leaves the reserve's human draws a
simple random sample of each band (the judge a covariate of the candidates only), `coverage`
reads the one-phase estimate back; the same judgments read with two-phase sampling on give its
model (each stratum's judged passages are still a random sample of it)."""

from __future__ import annotations

import json

import pytest
from adaptive_fixtures import make_study, pool

from workbench.cli import main
from workbench.core.adaptive import PolicyConfig
from workbench.core.adaptive.twophase import TwoPhaseModel, reserve_positives
from workbench.flows.adaptive import session_from_store
from workbench.store import Store


def test_simulate_with_a_judge_of_the_reserve_draws_it_by_stratum(tmp_path, capsys):
    s = make_study(tmp_path)
    db = str(s["db"])
    assert pool(s, "--seed", "2") == 0
    with Store(db) as store:
        entries = store.pool()
    labels = tmp_path / "judge.qrels"
    truth = s["truth"]

    def label(query_id: str, doc_id: str) -> int:
        """The truth, and an over-grader's false positive on every fifth passage."""
        return max(truth.get(query_id, {}).get(doc_id, 0), int(int(doc_id[1:]) % 5 == 0))

    labels.write_text("".join(f"{e.query_id} 0 {e.doc_id} {label(e.query_id, e.doc_id)}\n"
                              for e in entries))  # fmt: skip
    assert main(["import-labels", "--db", db, "--as", "llm", str(labels)]) == 0
    simulate = ["simulate", "--db", db, "--oracle", str(s["qrels"]), "--per-query", "60"]
    assert main([*simulate, "--no-stop", "--judge", "llm"]) == 0
    capsys.readouterr()
    with Store(db) as store:
        session = session_from_store(store)
        draws = [d for d in store.draws() if d.reserve]
    assert not isinstance(session.rest_model(), TwoPhaseModel)
    assert draws
    taken: dict[tuple[str, int], int] = {}
    for draw in draws:  # in order: each of its band's passages left, as likely (one phase)
        q = session.queries[draw.query_id]
        n, band = next((n, b) for n, b in enumerate(q.frame.bands)
                       if q.position[draw.doc_id] in b.members)  # fmt: skip
        before = taken.get((draw.query_id, n), 0)
        assert draw.prob == pytest.approx(1.0 / (len(band.members) - before))
        taken[(draw.query_id, n)] = before + 1
    positives = [reserve_positives(q, session.judge) for q in session.queries.values()]
    assert any(positives)  # the judge labelled reserve passages relevant: strata were possible
    with Store(db) as store:
        on = session_from_store(store, PolicyConfig(two_phase=True))
    assert isinstance(on.rest_model(), TwoPhaseModel)
    assert main(["coverage", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judge"]["name"] == "llm"
