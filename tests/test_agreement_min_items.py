"""Below MIN_SHARED_ITEMS shared items `workbench agree` gives no kappa: "too few shared items"
instead of a figure (one item used to print `kappa 0.000 [0.00, 0.00]`), and in --json
`kappa: null` with the reason beside it (`reasons`; `reason` for Fleiss)."""

from __future__ import annotations

import json

from workbench.cli import main
from workbench.core.agreement import MIN_SHARED_ITEMS, agreement_report, compare
from workbench.core.model import Judgment, Query
from workbench.store import Store

SCALE = [0, 1, 2, 3]
TOO_FEW = f"too few shared items (n < {MIN_SHARED_ITEMS})"


def shared(n: int, *annotators: str, role: str = "human") -> list[Judgment]:
    """`n` items every annotator graded, mostly agreeing, with every grade used."""
    return [
        Judgment(a, "q1", f"d{i:02}", (i + (j == 1 and i % 3 == 0)) % 4, role=role)
        for i in range(n)
        for j, a in enumerate(annotators)
    ]


def test_one_shared_item_gives_no_kappa_and_says_why(tmp_path, capsys):
    db = tmp_path / "s.db"
    with Store(db, create=True) as store:
        store.add_queries([Query("q1", "maize pests")])
        store.add_judgments(shared(1, "ann", "bob"))
    assert main(["agree", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "0.000 [0.00, 0.00]" not in out
    assert f"kappa           {TOO_FEW}" in out
    assert f"binary kappa    {TOO_FEW}" in out
    assert "ann vs bob   n=1   no kappa, weighted_kappa, binary_kappa: " + TOO_FEW in out
    assert main(["agree", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (pair,) = report["pairs"]
    assert pair["n"] == 1 and pair["kappa"] is None and pair["kappa_ci"] is None
    assert pair["weighted_kappa"] is None and pair["binary_kappa"] is None
    assert pair["reasons"] == dict.fromkeys(("kappa", "weighted_kappa", "binary_kappa"), TOO_FEW)
    assert pair["meets_bar"] is False and pair["agreement"] == 0.0  # the share is still shown
    assert report["min_shared_items"] == MIN_SHARED_ITEMS


def test_at_the_minimum_kappa_is_given():
    report = agreement_report(shared(MIN_SHARED_ITEMS, "ann", "bob"), SCALE)
    (pair,) = report["pairs"]
    assert pair["kappa"] is not None and pair["reasons"] == {}
    below = agreement_report(shared(MIN_SHARED_ITEMS - 1, "ann", "bob"), SCALE)
    assert below["pairs"][0]["kappa"] is None
    # per query too: a query's kappa rests on its own items
    assert all(q["kappa"] is None for q in below["pairs"][0]["per_query"].values())


def test_fleiss_and_model_judges_follow_the_same_minimum():
    few = shared(3, "ann", "bob", "cat") + shared(3, "llm", role="model")
    report = agreement_report(few, SCALE)
    fleiss = report["fleiss"]
    assert fleiss["n"] == 3 and fleiss["kappa"] is None and fleiss["reason"] == TOO_FEW
    (judge,) = report["judges"]
    assert all(a["kappa"] is None and a["reasons"]["kappa"] == TOO_FEW for a in judge["against"])
    enough = agreement_report(shared(12, "ann", "bob", "cat"), SCALE)
    assert enough["fleiss"]["kappa"] is not None and enough["fleiss"]["reason"] is None


def test_one_grade_only_is_told_apart_from_too_few_items():
    same = [Judgment(a, "q1", f"d{i:02}", 2) for i in range(12) for a in ("ann", "bob")]
    (pair,) = agreement_report(same, SCALE)["pairs"]
    assert pair["kappa"] is None and "one grade only" in pair["reasons"]["kappa"]


def test_compare_without_a_minimum_is_unchanged_for_calibration():
    figures = compare({("q", "d"): 1}, {("q", "d"): 1}, SCALE)
    assert figures["n"] == 1 and figures["kappa"] is None  # p_e = 1 here, as before
    figures = compare({("q", "d"): 1, ("q", "e"): 0}, {("q", "d"): 1, ("q", "e"): 1}, SCALE)
    assert figures["kappa"] is not None  # judge-model's held-out figures keep their rules
