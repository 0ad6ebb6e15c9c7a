"""Two-phase sampling through the commands: a model judge that labelled the whole pool (the
reserve included), chosen with `simulate --judge`, makes the reserve's human draws a stratified
sample by its label, each draw's probability that of its stratum, and `coverage` reads the
two-phase estimate back from the store."""

from __future__ import annotations

import json

from test_adaptive_store import make_study, pool

from workbench.cli import main
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
    assert isinstance(session.rest_model(), TwoPhaseModel)
    assert draws
    positive_draws = 0
    for draw in draws:
        q = session.queries[draw.query_id]
        i = q.position[draw.doc_id]
        band = next(b for b in q.frame.bands if i in b.members)
        positives = reserve_positives(q, session.judge)
        stratum = [j for j in band.members if (j in positives) == (i in positives)]
        # drawn from its stratum's passages not judged before it: at least 1 / the stratum
        assert 1.0 / len(stratum) <= draw.prob + 1e-12
        positive_draws += i in positives
    assert 0 < positive_draws < len(draws)
    assert main(["coverage", "--db", db, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judge"]["name"] == "llm"
