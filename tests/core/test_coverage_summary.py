"""The coverage summary that export writes into golden.yaml (and `eval --qrels STORE` reads):
figures meant for people, rounded (est. |Rel| to 1 decimal, completeness to 3), each bound
rounded outwards so the rounded interval still holds the estimate's interval and the status
stays what the unrounded figures decided. `coverage --json` keeps every figure as computed."""

from __future__ import annotations

import json
import math
import re

import pytest
from coverage_fixtures import build_store

from workbench.cli import main
from workbench.flows.coverage import coverage_for_store, summary_for_store
from workbench.store import Store

ONE_DECIMAL = ("est_rel", "est_rel_low", "est_rel_high")
THREE_DECIMALS = ("completeness", "completeness_low")


def decimals(value: float) -> int:
    text = repr(float(value))
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("summary") / "study.db")


def test_summary_figures_are_rounded_outwards_and_keep_the_status(db):
    with Store(db) as store:
        raw = coverage_for_store(store)
        slot = summary_for_store(store)
    assert any(decimals(row.completeness_low) > 3 for row in raw.queries.values())
    complete_at = slot["thresholds"]["complete_at"]
    for qid, row in slot["queries"].items():
        exact = raw.queries[qid]
        for key in ONE_DECIMAL:
            assert decimals(row[key]) <= 1, (qid, key, row[key])
        for key in THREE_DECIMALS:
            assert decimals(row[key]) <= 3, (qid, key, row[key])
        assert row["est_rel"] == round(exact.est_rel, 1)
        assert row["est_rel_low"] == math.floor(exact.est_rel_low * 10 + 1e-9) / 10
        assert row["est_rel_high"] == math.ceil(exact.est_rel_high * 10 - 1e-9) / 10
        assert row["est_rel_low"] <= exact.est_rel_low + 1e-9
        assert row["est_rel_high"] >= exact.est_rel_high - 1e-9
        assert row["completeness"] == round(exact.completeness, 3)
        assert row["completeness_low"] <= exact.completeness_low + 1e-9
        assert row["status"] == exact.status
        assert (row["completeness_low"] >= complete_at) == (row["status"] == "complete")
    summary = slot["summary"]
    for key in ("mean_completeness", "median_completeness", "mean_completeness_low"):
        assert decimals(summary[key]) <= 3
    assert decimals(summary["est_rel"]) <= 1


def test_coverage_json_keeps_the_figures_as_computed(db, capsys):
    assert main(["coverage", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    with Store(db) as store:
        typed = coverage_for_store(store)
    assert report["queries"] == json.loads(json.dumps(typed.to_json()["queries"]))
    assert any(decimals(row["completeness_low"]) > 3 for row in report["queries"].values())


def test_exported_golden_yaml_carries_no_float_noise(db, tmp_path, capsys):
    golden = tmp_path / "study.yaml"
    assert main(["export", "--db", str(db), "--golden", str(golden)]) == 0
    text = golden.read_text()
    block = text[text.index("coverage:") : text.index("disagreements:")]
    noisy = re.findall(r"^\s*(?:est_rel\w*|completeness\w*|mean_\w+): -?\d+\.\d{4,}$", block, re.M)
    assert noisy == []
