"""Krippendorff's ordinal alpha against the `krippendorff` package, with missing ratings and
any number of raters; and `agree` between any two label sources."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.agreement.krippendorff import ordinal_alpha
from workbench.store import open_store


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(2, 30),
    st.integers(0, 2**32 - 1),
    st.floats(0.0, 0.6),
)
def test_ordinal_alpha_matches_the_krippendorff_package(raters, units, seed, missing):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, units)
    data = np.clip(truth + rng.integers(-1, 2, (raters, units)), 0, 3).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    ratings = [[int(v) for v in data[:, u] if not np.isnan(v)] for u in range(units)]
    mine, _, _ = ordinal_alpha(ratings, [0, 1, 2, 3])
    pairable = sum(1 for r in ratings if len(r) >= 2)
    if mine is None:  # nothing pairable, or one grade throughout: the package has no figure
        assert pairable == 0 or len({g for r in ratings if len(r) >= 2 for g in r}) == 1
        return
    reference = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
    )
    assert mine == __import__("pytest").approx(reference, abs=1e-9)


def write_qrels(path: Path, rows: list[tuple[str, str, int]]) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    return str(path)


def test_agree_between_two_label_files_without_a_store(tmp_path, capsys):
    rng = np.random.default_rng(3)
    items = [(f"q{i % 4}", f"d{i}") for i in range(40)]
    first = [(q, d, int(g)) for (q, d), g in zip(items, rng.integers(0, 4, 40), strict=True)]
    second = [(q, d, min(3, g + int(rng.integers(0, 2)))) for q, d, g in first[:30]]
    a = write_qrels(tmp_path / "round1.qrels", first)
    b = write_qrels(tmp_path / "round2.qrels", second + [("q9", "other", 1)])
    assert main(["agree", a, b, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (pair,) = report["pairs"]
    assert pair["annotators"] == ["round1.qrels", "round2.qrels"] and pair["n"] == 30
    alpha = report["krippendorff_alpha"]
    data = np.full((2, 41), np.nan)
    for u, (_, _, g) in enumerate(first):
        data[0, u] = g
    for u, (_, _, g) in enumerate(second):
        data[1, u] = g
    data[1, 40] = 1
    expected = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
    )
    assert alpha["alpha"] == __import__("pytest").approx(expected, abs=1e-9)
    assert main(["agree", a, b]) == 0
    assert "Krippendorff's alpha" in capsys.readouterr().out
    assert main(["agree", a]) == 2 and main(["agree", a, a]) == 2
    assert main(["agree", a, b, "--db", str(tmp_path / "x.db")]) == 2


def test_an_llm_against_existing_qrels_imported_as_a_human_round(tmp_path, capsys):
    db = tmp_path / "s.db"
    build_store(db, queries=2, per_query=10).close()
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(2) for i in range(10)]
    trec = write_qrels(
        tmp_path / "trec.qrels", [(q, d, (i * 7) % 4) for i, (q, d) in enumerate(items)]
    )
    llm = write_qrels(
        tmp_path / "llm.qrels", [(q, d, (i * 5) % 4) for i, (q, d) in enumerate(items)]
    )
    assert main(["import-labels", trec, "--db", str(db), "--as", "trec", "--role", "human"]) == 0
    assert main(["import-labels", llm, "--db", str(db), "--as", "gpt", "--json"]) == 0
    capsys.readouterr()
    with open_store(db) as store:
        assert store.annotators() == {"gpt": "model", "trec": "human"}
    assert main(["agree", "--db", str(db), "--pair", "gpt", "trec", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["annotators"] for p in report["pairs"]] == [["gpt", "trec"]]
    assert report["pairs"][0]["n"] == 20 and report["judges"] == []
    assert main(["agree", "--db", str(db), "--pair", "gpt", "nobody"]) == 2
    assert "nobody graded nothing" in capsys.readouterr().err
    # a name keeps its role: a human round cannot be re-imported as a model
    assert main(["import-labels", trec, "--db", str(db), "--as", "trec"]) == 2
