"""A draw counts once (issue 41, item 3): a second oracle judging the same drawn passages adds
no evidence, so no interval narrows and no forecast moves."""

from __future__ import annotations

import json

from adaptive_fixtures import make_study, pool

from workbench.cli import main


def _figures(made: dict, capsys) -> tuple[dict, dict]:
    args = ["eval", "--qrels", str(made["db"]), "-k", "10", "--json"]
    for run in made["runs"]:
        args += ["--run", str(run)]
    assert main(args) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    study = {name: run["study"] for name, run in runs.items()}
    assert main(["coverage", "--db", str(made["db"]), "--json"]) == 0
    coverage = json.loads(capsys.readouterr().out)
    keep = ("est_rel", "est_rel_low", "est_rel_high", "status")
    per_query = {q: {k: v.get(k) for k in keep} for q, v in coverage["queries"].items()}
    return study, {"queries": per_query, "study": coverage.get("study")}


def test_a_second_oracle_on_the_same_draws_changes_no_interval(tmp_path, capsys):
    made = make_study(tmp_path)
    assert pool(made) == 0
    oracle = ["simulate", "--db", str(made["db"]), "--oracle", str(made["qrels"])]
    assert main([*oracle, "--per-query", "30", "--no-stop"]) == 0
    capsys.readouterr()
    before = _figures(made, capsys)
    assert any(i["low"] is not None for s in before[0].values() for i in s.values())
    assert main([*oracle, "--annotator", "oracle2", "--per-query", "30", "--no-stop"]) == 0
    capsys.readouterr()
    assert _figures(made, capsys) == before


def test_a_run_scored_later_says_how_much_rests_on_the_model(tmp_path, capsys):
    """Numerators earned: a pooled run's top 10 is judged first (nothing imputed); a run pooled
    with no system of its own has unjudged passages in its top 10, drawn at the relevance
    model's probability under weights drawn from the fit's posterior, and its figures say the
    share that rests on the model."""
    from workbench.core.study import study_draws
    from workbench.flows.coverage import adaptive_session
    from workbench.store import Store

    made = make_study(tmp_path)
    pooled, later = made["runs"]
    made["runs"] = [pooled]
    assert pool(made) == 0
    oracle = ["simulate", "--db", str(made["db"]), "--oracle", str(made["qrels"])]
    assert main([*oracle, "--per-query", "30", "--no-stop"]) == 0
    capsys.readouterr()
    args = ["eval", "--qrels", str(made["db"]), "-k", "10", "--run", str(pooled), "--run",
            str(later)]  # fmt: skip
    assert main([*args, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert runs[pooled.stem]["study"]["R@10"]["imputed"] == 0
    share = runs[later.stem]["study"]["R@10"]["imputed"]
    assert 0 < share <= 1
    assert main(args) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert f"{round(share * 100)}% of its top-k places unjudged" in said
    with Store(made["db"]) as store:
        draws = study_draws(adaptive_session(store))
    qd = next(qd for qd in draws.queries.values() if qd.p)
    doc = next(iter(qd.p))
    assert draws.weights is not None and draws.probabilities(qd.query_id, doc).std() > 0
