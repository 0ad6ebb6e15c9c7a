"""`workbench compare` end to end: the design document's figures, the same means as
`workbench eval`, p-values as scipy gives them on eval's per-query scores, Holm as
statsmodels, R@k under the estimated |Rel| (eval's interval), exit codes, hostile names, and a
start that loads nothing heavy."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.cli import main
from workbench.core.audit.judged_coverage import coverage_from_summary
from workbench.core.evaluation.comparison import chosen_keys, compare_report
from workbench.core.evaluation.eval_report import eval_report
from workbench.formats import read_qrels
from workbench.reports.compare import render

ROOT = Path(__file__).resolve().parents[2]
SEED_GOLDEN = ROOT / "golden" / "seed-example.yaml"
SEED_RUN = ROOT / "golden" / "seed-example.run"
DEMO_GOLDEN = ROOT / "golden" / "demo.yaml"
DEMO_QRELS = ROOT / "golden" / "demo.qrels"
CRANFIELD = next(
    (p for p in (ROOT.parent / "shared", ROOT.parents[1] / "shared") if p.is_dir()),
    ROOT.parent / "shared",
) / "collections" / "cranfield"
"""DESIGN.md's ../shared/collections, beside the checkout (or beside a worktree's parent)."""
JSON_KEYS = {"run", "measure", "baseline_mean", "run_mean", "delta", "p_value", "p_adjusted",
             "test", "significant", "wins", "losses", "ties"}  # fmt: skip


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    try:
        code = main(["compare", *map(str, argv)])
    except SystemExit as exc:  # argparse's own refusals
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def compare_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def eval_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict:
    code = main(["eval", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return json.loads(out)


def write_run(path: Path, tag: str, rankings: dict[str, list[str]]) -> Path:
    lines = [
        f"{qid} Q0 {doc} {rank} {100 - rank} {tag}\n"
        for qid, docs in rankings.items()
        for rank, doc in enumerate(docs, 1)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def seed_rankings() -> dict[str, list[str]]:
    rankings: dict[str, list[str]] = {}
    for line in SEED_RUN.read_text().splitlines():
        qid, _, doc, *_ = line.split()
        rankings.setdefault(qid, []).append(doc)
    return rankings


def by(report: dict, run: str, measure: str) -> dict:
    return next(c for c in report["comparisons"] if c["run"] == run and c["measure"] == measure)


# -- the design document's example ---------------------------------------------------------------


def test_the_seed_example_with_d1_moved_to_rank_4(tmp_path: Path, capsys) -> None:
    """DESIGN.md: d1 from rank 1 to 4 in q_milk (s2 x1 d2 d1 x3) keeps P@5 and R@5, but MRR
    falls 1 -> .333 and nDCG@5 .811 -> .481; the other queries are unchanged."""
    moved = seed_rankings()
    moved["q_milk"] = ["s2", "x1", "d2", "d1", "x3", "d3", "m1", "p4", "s4", "x2"]
    candidate = write_run(tmp_path / "moved.run", "moved", moved)
    report = compare_json(capsys, "--qrels", SEED_GOLDEN, "--run", SEED_RUN, "--run", candidate,
                          "-k", "5")  # fmt: skip
    assert report["baseline"] == "seed" and report["queries"] == 4
    assert report["measures"] == ["nDCG@5", "R@5", "P@5", "MRR"]
    assert all(JSON_KEYS <= set(c) for c in report["comparisons"])
    ndcg, recall, mrr = (by(report, "moved", m) for m in ("nDCG@5", "R@5", "MRR"))
    assert ndcg["baseline_mean"] == pytest.approx(0.741, abs=5e-4)
    assert ndcg["delta"] == pytest.approx((0.481 - 0.811) / 4, abs=5e-4)
    assert mrr["delta"] == pytest.approx((1 / 3 - 1) / 4)
    assert (ndcg["wins"], ndcg["losses"], ndcg["ties"]) == (0, 1, 3)
    assert (recall["wins"], recall["losses"], recall["ties"], recall["delta"]) == (0, 0, 4, 0)
    assert [m["qid"] for m in ndcg["most_moved"]] == ["q_milk"]
    # one query moved: its two sign patterns are equally extreme, p = 1 exactly
    assert ndcg["p_value"] == 1.0 and not ndcg["significant"]
    assert report["family"] == 4  # R@5 and P@5 did not move (p = 1): tested all the same


# -- the same scores as `workbench eval` ---------------------------------------------------------


def demo_runs(tmp_path: Path, seed: int = 0) -> tuple[Path, Path, Path]:
    """Three runs on the demo's judged set made from golden/demo.qrels: a good one (relevant
    first, by grade, a little noise), a worse one (the good one with each query's top 10
    shuffled) and one that ranks only half the queries."""
    rng = random.Random(seed)
    qrels = read_qrels(DEMO_QRELS)
    good, worse, half = {}, {}, {}
    for i, (qid, judged) in enumerate(qrels.items()):
        docs = sorted(judged, key=lambda d: (-judged[d] - rng.random() * 1.5, d))
        good[qid] = docs
        top = docs[:10]
        rng.shuffle(top)
        worse[qid] = [*docs[10:14], *top, *docs[14:]]
        if i % 2:
            half[qid] = docs
    return (write_run(tmp_path / "good.run", "good", good),
            write_run(tmp_path / "worse.run", "worse", worse),
            write_run(tmp_path / "half.run", "half", half))  # fmt: skip


def test_means_are_eval_means_and_p_values_are_scipys(tmp_path: Path, capsys) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    good, worse, half = demo_runs(tmp_path)
    runs = ["--run", good, "--run", worse, "--run", half]
    evaluated = eval_json(capsys, "--qrels", DEMO_GOLDEN, *runs, "-k", "5,10")
    for test in ("paired-t", "wilcoxon", "randomization"):
        report = compare_json(capsys, "--qrels", DEMO_GOLDEN, *runs, "-k", "5,10",
                              "--test", test)  # fmt: skip
        assert report["family"] == 2 * 7
        for c in report["comparisons"]:
            key, run = c["measure"], c["run"]
            base_rows = evaluated["runs"]["good"]["per_query"]
            rows = evaluated["runs"][run]["per_query"]
            qids = evaluated["runs"]["good"]["mean_covers"]["queries"]
            assert c["baseline_mean"] == pytest.approx(evaluated["runs"]["good"]["mean"][key])
            assert c["run_mean"] == pytest.approx(evaluated["runs"][run]["mean"][key])
            after = [rows[q][key] for q in qids]
            before = [base_rows[q][key] for q in qids]
            deltas = [round(a - b, 9) for a, b in zip(after, before, strict=True)]
            assert c["wins"] == sum(d > 0 for d in deltas)
            assert c["losses"] == sum(d < 0 for d in deltas)
            if test == "paired-t" and len(set(deltas)) > 1:
                ref = scipy_stats.ttest_rel(after, before).pvalue
                assert c["p_value"] == pytest.approx(ref, abs=1e-12)
            if test == "wilcoxon" and any(deltas):
                ref = scipy_stats.wilcoxon(deltas).pvalue  # n = 12: exact, or every pattern
                assert c["p_value"] == pytest.approx(ref, abs=1e-12)
            if test == "randomization" and any(deltas):  # 12 queries: every sign pattern
                units = [round(d * 1e9) for d in deltas]
                ref = scipy_stats.permutation_test(
                    (units,), lambda x, axis: x.mean(axis=axis), vectorized=True,
                    permutation_type="samples", n_resamples=float("inf"),
                ).pvalue  # fmt: skip
                assert c["p_value"] == pytest.approx(ref, abs=1e-12)
    assert report["missing"]["half"] == qids[0::2]


def test_holm_spans_runs_times_measures_as_statsmodels(tmp_path: Path, capsys) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    good, worse, half = demo_runs(tmp_path, seed=3)
    report = compare_json(capsys, "--qrels", DEMO_GOLDEN, "--run", good, "--run", worse,
                          "--run", half, "--measure", "nDCG@10,R@10,MRR", "--test", "paired-t")
    p = [c["p_value"] for c in report["comparisons"]]
    reject, adjusted, _, _ = multitest.multipletests(p, alpha=0.05, method="holm")
    assert [c["p_adjusted"] for c in report["comparisons"]] == pytest.approx(list(adjusted))
    assert [c["significant"] for c in report["comparisons"]] == list(reject)
    assert report["family"] == 6 and report["ks"] == [10]
    code, out, _ = run_cli(capsys, "--qrels", DEMO_GOLDEN, "--run", good, "--run", worse,
                           "--measure", "nDCG@10,R@10,MRR")  # fmt: skip
    said = " ".join(out.split())  # the note wraps to the terminal's width
    assert code == 0 and "Holm" in said and "over all 3 comparisons (runs × measures)" in said


# -- R@k under the estimated |Rel| ----------------------------------------------------------------


def test_recall_under_the_estimated_rel_is_evals_interval(tmp_path: Path, capsys) -> None:
    good, worse, _ = demo_runs(tmp_path, seed=1)
    runs = ["--run", good, "--run", worse]
    evaluated = eval_json(capsys, "--qrels", DEMO_GOLDEN, *runs, "-k", "10")
    report = compare_json(capsys, "--qrels", DEMO_GOLDEN, *runs, "-k", "10")
    recall = by(report, "worse", "R@10")
    rel = recall["rel_uncertainty"]
    for name, interval in (("good", "baseline_interval"), ("worse", "run_interval")):
        mean = evaluated["runs"][name]["mean"]
        assert rel[interval] == pytest.approx([mean["R@10_low"], mean["R@10_high"]])
    # by hand from eval's rows: a query's change at the high and at the low end of its |Rel|
    lows, highs = [], []
    rows = {name: evaluated["runs"][name]["per_query"] for name in ("good", "worse")}
    for qid in evaluated["runs"]["good"]["mean_covers"]["queries"]:
        b, r = rows["good"][qid], rows["worse"][qid]
        ends = (r["R@10_low"] - b["R@10_low"], r["R@10_high"] - b["R@10_high"])
        lows.append(min(ends))
        highs.append(max(ends))
    assert rel["measured_queries"] == 12
    assert rel["delta_low"] == pytest.approx(sum(lows) / 12)
    assert rel["delta_high"] == pytest.approx(sum(highs) / 12)
    assert all("rel_uncertainty" not in c for c in report["comparisons"] if c["measure"] != "R@10")
    code, out, _ = run_cli(capsys, "--qrels", DEMO_GOLDEN, *runs, "-k", "10")
    out = " ".join(out.split())  # notes wrap to the terminal's width
    assert "Under the estimated |Rel|" in out and "spans its 95% interval" in out


UNCERTAIN = {"relevant": 2, "est_rel": 10.0, "est_rel_low": 2.0, "est_rel_high": 40.0,
             "completeness": 0.2, "completeness_low": 0.05, "status": "incomplete"}
CERTAIN = {"relevant": 2, "est_rel": 2.0, "est_rel_low": 2.0, "est_rel_high": 2.1,
           "completeness": 1.0, "completeness_low": 0.95, "status": "complete"}  # fmt: skip


def test_a_significant_drop_inside_the_uncertainty_of_rel_is_said_to_be_so() -> None:
    """14 queries lose one of two judged relevant documents, but may hold 40 relevant; 2 gain
    one, and hold about 2. Against the judged set R@5 falls by .375 (p = .004, every pattern);
    with |Rel| = 40 on the 14 the mean rises (+.041): a regression within |Rel|'s uncertainty."""
    qids = [f"q{i:02d}" for i in range(16)]
    qrels = {q: {"a": 1, "b": 1} for q in qids}
    summary = {"queries": {q: UNCERTAIN if i < 14 else CERTAIN for i, q in enumerate(qids)},
               "thresholds": {"complete_at": 0.8}}  # fmt: skip
    coverage, problems = coverage_from_summary(summary, qrels, source="by hand")
    assert not problems
    baseline = {q: ["a", "b"] if i < 14 else ["a", "x"] for i, q in enumerate(qids)}
    candidate = {q: ["a", "x"] if i < 14 else ["a", "b"] for i, q in enumerate(qids)}
    evaluated = eval_report(qrels, {"base": baseline, "cand": candidate}, [5], coverage=coverage,
                            measures=["R"])  # fmt: skip
    report = compare_report(evaluated, ["R@5"], permutations=2**16)  # every sign pattern
    (recall,) = report.comparisons
    assert recall.delta == pytest.approx((14 * -0.5 + 2 * 0.5) / 16)
    assert recall.test.p_value == pytest.approx(2 * (1 + 16 + 120) / 2**16)
    assert recall.regression and recall.drop_within_rel and recall.rel is not None
    assert recall.rel.delta_high == pytest.approx((14 * -1 / 40 + 2 * 0.5) / 16)
    assert recall.rel.delta_low == pytest.approx((14 * -0.5 + 2 / 2.1) / 16)
    text = render(report)
    assert "this regression is within the uncertainty of |Rel|" in text
    assert "worse (|Rel| uncertain)" in text
    assert report.to_json()["comparisons"][0]["rel_uncertainty"]["drop_within_uncertainty"]


# -- exit codes ----------------------------------------------------------------------------------


def test_fail_on_regression(tmp_path: Path, capsys) -> None:
    good, worse, _ = demo_runs(tmp_path, seed=2)
    regressed = ["--qrels", DEMO_GOLDEN, "--run", good, "--run", worse, "--measure", "nDCG@10"]
    code, out, err = run_cli(capsys, *regressed, "--fail-on-regression")
    assert code == 1 and "significant drops: worse nDCG@10 -" in err
    assert "worse" in out  # the report is printed all the same
    assert run_cli(capsys, *regressed)[0] == 0  # without the flag, a report is not a failure
    improved = ["--qrels", DEMO_GOLDEN, "--run", worse, "--run", good, "--measure", "nDCG@10"]
    assert run_cli(capsys, *improved, "--fail-on-regression")[0] == 0
    # not significant after Holm: no failure, whatever the sign of the delta
    assert run_cli(capsys, *regressed, "--fail-on-regression", "--alpha", "0.0001")[0] == 0


def test_a_wilcoxon_gain_is_no_regression_though_the_mean_fell(tmp_path: Path, capsys) -> None:
    # 21 queries of 100 relevant each: the run finds one more on 20, loses all on one
    qrels = tmp_path / "w.qrels"
    qrels.write_text("".join(f"q{q} 0 d{q}-{i} 1\n" for q in range(21) for i in range(100)))
    base = {f"q{q}": [f"d{q}-{i}" for i in range(50)] for q in range(21)}
    run = {f"q{q}": [f"d{q}-{i}" for i in range(51)] for q in range(20)} | {"q20": ["x"]}
    a = write_run(tmp_path / "a.run", "a", base)
    b = write_run(tmp_path / "b.run", "b", run)
    argv = ["--qrels", qrels, "--run", a, "--run", b, "-k", "100", "--measure", "P@100",
            "--test", "wilcoxon"]  # fmt: skip
    report = compare_json(capsys, *argv)
    row = by(report, "b", "P@100")
    assert row["delta"] < 0 and row["significant"] and row["wins"] == 20
    assert row["verdict"] == "better (by ranks; the mean fell)"
    assert report["regressions"] == []
    assert run_cli(capsys, *argv, "--fail-on-regression")[0] == 0


def bad_inputs(tmp: Path) -> dict[str, tuple[list[object], str]]:
    seed = write_run(tmp / "other.run", "other", seed_rankings())
    same_tag = write_run(tmp / "same-tag.run", "seed", seed_rankings())
    elsewhere = write_run(tmp / "elsewhere.run", "elsewhere", {"nope": ["m1"]})
    broken = tmp / "broken.run"
    broken.write_text("q_faw Q0 m1 1 1.0 b\nq_faw Q0 m2 2 notanumber b\n")
    base = ["--qrels", SEED_GOLDEN, "--run", SEED_RUN]
    return {
        "one run": (base, "at least two --run"),
        "a file twice": ([*base, "--run", SEED_RUN], "given twice"),
        "a tag twice": ([*base, "--run", same_tag], "same-tag.run: run tag 'seed'"),
        "no query covered": ([*base, "--run", elsewhere], "elsewhere.run: ranks none of the 4"),
        "unknown measure": ([*base, "--run", seed, "--measure", "F1@5"], "'F1@5': not a measure"),
        "judged@k": ([*base, "--run", seed, "--measure", "judged@5"], "labels under a run"),
        "cutoff on MRR": ([*base, "--run", seed, "--measure", "MRR@5"], "takes no cutoff"),
        "bad cutoff": ([*base, "--run", seed, "--measure", "nDCG@x"], "integer >= 1"),
        "alpha 2": ([*base, "--run", seed, "--alpha", "2"], "--alpha 2.0"),
        "alpha nan": ([*base, "--run", seed, "--alpha", "nan"], "--alpha: 'nan' is not a finite"),
        "test foo": ([*base, "--run", seed, "--test", "foo"], "invalid choice: 'foo'"),
        "few permutations": ([*base, "--run", seed, "--permutations", "10"], "--permutations 10"),
        "negative top": ([*base, "--run", seed, "--top", "-1"], "--top -1"),
        "k zero": ([*base, "--run", seed, "-k", "0"], "-k 0"),
        "broken run": ([*base, "--run", broken], "broken.run:2:"),
        "missing qrels": (["--qrels", tmp / "nope.qrels", "--run", SEED_RUN, "--run", seed],
                          "nope.qrels"),
    }  # fmt: skip


BAD = ["one run", "a file twice", "a tag twice", "no query covered", "unknown measure",
       "judged@k", "cutoff on MRR", "bad cutoff", "alpha 2", "alpha nan", "test foo",
       "few permutations", "negative top", "k zero", "broken run", "missing qrels"]  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_unusable_input_exits_2_naming_it(tmp_path: Path, capsys, case: str) -> None:
    cases = bad_inputs(tmp_path)
    assert set(cases) == set(BAD)
    argv, expected = cases[case]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (out, err)
    assert expected in err, err
    assert "Traceback" not in err and out == ""


def test_a_qrels_file_without_relevant_documents_exits_2(tmp_path: Path, capsys) -> None:
    qrels = tmp_path / "none.qrels"
    qrels.write_text("q_faw 0 m1 0\n")
    other = write_run(tmp_path / "other.run", "other", seed_rankings())
    code, _, err = run_cli(capsys, "--qrels", qrels, "--run", SEED_RUN, "--run", other)
    assert code == 2 and "none.qrels: no query has a judged relevant document" in err


# -- output --------------------------------------------------------------------------------------


def test_markdown_escapes_names_from_the_data(tmp_path: Path, capsys) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"<i>q|{i} 0 <b>{i} 1\n<i>q|{i} 0 d{i} 1\n" for i in range(5)))
    first = write_run(tmp_path / "a.run", "a|b", {f"<i>q|{i}": [f"<b>{i}", "x"] for i in range(5)})
    second = write_run(tmp_path / "c.run", "c*d_", {f"<i>q|{i}": ["x", f"d{i}"] for i in range(5)})
    code, out, _ = run_cli(capsys, "--qrels", qrels, "--run", first, "--run", second,
                           "--format", "markdown", "-k", "2")  # fmt: skip
    assert code == 0
    table = [line for line in out.splitlines() if line.startswith("| ")]
    header, rows = table[0], table[1:]
    cells = lambda line: len(re.split(r"(?<!\\)\|", line)) - 2  # noqa: E731
    assert all(cells(line) == 9 for line in table), table
    assert "a\\|b" in header and "&lt;i&gt;q\\|0" in out and "c\\*d\\_ vs a\\|b" in out
    assert len(rows) == 4
    code, out, _ = run_cli(capsys, "--qrels", qrels, "--run", first, "--run", second, "-k", "2",
                           "--wide")  # fmt: skip
    assert "c*d_ vs a|b" in out and "<i>q|0 " in out  # plain text: literally


def test_plain_table_says_the_test_and_the_rule_for_missing_queries(tmp_path, capsys) -> None:
    good, _, half = demo_runs(tmp_path)
    code, out, _ = run_cli(capsys, "--qrels", DEMO_GOLDEN, "--run", good, "--run", half,
                           "--test", "wilcoxon", "-k", "10")  # fmt: skip
    assert code == 0
    assert "Wilcoxon's signed-rank test" in out and "Holm" in out
    assert "half does not rank 6 of the 12 queries" in out and "scores 0" in out
    html = run_cli(capsys, "--qrels", DEMO_GOLDEN, "--run", good, "--run", half, "--format",
                   "html")[1]  # fmt: skip
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html


def test_measure_choice() -> None:
    assert chosen_keys(None, [5, 10], True)[:2] == (
        ["nDCG@5", "nDCG@10", "R@5", "R@10", "P@5", "P@10", "MRR"], [5, 10])
    assert chosen_keys(["nDCG@20", "mrr"], [10], False)[:2] == (["nDCG@20", "MRR"], [20])
    assert chosen_keys(["R"], [10], False)[:2] == (["R@10"], [10])
    assert chosen_keys(["ndcg@20,R"], [5], True)[:2] == (["nDCG@20", "R@5", "R@20"], [5, 20])


# -- real data, generated runs ---------------------------------------------------------------------


@pytest.mark.skipif(not CRANFIELD.is_dir(), reason="../shared/collections is not here")
def test_on_cranfield_against_eval_and_scipy(tmp_path: Path, capsys) -> None:
    """cranfield's qrels and BM25 run (225 queries) against a seeded perturbation of it."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = random.Random(15)
    rankings: dict[str, list[str]] = {}
    for line in (CRANFIELD / "runs" / "bm25.run").read_text().splitlines():
        qid, _, doc, *_ = line.split()
        rankings.setdefault(qid, []).append(doc)
    for docs in rankings.values():
        for _ in range(3):  # swap a top-10 document with one from ranks 11-40
            i, j = rng.randrange(10), rng.randrange(10, 40)
            docs[i], docs[j] = docs[j], docs[i]
    perturbed = write_run(tmp_path / "perturbed.run", "perturbed", rankings)
    qrels, base = CRANFIELD / "qrels.tsv", CRANFIELD / "runs" / "bm25.run"
    runs = ["--run", base, "--run", perturbed]
    evaluated = eval_json(capsys, "--qrels", qrels, *runs, "-k", "10")
    report = compare_json(capsys, "--qrels", qrels, *runs, "-k", "10", "--test", "wilcoxon")
    assert report["queries"] == 225 and report["baseline"] == "bm25_stdlib"
    for c in report["comparisons"]:
        key = c["measure"]
        before = evaluated["runs"]["bm25_stdlib"]["per_query"]
        after = evaluated["runs"]["perturbed"]["per_query"]
        deltas = [round(after[q][key] - before[q][key], 9) for q in before]
        assert c["wins"] + c["losses"] + c["ties"] == 225
        assert c["p_value"] == pytest.approx(scipy_stats.wilcoxon(deltas).pvalue, abs=1e-12)
    assert by(report, "perturbed", "P@10")["delta"] < 0


# -- properties ------------------------------------------------------------------------------------

qids = st.sampled_from([f"q{i}" for i in range(8)])
docs = st.sampled_from([f"d{i}" for i in range(12)])
qrels_strategy = st.dictionaries(qids, st.dictionaries(docs, st.integers(0, 3), min_size=1))
run_strategy = st.dictionaries(qids, st.lists(docs, unique=True, max_size=8))


@settings(max_examples=50, deadline=None)
@given(qrels_strategy, run_strategy, run_strategy)
def test_swapping_the_runs_mirrors_the_comparison(qrels, first, second) -> None:
    if not any(g >= 1 for judged in qrels.values() for g in judged.values()):
        return
    keys = ["nDCG@5", "R@5", "MRR"]
    forward = compare_report(eval_report(qrels, {"a": first, "b": second}, [5]), keys)
    backward = compare_report(eval_report(qrels, {"b": second, "a": first}, [5]), keys)
    for f, b in zip(forward.comparisons, backward.comparisons, strict=True):
        assert f.wins == b.losses and f.losses == b.wins and f.ties == b.ties
        assert f.wins + f.losses + f.ties == len(forward.queries)
        assert f.baseline_mean == b.run_mean and f.run_mean == b.baseline_mean
        assert f.test.p_value == b.test.p_value and f.p_adjusted == b.p_adjusted
        assert f.regression == (b.significant and b.verdict == "better")


# -- start-up ------------------------------------------------------------------------------------


def test_compare_imports_nothing_heavy(tmp_path: Path) -> None:
    other = write_run(tmp_path / "other.run", "other", seed_rankings())
    probe = (
        "import contextlib, io, json, sys\nfrom workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['compare', '--qrels', {str(SEED_GOLDEN)!r}, '--run', "
        f"{str(SEED_RUN)!r}, '--run', {str(other)!r}]) == 0\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=60, check=True)  # fmt: skip
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    heavy = {"textual", "torch", "sentence_transformers", "scipy", "sklearn", "psycopg", "rich"}
    assert not loaded & heavy, sorted(loaded & heavy)


def test_markdown_cells_link_and_emphasise_nothing(tmp_path: Path, capsys) -> None:
    qrels = tmp_path / "m.qrels"
    qids = ["[x](http://e.vil)", "**b**", "q_1_"]
    qrels.write_text("".join(f"{q} 0 d{i} 1\n" for q in qids for i in range(3)))
    a = write_run(tmp_path / "a.run", "a", {q: ["d0", "d1", "d2"] for q in qids})
    b = write_run(tmp_path / "b.run", "x*_y_", {q: ["n", "d1", "d2"] for q in qids})
    code, out, _ = run_cli(capsys, "--qrels", qrels, "--run", a, "--run", b, "-k", "3",
                           "--format", "markdown")  # fmt: skip
    assert code == 0
    table = "\n".join(line for line in out.splitlines() if line.startswith("|"))
    assert "](" not in table.replace("\\](", "")  # no live link
    assert "\\[x\\](http://e.vil)" in table and "\\*\\*b\\*\\*" in table
    assert "x\\*\\_y\\_" in table  # the run tag in the header
