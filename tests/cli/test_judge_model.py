"""`workbench judge-model` with a tiny random cross-encoder on a real store, and the pure
calibration (threshold fit, stratified split, held-out figures) on synthetic scores."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json
import math
import random

import pytest
from retrieval_fixtures import QUERIES, build_tiny_cross_encoder, farm_docs

from workbench.cli import main
from workbench.core.judges.calibration import calibrate, grade_ranges, stratified_split
from workbench.core.model import Judgment, PoolEntry
from workbench.store import Store

SCALE = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-ce"))


# -- pure ----------------------------------------------------------------------------------------


def synthetic(count: int, noise: float, seed: int) -> tuple[dict, dict]:
    """Scores monotone in the human grade: grade g scores g + uniform noise."""
    rng = random.Random(seed)
    human = {("q", f"d{i:03d}"): i % 4 for i in range(count)}
    scores = {item: grade + rng.uniform(0.0, noise) for item, grade in human.items()}
    return scores, human


def test_separable_scores_recover_cuts_between_the_grades():
    scores, human = synthetic(200, 0.8, seed=1)
    report = calibrate(scores, human, SCALE, holdout=0.3, seed=0)
    thresholds = report.score_cuts
    assert len(thresholds.cuts) == 3
    for grade, cut in zip((1, 2, 3), thresholds.cuts, strict=True):
        below = max(s for i, s in scores.items() if human[i] == grade - 1)
        above = min(s for i, s in scores.items() if human[i] == grade)
        assert below < cut <= above, (grade, cut, below, above)
    assert all(thresholds.grade(scores[i]) == g for i, g in human.items())
    held = report.held_out
    assert held.n == report.split.held_out == 60
    assert report.split.train == 140
    assert held.kappa.kappa == pytest.approx(1.0)
    assert held.weighted_kappa.kappa == pytest.approx(1.0)
    assert report.decisive.meets_bar and report.judged_on == "held-out"
    assert report.to_json()["cuts"] == list(thresholds.cuts)
    assert report.to_json()["meets_bar"] is True
    assert [r.grade for r in grade_ranges(thresholds)] == SCALE
    assert not report.warnings


def test_overlapping_scores_give_ordered_cuts_and_honest_held_out_figures():
    scores, human = synthetic(400, 2.0, seed=2)  # neighbouring grades overlap
    report = calibrate(scores, human, SCALE, holdout=0.3, seed=3)
    thresholds = report.score_cuts
    assert list(thresholds.cuts) == sorted(thresholds.cuts)
    # midpoints of the overlaps, g + 1 - 0.5 ... roughly: each cut lies between grades' means
    for grade, cut in zip((1, 2, 3), thresholds.cuts, strict=True):
        assert grade - 0.5 < cut < grade + 1.5
    held = report.held_out
    assert 0.6 < held.weighted_kappa.kappa < 1.0
    assert held.kappa.kappa < held.weighted_kappa.kappa
    # the kappa the fit maximized is the in-sample weighted kappa reported beside it
    train = report.to_json()["train"]
    assert train["fit_weighted_kappa"] == pytest.approx(train["weighted_kappa"])
    low, high = held.weighted_kappa.ci
    assert low < held.weighted_kappa.kappa < high


def test_grade_ranges_mark_grades_never_given():
    from workbench.core.judges.calibration import ScoreCuts

    thresholds = ScoreCuts((0.5, 0.5, math.inf), (0, 1, 2, 3), None, 10)
    assert [r.to_json() for r in grade_ranges(thresholds)] == [
        {"grade": 0, "low": None, "high": 0.5, "empty": False},
        {"grade": 1, "low": None, "high": None, "empty": True},
        {"grade": 2, "low": 0.5, "high": None, "empty": False},
        {"grade": 3, "low": None, "high": None, "empty": True},
    ]
    assert [thresholds.grade(s) for s in (0.4, 0.5, 99.0)] == [0, 2, 2]


def test_stratified_split_is_seeded_disjoint_and_keeps_grade_shares():
    human = {("q", f"d{i:03d}"): (0 if i < 70 else 1 if i < 90 else 3) for i in range(100)}
    train, held = stratified_split(human, 0.3, seed=5)
    assert set(train) | set(held) == set(human) and not set(train) & set(held)
    assert [sum(human[i] == g for i in held) for g in (0, 1, 3)] == [21, 6, 3]
    assert stratified_split(human, 0.3, seed=5) == (train, held)
    assert stratified_split(human, 0.3, seed=6)[1] != held
    assert stratified_split(human, 0.0)[1] == []
    with pytest.raises(ValueError):
        stratified_split(human, 1.0)


def test_no_holdout_says_figures_are_in_sample_and_too_few_labels_refused():
    scores, human = synthetic(40, 0.8, seed=4)
    report = calibrate(scores, human, SCALE, holdout=0.0)
    assert report.held_out is None and report.judged_on == "train (in-sample)"
    assert report.to_json()["held_out"] is None
    assert any("in-sample" in w for w in report.warnings)
    with pytest.raises(ValueError, match="only 19 human labels"):
        calibrate(scores, dict(list(human.items())[:19]), SCALE)


# -- the command ---------------------------------------------------------------------------------


HUMAN_LABELS = 40


@pytest.fixture
def db(tmp_path):
    """Four queries, every farm passage pooled for each (96 items), 40 of them graded by two
    humans who disagree on 4 (left unresolved), so 36 resolved labels."""
    path = tmp_path / "s.db"
    docs = farm_docs()
    with Store(path, create=True) as store:
        store.add_queries(QUERIES)
        store.add_docs(docs)
        store.add_pool_entries(
            PoolEntry(q.query_id, d.doc_id, i) for q in QUERIES for i, d in enumerate(docs)
        )
        rng = random.Random(11)
        items = sorted((q.query_id, d.doc_id) for q in QUERIES for d in docs)
        for n, (qid, doc_id) in enumerate(rng.sample(items, HUMAN_LABELS)):
            grade = rng.choice(SCALE)
            store.add_judgment(Judgment("ann", qid, doc_id, grade))
            other = (grade + 1) % 4 if n < 4 else grade
            store.add_judgment(Judgment("bob", qid, doc_id, other))
    return path


@pytest.mark.slow
def test_judge_model_grades_every_pool_item_and_reports_held_out_figures(
    db, tiny_cross_encoder, capsys
):
    folder = str(tiny_cross_encoder[0])
    argv = ["judge-model", "--db", str(db), "--model", folder, "--as", "ce", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["human_labels"] == HUMAN_LABELS - 4
    assert report["labels_from"] == {
        "fit_on": "resolved",
        "annotators": ["ann", "bob"],
        "unresolved": 4,
        "outside_pool": 0,
    }
    split = report["split"]
    assert split["train"] + split["held_out"] == 36 and split["held_out"] >= 10
    held = report["held_out"]
    assert held["n"] == split["held_out"]
    for key in ("kappa", "weighted_kappa", "binary_kappa", "kappa_ci", "confusion"):
        assert key in held
    assert sum(map(sum, held["confusion"])) == held["n"]
    assert len(report["cuts"]) == 3 and report["method"].startswith("cut points")
    assert report["written"]["written"] == 96 and report["written"]["new"] == 96
    assert sum(report["model_grades"].values()) == 96

    with Store(db) as store:
        assert store.annotators()["ce"] == "model"
        mine = {(j.query_id, j.doc_id): j for j in store.current_judgments("ce")}
        assert set(mine) == {(e.query_id, e.doc_id) for e in store.pool()}
        assert all(j.role == "model" and j.grade in SCALE for j in mine.values())
        log = json.loads(store.get_meta("judge-model:ce"))
    assert len(log) == 1 and log[0]["cuts"] == report["cuts"]
    assert log[0]["resolved_model"] == os.path.realpath(folder)

    # the same model again: scores and cuts repeat, nothing is written twice
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["cuts"] == report["cuts"]
    assert again["written"]["written"] == 0 and again["written"]["unchanged"] == 96
    with Store(db) as store:
        assert len(store.judgments("ce")) == 96
        assert len(json.loads(store.get_meta("judge-model:ce"))) == 2

    # `workbench agree` now shows the judge against the humans
    assert main(["agree", "--db", str(db), "--json"]) == 0
    agree = json.loads(capsys.readouterr().out)
    (judge,) = agree["judges"]
    assert judge["judge"] == "ce" and judge["labels"] == 96
    assert {a["annotator"]: a["n"] for a in judge["against"]} == {"ann": 40, "bob": 40}
    assert judge["resolved"]["n"] == 36


@pytest.mark.slow
def test_fit_on_one_annotator_and_the_text_report(db, tiny_cross_encoder, capsys):
    folder = str(tiny_cross_encoder[0])
    argv = ["judge-model", "--db", str(db), "--model", folder, "--as", "ce", "--fit-on", "ann"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Fitted on 40 human labels (annotator 'ann')" in out
    (held,) = [line for line in out.splitlines() if line.startswith("held-out (these decide)")]
    assert held.split()[3] == "13"  # n
    assert "ScoreCuts (score -> grade)" in out
    (grade_0,) = [line for line in out.splitlines() if line.startswith("0 ")]
    assert "[-inf, " in grade_0
    assert "in-sample, the fitting labels" in out
    assert "kappa >= 0.6 on the held-out labels" in out
    assert "Stored 96 grades as 'ce' (role model)" in out


def test_too_few_human_labels_refused_and_nothing_written(tmp_path, tiny_cross_encoder, capsys):
    path = tmp_path / "few.db"
    docs = farm_docs()
    with Store(path, create=True) as store:
        store.add_queries(QUERIES[:1])
        store.add_docs(docs)
        store.add_pool_entries(PoolEntry("q_pest", d.doc_id, i) for i, d in enumerate(docs))
        for d in docs[:5]:
            store.add_judgment(Judgment("ann", "q_pest", d.doc_id, 2))
    argv = ["judge-model", "--db", str(path), "--model", str(tiny_cross_encoder[0]), "--as", "ce"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "only 5 human labels" in err and "at least 20" in err
    with Store(path) as store:
        assert store.judgments("ce") == [] and store.get_meta("judge-model:ce") is None


def test_unavailable_model_exits_2_with_its_reason_and_writes_nothing(db, capsys):
    argv = ["judge-model", "--db", str(db), "--model", "no-such-org/no-such-ce", "--as", "ce"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "model 'no-such-org/no-such-ce' is not available offline" in err
    assert "hint: --scorer bi-encoder scores with the packaged" in err
    with Store(db) as store:
        assert "ce" not in store.annotators()
        assert store.judgments("ce") == [] and store.get_meta("judge-model:ce") is None


def test_a_human_name_or_fitting_on_itself_is_refused(db, capsys):
    base = ["judge-model", "--db", str(db), "--model", "x"]
    assert main([*base, "--as", "ann"]) == 2
    assert "already an annotator with role 'human'" in capsys.readouterr().err
    assert main([*base, "--as", "ce", "--fit-on", "nobody"]) == 2
    assert "no such annotator" in capsys.readouterr().err
    assert main([*base, "--as", "ce", "--holdout", "1"]) == 2
    assert "--holdout 1.0" in capsys.readouterr().err


# -- the bi-encoder scorer (the real packaged all-MiniLM-L6-v2) ----------------------------------


HAND_GRADES = {
    "q_pest": {"m1": 3, "m6": 2, "m2": 2, "m3": 1, "m5": 1},
    "q_udder": {"d2": 3, "d1": 1, "d4": 1},
    "q_chicks": {"p3": 3, "p1": 1, "p4": 1, "p2": 1},
    "q_erosion": {"x3": 3, "x1": 2, "s4": 0},
}
"""Simulated human grades by hand; pooled passages not named here are graded 0."""

BI_POOL = {
    "q_pest": ["m1", "m2", "m3", "m4", "m5", "m6", "s1", "s2", "d1", "x1"],
    "q_udder": ["d1", "d2", "d3", "d4", "d5", "p1", "p4", "m4", "s3", "x4"],
    "q_chicks": ["p1", "p2", "p3", "p4", "p5", "d5", "d1", "m1", "s4", "x2"],
    "q_erosion": ["x1", "x2", "x3", "x4", "s4", "m5", "m3", "d3", "p5", "s2"],
}


@pytest.fixture
def bi_db(tmp_path):
    """Four queries, 40 pooled items, each graded by one human ('ann') from HAND_GRADES."""
    path = tmp_path / "bi.db"
    with Store(path, create=True) as store:
        store.add_queries(QUERIES)
        store.add_docs(farm_docs())
        store.add_pool_entries(
            PoolEntry(qid, doc_id, rank)
            for qid, ids in BI_POOL.items()
            for rank, doc_id in enumerate(ids)
        )
        for qid, ids in BI_POOL.items():
            for doc_id in ids:
                store.add_judgment(Judgment("ann", qid, doc_id, HAND_GRADES[qid].get(doc_id, 0)))
    return path


@pytest.mark.slow
def test_bi_encoder_judge_grades_every_pool_item_and_names_its_scorer(bi_db, tmp_path, capsys):
    from workbench.retrieval import DEFAULT_DENSE_MODEL, DenseRetriever
    from workbench.retrieval.models import resolve_model

    cache = str(tmp_path / "cache")
    argv = ["judge-model", "--db", str(bi_db), "--scorer", "bi-encoder", "--as", "minilm"]
    argv += ["--cache-dir", cache]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["scorer"] == "bi-encoder" and report["model"] == DEFAULT_DENSE_MODEL
    assert report["resolved_model"] == resolve_model(DEFAULT_DENSE_MODEL)
    assert report["score"].startswith("cosine similarity")
    assert report["human_labels"] == 40 and report["split"]["held_out"] == 12
    distinct_docs = len({d for ids in BI_POOL.values() for d in ids})
    assert report["scoring"]["passages_encoded"] == report["scoring"]["passages"] == distinct_docs
    assert report["written"]["new"] == 40 and sum(report["model_grades"].values()) == 40
    # cosine similarities lie in [-1, 1], so do the fitted cuts that fall between them
    assert all(c is None or -1.0 <= c <= 1.0 for c in report["cuts"])
    # the paraphrased queries still find their answers: the fit beats chance in-sample
    assert report["train"]["weighted_kappa"] > 0.3

    with Store(bi_db) as store:
        mine = {(j.query_id, j.doc_id): j for j in store.current_judgments("minilm")}
        assert set(mine) == {(e.query_id, e.doc_id) for e in store.pool()}
        assert all(j.role == "model" and j.grade in SCALE for j in mine.values())
        (entry,) = json.loads(store.get_meta("judge-model:minilm"))
        queries, docs = store.queries(), farm_docs()
    assert entry["scorer"] == "bi-encoder" and entry["cuts"] == report["cuts"]

    # the grades are the dense retriever's own cosine, cut by the fitted thresholds
    retriever = DenseRetriever(docs, cache_dir=tmp_path / "other-cache")
    cosine = retriever.score_pairs(queries, sorted(mine))
    searched = retriever.search(queries, depth=len(docs)).scores
    for (qid, doc_id), score in cosine.items():
        assert score == pytest.approx(searched[qid][doc_id], abs=1e-5)
    with pytest.raises(ValueError, match="q_pest/nope"):
        retriever.score_pairs(queries, [("q_pest", "nope")])

    # again, in text: the embedding cache answers, nothing is written twice, the scorer is named
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Judge 'minilm': {DEFAULT_DENSE_MODEL} as a bi-encoder\n")
    assert "40 pooled items scored in " in out
    assert f"0 of {distinct_docs} passages encoded, the rest from the embedding cache" in out
    assert "Stored 0 grades as 'minilm' (role model): 0 new, 0 changed, 40 unchanged" in out
