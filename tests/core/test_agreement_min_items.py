"""Below MIN_SHARED_ITEMS shared items `workbench agree` gives no kappa: "too few shared items"
instead of a figure (one item used to print `kappa 0.000 [0.00, 0.00]`), and in --json
`kappa: null` with the reason beside it (`reasons`; `reason` for Fleiss). judge-model's
held-out figures follow the same minimum."""

from __future__ import annotations

import json

from workbench.cli import main
from workbench.core.agreement.agreement import MIN_SHARED_ITEMS, agreement_report
from workbench.core.agreement.kappa import compare
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
    assert main(["agree", "--db", str(db), "--wide"]) == 0
    out = capsys.readouterr().out
    assert "0.000 [0.000, 0.000]" not in out
    (row,) = [line for line in out.splitlines() if line.startswith("ann vs bob ")]
    assert row.split()[3:8] == ["1", "0.000", "-", "-", "-"]  # n, exact agreement, 3 kappas
    assert row.endswith("no kappa, weighted kappa, binary kappa: " + TOO_FEW)
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
    (pair,) = report.pairs
    assert pair.figures.kappa.kappa is not None and pair.figures.reasons == {}
    below = agreement_report(shared(MIN_SHARED_ITEMS - 1, "ann", "bob"), SCALE)
    assert below.pairs[0].figures.kappa.kappa is None
    # per query too: a query's kappa rests on its own items
    assert all(q.kappa is None for q in below.pairs[0].figures.per_query.values())


def test_fleiss_and_model_judges_follow_the_same_minimum():
    few = shared(3, "ann", "bob", "cat") + shared(3, "llm", role="model")
    report = agreement_report(few, SCALE)
    fleiss = report.fleiss
    assert fleiss.kappa.n == 3 and fleiss.kappa.kappa is None and fleiss.reason == TOO_FEW
    (judge,) = report.judges
    assert all(
        a.figures.kappa.kappa is None and a.figures.reasons["kappa"] == TOO_FEW
        for a in judge.against
    )
    enough = agreement_report(shared(12, "ann", "bob", "cat"), SCALE)
    assert enough.fleiss.kappa.kappa is not None and enough.fleiss.reason is None


def test_one_grade_only_is_told_apart_from_too_few_items():
    same = [Judgment(a, "q1", f"d{i:02}", 2) for i in range(12) for a in ("ann", "bob")]
    (pair,) = agreement_report(same, SCALE).pairs
    assert pair.figures.kappa.kappa is None and "one grade only" in pair.figures.reasons["kappa"]


def test_compare_applies_a_minimum_only_when_asked():
    figures = compare({("q", "d"): 1}, {("q", "d"): 1}, SCALE)
    assert figures.n == 1 and figures.kappa.kappa is None  # p_e = 1 here
    assert figures.reasons["kappa"].startswith("undefined (one grade only")
    two = ({("q", "d"): 1, ("q", "e"): 0}, {("q", "d"): 1, ("q", "e"): 1})
    assert compare(*two, SCALE).kappa.kappa is not None
    withheld = compare(*two, SCALE, 1, MIN_SHARED_ITEMS)
    assert withheld.kappa.kappa is None and withheld.reasons["kappa"] == TOO_FEW
    assert withheld.per_query["q"].kappa is None
    per_query_kept = compare(*two, SCALE, 1, MIN_SHARED_ITEMS, min_query_items=0)
    assert per_query_kept.kappa.kappa is None and per_query_kept.per_query["q"].kappa is not None


def test_judge_calibration_follows_the_same_minimum():
    """judge-model's held-out figures are held to agree's minimum too: a held-out share of
    fewer than MIN_SHARED_ITEMS labels gives no kappa, no verdict, and says why."""
    from workbench.core.judges.calibration import calibrate

    human = {("q", f"d{i:02d}"): i % 4 for i in range(24)}
    scores = {item: grade + 0.1 * (i % 3) for i, (item, grade) in enumerate(human.items())}
    report = calibrate(scores, human, SCALE, holdout=0.3)  # 24 labels: 8 held out
    held = report.held_out
    assert held.n == report.split.held_out == 8
    assert held.kappa.kappa is None and held.reasons["kappa"] == TOO_FEW
    assert not report.decisive.meets_bar
    assert any(f"no kappa on fewer than {MIN_SHARED_ITEMS}" in w for w in report.warnings)
    data = report.to_json()
    assert data["held_out"]["kappa"] is None and data["meets_bar"] is False
    assert data["held_out"]["reasons"]["kappa"] == TOO_FEW
    enough = calibrate(scores, human, SCALE, holdout=0.5)
    assert enough.held_out.n == 12 and enough.held_out.kappa.kappa is not None
