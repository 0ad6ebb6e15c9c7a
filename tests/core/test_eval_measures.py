"""Adding a measure is one definition: registered once, it reaches the per-query JSON, the
means and every table of `workbench eval`, headed and formatted as the measure says."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.measures.metrics import MEASURES, Measure, QueryView, register

ROOT = Path(__file__).resolve().parents[2]
SEED = ["--qrels", str(ROOT / "golden" / "seed-example.yaml"),
        "--run", str(ROOT / "golden" / "seed-example.run"), "-k", "1,5"]  # fmt: skip
QIDS = ["q_faw", "q_store", "q_milk", "q_broad"]


def success_at(view: QueryView, k: int) -> float:
    """1 when any relevant document is in the top k, else 0."""
    return float(any(i < k and g >= view.rel_threshold for i, g in view.hits))


@pytest.fixture
def success() -> Iterator[Measure]:
    """success@k in the registry for one test: a percentage headed `hit@k` in tables."""
    measure = register(
        Measure("success", "1 when a relevant doc is in the top k", success_at,
                header="hit@{k}", percent=True)
    )  # fmt: skip
    yield measure
    del MEASURES["success"]


def eval_out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["eval", *SEED, *argv]) == 0
    return capsys.readouterr().out


def test_a_registered_measure_reaches_json_means_and_tables(success, capsys):
    report = json.loads(eval_out(capsys, "--json"))
    run = report["runs"]["seed"]
    # top 1: m2 (relevant), d2 (unjudged), d1, m1; every query has a relevant doc in its top 5
    assert [run["per_query"][q]["success@1"] for q in QIDS] == [1.0, 0.0, 1.0, 1.0]
    assert [run["per_query"][q]["success@5"] for q in QIDS] == [1.0] * 4
    assert run["mean"]["success@1"] == 0.75 and run["mean"]["success@5"] == 1.0
    assert list(run["mean"])[:2] == ["P@1", "P@5"]  # the defaults keep their places

    lines = eval_out(capsys, "--wide").splitlines()  # every column, whatever the width
    header = next(line for line in lines if line.startswith("query"))
    assert header.split()[-2:] == ["hit@1", "hit@5"]  # after the default columns
    assert next(line for line in lines if line.startswith("q_store")).split()[-2:] == [
        "0%",
        "100%",
    ]
    assert next(line for line in lines if line.startswith("mean")).endswith("75%   100%")

    markdown = eval_out(capsys, "--format", "markdown")
    assert "| judged@5 | hit@1 | hit@5 |" in markdown
    assert "| 80% | 100% | 100% |" in markdown  # q_broad: judged@5, then hit@1 and hit@5

    page = eval_out(capsys, "--format", "html")
    assert '<th title="1 when a relevant doc is in the top k">hit@1</th>' in page
    assert '<td class="right">75%</td>' in page


def test_undone_it_is_gone(capsys):
    report = json.loads(eval_out(capsys, "--json"))
    assert not any(key.startswith("success") for key in report["runs"]["seed"]["mean"])
    assert "hit@1" not in eval_out(capsys)
