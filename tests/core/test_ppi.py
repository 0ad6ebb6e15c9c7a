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
from workbench.core.judges.ppi import humans_needed, ppi_mean
from workbench.core.model import Judgment, Role
from workbench.store import open_store


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


def test_eval_with_a_judge_but_no_recorded_design_says_why_instead_of_assuming(tmp_path, capsys):
    """Human labels in queue order are not a probability sample: no row is computed under the
    assumption that they are, and the report says why."""
    db = tmp_path / "s.db"
    store = build_store(db, queries=3, per_query=10)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(3) for i in range(10)]
    store.add_judgments(
        [
            Judgment("llm", q, d, 2 if i % 3 else 0, role=Role.MODEL)
            for i, (q, d) in enumerate(items)
        ]
        + [Judgment("ann", q, d, 2) for q, d in items[:12]]
    )
    store.close()
    run = tmp_path / "r.run"
    run.write_text(
        "".join(f"q{q} Q0 d{q}-{i:03d} {i + 1} {10 - i} sys\n" for q in range(3) for i in range(6))
    )
    argv = ["eval", "--qrels", str(db), "--judge", "llm", "--run", str(run), "-k", "5"]
    assert main([*argv, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [r["measure"] for r in out["runs"]] == ["P@5", "R@5", "nDCG@5"]
    assert all(r["estimate"] is None for r in out["runs"])
    assert all("no recorded design draw" in r["unavailable"] for r in out["runs"])
    assert out["design"] == {"recorded": False, "human_labels": 12}
    assert main(argv) == 1
    assert "no recorded design draw" in capsys.readouterr().out
    assert main(["eval", "--qrels", str(db), "--judge", "ann", "--run", str(run)]) == 2
    assert "a model judge is needed" in capsys.readouterr().err


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
    )
    store.close()
    assert main(["draw-sample", "--db", str(db), "--judge", "perfect", "--share", "0.3",
                 "--seed", "2"]) == 0  # fmt: skip
    with open_store(db) as store:
        design = store.design()
        assert design is not None
        store.add_judgments(
            [
                Judgment("ann", q, d, 2 if truth[(q, d)] else 0)
                for q, d in (i.key for i in design.drawn())
            ]
        )
    capsys.readouterr()
    run = tmp_path / "short.run"
    run.write_text("".join(f"{q} Q0 {d} 1 {9 - int(d[-1])} s\n" for q, d in items))
    assert main(["eval", "--qrels", str(db), "--judge", "perfect", "--run", str(run),
                 "-k", "10", "--json"]) == 0  # fmt: skip
    got = json.loads(capsys.readouterr().out)["runs"][0]["estimate"]
    true_p = sum(truth.values()) / (10 * 40)
    assert got["judge_only"] == pytest.approx(true_p)
    assert got["estimate"] == pytest.approx(true_p, abs=0.01)  # was 0.142 against 0.2475
    assert got["ci"][0] - 1e-9 <= true_p <= got["ci"][1] + 1e-9  # a perfect judge: width 0


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
    assert "R@5" in outputs["markdown"] and "no recorded design draw" in outputs["markdown"]
