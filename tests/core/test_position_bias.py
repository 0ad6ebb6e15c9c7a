"""Position bias of a pairwise judge: a hand case, the strict reader, the CLI."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.core.judges.position_bias import position_bias_report, wilson_interval
from workbench.formats.comparisons import parse_comparisons


def rec(qid, a, b, first, preferred):
    return json.dumps({"qid": qid, "a": a, "b": b, "first": first, "preferred": preferred})


HAND = [
    # p1 consistent (d1 both times), written once with a/b swapped.
    rec("q", "d1", "d2", "a", "a"),
    rec("q", "d2", "d1", "a", "b"),
    # p2 flips to whichever is first.
    rec("q", "d3", "d4", "a", "a"),
    rec("q", "d3", "d4", "b", "b"),
    # p3 tie both times: consistent.
    rec("q", "d5", "d6", "a", "tie"),
    rec("q", "d5", "d6", "b", "tie"),
    # p4 flips to whichever is second.
    rec("r", "d1", "d2", "a", "b"),
    rec("r", "d1", "d2", "b", "a"),
    # p5 judged in one order only.
    rec("r", "d7", "d8", "b", "b"),
]


def test_hand_case():
    report = position_bias_report(parse_comparisons("\n".join(HAND), "h.jsonl"))
    assert report.comparisons == 9 and len(report.per_pair) == 5
    assert report.both_orders == 4
    assert report.consistent == 2 and report.consistency == 0.5
    assert report.favouring_first == 1 and report.favouring_second == 1
    # Decisive verdicts: 7; preferred the first-shown doc on lines 1, 3, 4 and 9 (r d8 shown
    # first and preferred); line 2 preferred d1 shown second; lines 7, 8 the second-shown.
    assert report.decisive == 7
    assert report.first_position_rate == pytest.approx(4 / 7)
    assert report.tie_rate == pytest.approx(2 / 9)
    assert [o.to_json() for o in report.one_order_only] == [
        {"qid": "r", "first": "d8", "second": "d7", "line": 9}
    ]
    by_pair = {(p.query_id, p.a, p.b): p for p in report.per_pair}
    assert by_pair[("q", "d1", "d2")].a_score == 1.0
    assert by_pair[("q", "d1", "d2")].verdict == "a"
    assert by_pair[("q", "d3", "d4")].a_score == 0.5
    assert by_pair[("q", "d3", "d4")].verdict == "tie"
    assert by_pair[("q", "d3", "d4")].consistent is False
    assert by_pair[("r", "d7", "d8")].verdict == "b"
    assert by_pair[("r", "d7", "d8")].consistent is None
    data = report.to_json()
    assert data["pairs"] == 5 and data["inconsistent_favouring_first"] == 1
    assert data["first_position_rate_ci"] == list(report.first_position_rate_ci)


def test_wilson_interval_known_value():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) is None


def test_strict_reader_collects_every_problem():
    text = "\n".join(
        [
            rec("q", "d1", "d2", "a", "a"),
            rec("q", "d1", "d1", "a", "a"),
            rec("q", "d1", "d2", "c", "a"),
            rec("q", "d1", "d2", "a", "left"),
            "nope",
            rec("q", "d2", "d1", "b", "a"),  # d1 first again: same order as line 1
            json.dumps({"qid": "q", "a": "d1", "first": "a", "preferred": "a"}),
        ]
    )
    with pytest.raises(InputError) as caught:
        parse_comparisons(text, "p.jsonl")
    lines = [p.split(": ")[0] for p in caught.value.problems]
    assert lines == [f"p.jsonl:{n}" for n in (2, 3, 4, 5, 6, 7)]
    assert "first on line 1" in caught.value.problems[4]


def test_cli_table_and_json(tmp_path, capsys):
    path = tmp_path / "pb.jsonl"
    path.write_text("\n".join(HAND) + "\n", encoding="utf-8")
    assert main(["position-bias", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Position bias: " in out and "pb.jsonl" in out
    (row,) = [line for line in out.splitlines() if line.startswith("position consistency")]
    assert "0.500" in row and "2 of 4 pairs keep their verdict" in row
    assert "Judged in one order only: 1 pairs" in out
    assert main(["position-bias", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["consistency"] == 0.5
    path.write_text("", encoding="utf-8")
    assert main(["position-bias", str(path)]) == 2
    assert "no comparisons" in capsys.readouterr().err
