"""Metrics from a model judge corrected by a few human labels (prediction-powered inference),
checked against ppi-python."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.model import Judgment, Role
from workbench.core.ppi import humans_needed, ppi_mean


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 80), st.integers(2, 300), st.integers(0, 2**32 - 1), st.floats(0.5, 1.0))
def test_the_estimate_and_interval_equal_ppi_python(n, big_n, seed, accuracy):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(float)
    f = np.where(rng.random(n) < accuracy, y, 1 - y)
    unlabeled = rng.integers(0, 2, big_n).astype(float)
    for lam in (1.0, None):  # PPI, and PPI++ (lam tuned)
        mine = ppi_mean(list(y), list(f), list(unlabeled), lam=lam)
        assert mine is not None
        if lam is None and np.var(np.concatenate([f, unlabeled])) == 0:
            assert mine.lam == 0  # a constant judge counts for nothing (ppi-python: nan)
            continue
        low, high = ppi_mean_ci(y, f, unlabeled, alpha=0.05, lam=lam)
        point = ppi_mean_pointestimate(y, f, unlabeled, lam=lam)
        assert mine.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-9)
        assert (mine.low, mine.high) == pytest.approx(
            (float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9
        )


def test_humans_needed_reaches_the_width():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60).astype(float)
    f = np.where(rng.random(60) < 0.85, y, 1 - y)
    estimate = ppi_mean(list(y), list(f), list(rng.integers(0, 2, 2000).astype(float)))
    assert estimate is not None
    need = humans_needed(estimate, 0.1)
    assert need is not None
    half = 1.959963984540054 * np.sqrt(
        estimate.imputed_var / estimate.unlabeled + estimate.rectifier_var / need
    )
    assert 2 * half <= 0.1 + 1e-12
    assert humans_needed(estimate, 0.001) is None  # the judge's own spread is wider than that


def test_eval_with_a_judge_corrects_p_at_k_by_the_human_labels(tmp_path, capsys):
    db = tmp_path / "s.db"
    store = build_store(db, queries=3, per_query=10)
    rng = np.random.default_rng(7)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(3) for i in range(10)]
    truth = {item: bool(rng.random() < 0.4) for item in items}
    judge = {item: truth[item] if rng.random() < 0.8 else not truth[item] for item in items}
    humans = [item for item in items if rng.random() < 0.4]
    store.add_judgments(
        [Judgment("llm", q, d, 2 if judge[(q, d)] else 0, role=Role.MODEL) for q, d in items]
        + [Judgment("ann", q, d, 2 if truth[(q, d)] else 0) for q, d in humans]
    )
    store.close()
    run = tmp_path / "r.run"
    run.write_text(
        "".join(f"q{q} Q0 d{q}-{i:03d} {i + 1} {10 - i} sys\n" for q in range(3) for i in range(6))
    )
    assert main(["eval", "--qrels", str(db), "--judge", "llm", "--run", str(run), "-k", "5",
                 "--json", "--target-width", "0.9"]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)["runs"]
    assert [r["measure"] for r in rows] == ["P@5", "R@5", "nDCG@5"]
    assert rows[1]["estimate"] is None and rows[1]["labeled_queries"] == 0  # too few queries
    row = rows[0]
    slots = [(f"q{q}", f"d{q}-{i:03d}") for q in range(3) for i in range(5)]
    labeled = [s for s in slots if s in humans]
    rest = [s for s in slots if s not in humans]
    y = np.array([float(truth[s]) for s in labeled])
    f = np.array([float(judge[s]) for s in labeled])
    u = np.array([float(judge[s]) for s in rest])
    low, high = ppi_mean_ci(y, f, u, alpha=0.05)  # PPI++ (lam tuned), as eval --judge
    got = row["estimate"]
    assert got["human_labels"] == len(labeled) and got["judge_only_items"] == len(rest)
    assert got["estimate"] == pytest.approx(float(np.squeeze(ppi_mean_pointestimate(y, f, u))))
    assert got["ci"] == pytest.approx([float(np.squeeze(low)), float(np.squeeze(high))])
    assert row["humans_for_target_width"] is not None
    assert main(["eval", "--qrels", str(db), "--judge", "llm", "--run", str(run), "-k", "5"]) == 0
    assert "corrected" in capsys.readouterr().out
    assert main(["eval", "--qrels", str(db), "--judge", "ann", "--run", str(run)]) == 2
    assert "a model judge is needed" in capsys.readouterr().err


def test_recall_and_ndcg_are_corrected_over_the_queries_humans_judged_fully(tmp_path, capsys):
    from workbench.core.metrics import score_query

    db = tmp_path / "s.db"
    store = build_store(db, queries=60, per_query=8)
    rng = np.random.default_rng(11)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(60) for i in range(8)]
    truth = {it: int(rng.integers(0, 4)) if rng.random() < 0.5 else 0 for it in items}
    judge = {it: truth[it] if rng.random() < 0.75 else int(rng.integers(0, 4)) for it in items}
    full = [f"q{q}" for q in range(60) if rng.random() < 0.45]
    assert len(full) >= 20
    store.add_judgments(
        [Judgment("llm", q, d, judge[(q, d)], role=Role.MODEL) for q, d in items]
        + [Judgment("ann", q, d, truth[(q, d)]) for q, d in items if q in full]
    )
    store.close()
    run = tmp_path / "r.run"
    run.write_text("".join(f"{q} Q0 {d} 1 {rng.random():.6f} sys\n" for q, d in items))
    assert main(["eval", "--qrels", str(db), "--judge", "llm", "--run", str(run), "-k", "5",
                 "--json"]) == 0  # fmt: skip
    rows = {r["measure"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    from workbench.formats import read_run

    ranked = read_run(run).rankings()
    for measure in ("R", "nDCG"):

        def value(grades: dict, q: str, measure: str = measure) -> float:
            qrels = {d: g for (qq, d), g in grades.items() if qq == q}
            got = score_query(ranked[q], qrels, [5], measures=[measure]).values[f"{measure}@5"]
            return 0.0 if got is None else got

        queries = [f"q{q}" for q in range(60)]
        y = np.array([value(truth, q) for q in queries if q in full])
        f = np.array([value(judge, q) for q in queries if q in full])
        u = np.array([value(judge, q) for q in queries if q not in full])
        low, high = ppi_mean_ci(y, f, u, alpha=0.05)
        got = rows[f"{measure}@5"]["estimate"]
        assert got["human_labels"] == len(full) and rows[f"{measure}@5"]["unit"] == "queries"
        assert got["ci"] == pytest.approx([float(np.squeeze(low)), float(np.squeeze(high))])


def test_short_rankings_do_not_bias_p_at_k(tmp_path, capsys):
    """Slots past the end of a ranking are known zeros, not human labels (the reviewer's case:
    40 queries of 5 documents, k = 10, a perfect judge)."""
    db = tmp_path / "p.db"
    store = build_store(db, queries=40, per_query=5)
    rng = np.random.default_rng(5)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(40) for i in range(5)]
    truth = {it: bool(rng.random() < 0.5) for it in items}
    store.add_judgments(
        [Judgment("perfect", q, d, 2 if truth[(q, d)] else 0, role=Role.MODEL) for q, d in items]
        + [Judgment("ann", q, d, 2 if truth[(q, d)] else 0) for q, d in items if rng.random() < 0.3]
    )
    store.close()
    run = tmp_path / "short.run"
    run.write_text("".join(f"{q} Q0 {d} 1 {9 - int(d[-1])} s\n" for q, d in items))
    assert main(["eval", "--qrels", str(db), "--judge", "perfect", "--run", str(run),
                 "-k", "10", "--json"]) == 0  # fmt: skip
    got = json.loads(capsys.readouterr().out)["runs"][0]["estimate"]
    true_p = sum(truth.values()) / (10 * 40)
    assert got["judge_only"] == pytest.approx(true_p)
    assert got["estimate"] == pytest.approx(true_p, abs=0.01)  # was 0.142 against 0.2475
    assert got["ci"][0] <= true_p <= got["ci"][1]


def test_eval_with_a_judge_renders_as_text_markdown_and_html_with_names_inert(tmp_path, capsys):
    db = tmp_path / "s.db"
    store = build_store(db, queries=2, per_query=8)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(2) for i in range(8)]
    name = "j|<b>\x1b[2J"
    store.add_judgments(
        [Judgment(name, q, d, 2 if i % 2 else 0, role=Role.MODEL) for i, (q, d) in enumerate(items)]
        + [Judgment("ann", q, d, 2 if i % 3 else 0) for i, (q, d) in enumerate(items) if i % 2]
    )
    store.close()
    run = tmp_path / "r.run"
    run.write_text("".join(f"q{q} Q0 d{q}-{i:03d} {i + 1} {9 - i} sys\n"
                           for q in range(2) for i in range(8)))  # fmt: skip
    argv = ["eval", "--qrels", str(db), "--judge", name, "--run", str(run), "-k", "5"]
    outputs = {}
    for fmt in ("table", "markdown", "html"):
        main([*argv, "--format", fmt])
        outputs[fmt] = capsys.readouterr().out
        assert "\x1b" not in outputs[fmt]
    assert "corrected" in outputs["table"] and "␛[2J" in outputs["table"]
    header = next(line for line in outputs["markdown"].splitlines() if "| corrected |" in line)
    assert header.count("|") == 9  # 8 columns: the judge's '|' does not split a row
    assert "j\\|" in outputs["markdown"]
    assert "<b>" not in outputs["html"] and "&lt;b&gt;" in outputs["html"]
    assert "R@5" in outputs["markdown"] and "queries fully judged by humans" in outputs["markdown"]
