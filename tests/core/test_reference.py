"""Agreement with the reference implementation: trec_eval (its stored -q output) and
pytrec_eval, per query, to 4 decimals, on real collections' BM25 runs, tied scores included."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.measures.metrics import evaluate
from workbench.core.model import Run
from workbench.formats import read_qrels, read_run

pytrec_eval = pytest.importorskip("pytrec_eval")

COLLECTIONS = Path(__file__).resolve().parents[3] / "shared" / "collections"
if not COLLECTIONS.is_dir():
    COLLECTIONS = Path("/work/shared/collections")
NAMES = ["cranfield", "cisi", "cacm", "npl"]

# trec_eval name -> workbench row key
MEASURES = {
    "P_5": "P@5",
    "P_10": "P@10",
    "recall_5": "R@5",
    "recall_10": "R@10",
    "ndcg_cut_5": "nDCG@5",
    "ndcg_cut_10": "nDCG@10",
    "recip_rank": "MRR",
    "bpref": "bpref",
}
PYTREC_SPEC = {"P.5,10", "recall.5,10", "ndcg_cut.5,10", "recip_rank", "bpref"}
# trec_eval prints %.4f: allow its rounding (0.03125 prints as 0.0312)
PRINTED = 5e-5 + 1e-9

needs_data = pytest.mark.skipif(not COLLECTIONS.is_dir(), reason="shared collections absent")


def cases() -> list[tuple[str, str, str]]:
    out = [(name, "qrels.tsv", "bm25.trec_eval.all_trec.q.txt") for name in NAMES]
    out.append(
        (
            "cranfield",
            "qrels.minus1_as_grade0.tsv",
            "bm25.trec_eval.all_trec.q.minus1_as_grade0.txt",
        )
    )
    return out


_cache: dict[Path, object] = {}


def load(path: Path, reader):  # type: ignore[no-untyped-def]
    if path not in _cache:
        _cache[path] = reader(path)
    return _cache[path]


def trec_eval_output(path: Path) -> dict[str, dict[str, float]]:
    """qid (or 'all') -> trec_eval measure -> value, for the measures compared here."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in MEASURES:
            out.setdefault(parts[1], {})[parts[0]] = float(parts[2])
    return out


@needs_data
@pytest.mark.parametrize(("name", "qrels_file", "stored"), cases())
def test_agrees_with_stored_trec_eval_output(name, qrels_file, stored):
    folder = COLLECTIONS / name
    qrels = load(folder / qrels_file, read_qrels)
    run: Run = load(folder / "runs" / "bm25.run", read_run)
    expected = trec_eval_output(folder / "runs" / stored)
    result = evaluate(qrels, run.rankings(), [5, 10])
    compared = 0
    for qid, values in expected.items():
        if qid == "all":
            continue
        for measure, value in values.items():
            got = result.per_query[qid].values[MEASURES[measure]]
            assert got == pytest.approx(value, abs=PRINTED), (qid, measure)
            compared += 1
    assert compared >= 8 * 50
    # trec_eval (without -c) averages the queries both ranked and judged; here every judged
    # query is ranked, so its means are ours.
    assert not result.missing_from_run
    for measure, value in expected["all"].items():
        assert result.mean.values[MEASURES[measure]] == pytest.approx(value, abs=PRINTED), measure


def rounded(run: Run, digits: int) -> dict[str, dict[str, float]]:
    return {q: {d: round(s, digits) for d, s in docs.items()} for q, docs in run.scores.items()}


@needs_data
@pytest.mark.parametrize(("name", "qrels_file"), [(c[0], c[1]) for c in cases()])
@pytest.mark.parametrize("ties", [False, True], ids=["scores", "tied-scores"])
def test_agrees_with_pytrec_eval(name, qrels_file, ties):
    folder = COLLECTIONS / name
    qrels = load(folder / qrels_file, read_qrels)
    run: Run = load(folder / "runs" / "bm25.run", read_run)
    scores = rounded(run, 1) if ties else run.scores
    if ties:  # the variant must really have ties for the ordering rule to be tested
        assert sum(len(d) - len(set(d.values())) for d in scores.values()) > 1000
    reference = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_SPEC).evaluate(scores)
    assert reference, "pytrec_eval scored nothing"
    # both ranking forms: doc-id lists, and {doc: score} ranked inside metrics
    for rankings in (Run("tied", scores).rankings(), scores):
        result = evaluate(qrels, rankings, [5, 10])
        for qid, values in reference.items():  # pytrec_eval scores only the ranked queries
            row = result.per_query[qid].values
            for measure, key in MEASURES.items():
                assert row[key] == pytest.approx(values[measure], abs=1e-4 / 2), (qid, measure)
