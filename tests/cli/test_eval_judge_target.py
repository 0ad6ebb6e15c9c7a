"""`eval --judge NAME --target M@K:W` (issue 44, item 6): the human labels one corrected
measure's interval needs to be W wide, said in the stopping-rule form the adaptive study uses;
`--target-width W`, its former spelling (W for every measure), a hidden alias."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.model import Judgment, Role
from workbench.store import open_store


@pytest.fixture
def drawn(tmp_path: Path, capsys) -> list[str]:
    """A static store with a model judge 'llm', a recorded design drawn and judged by a
    person; the `eval --judge` command line on one run (without --target)."""
    location = str(tmp_path / "s.db")
    store = build_store(location, queries=8, per_query=10)
    rng = random.Random(3)
    items = [(f"q{q}", f"d{q}-{i:03d}") for q in range(8) for i in range(10)]
    truth = {it: rng.choice([0, 0, 1, 2, 3]) for it in items}
    store.add_judgments([Judgment("llm", q, d, truth[(q, d)], role=Role.MODEL) for q, d in items])
    store.close()
    draw = ["draw-sample", "--db", location, "--judge", "llm", "--share", "0.5", "--seed", "7"]
    assert main(draw) == 0
    with open_store(location) as opened:
        design = opened.design()
    assert design is not None
    labels = tmp_path / "h.qrels"
    labels.write_text(
        "".join(f"{q} 0 {d} {truth[(q, d)]}\n" for q, d in (i.key for i in design.drawn()))
    )
    assert main(["import-labels", "--db", location, "--as", "ann", "--role", "human",
                 str(labels)]) == 0  # fmt: skip
    run = tmp_path / "r.run"
    run.write_text("".join(f"q{q} Q0 d{q}-{i:03d} {i + 1} {10 - i} s\n"
                           for q in range(8) for i in range(10)))  # fmt: skip
    capsys.readouterr()
    return ["eval", "--qrels", location, "--judge", "llm", "--run", str(run), "-k", "5"]


def _needed(argv: list[str], capsys) -> dict[str, int | None]:
    main([*argv, "--json"])
    rows = json.loads(capsys.readouterr().out)["runs"]
    return {row["measure"]: row["humans_for_target_width"] for row in rows}


def test_target_asks_one_measure_and_target_width_every_one(drawn, capsys):
    every = _needed([*drawn, "--target-width", "0.1"], capsys)
    assert set(every) == {"P@5", "R@5", "nDCG@5"} and every["P@5"] is not None
    one = _needed([*drawn, "--target", "P@5:0.1"], capsys)
    assert one == {"P@5": every["P@5"], "R@5": None, "nDCG@5": None}
    assert _needed(drawn, capsys) == dict.fromkeys(every)
    main([*drawn, "--target", "P@5:0.1"])
    shown = capsys.readouterr().out
    assert "for width" in shown


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--target", "P@10:0.1"], "its cutoff is none of -k 5"),
        (["--target", "P@5:1"], "an interval width between 0 and 1"),
        (["--target", "MRR@5:0.1"], "--target 'MRR@5:0.1'"),
        (["--target", "P@5:0.1", "--target-width", "0.1"], "give one (--target M@K:W)"),
    ],
)
def test_a_target_that_fits_no_row_exits_2_naming_it(drawn, capsys, extra, said):
    assert main([*drawn, *extra]) == 2
    assert said in capsys.readouterr().err


def test_target_needs_a_judge_and_its_old_spelling_is_hidden(tmp_path, capsys):
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d1 1 1 s\n")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n")
    argv = ["eval", "--qrels", str(qrels), "--run", str(run), "--target", "P@10:0.1"]
    assert main(argv) == 2
    assert "--target: with --judge" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    shown = capsys.readouterr().out
    assert "--target MEASURE@K:WIDTH" in shown and "--target-width" not in shown
