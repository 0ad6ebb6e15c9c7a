"""One judged set, one verdict, whatever its file format: a partially judged store, its
golden.yaml and its TREC qrels export give `workbench eval` the same exit code and the same
problems. A golden.yaml and a store list every query of the study, judged yet or not; TREC
qrels list only the judged ones: a query with no judgment at all is "not judged yet" in all
three (a `not_in_qrels` warning), one judged with nothing relevant a `no_relevant` error in
all three."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.model import Doc, PoolEntry, Provenance, Query
from workbench.store import Store

QUERIES = ["qa", "qb", "qc", "qd"]
POOL = {q: [f"{q}-d{i}" for i in range(4)] for q in QUERIES}
ORACLE = {"qa": {"qa-d0": 2, "qa-d2": 1}, "qc": {"qc-d1": 3}, "qd": {"qd-d3": 1}}
COVERAGE_CODES = {
    "incomplete_judgments",
    "unmeasured_coverage",
    "coverage_mismatch",
    "coverage_not_measured",
}
"""The gate's problems: per query where a coverage summary (store, golden.yaml) measures it,
for the whole set where nothing does (TREC qrels)."""
ROW_KEYS = ("P@5", "R@5", "MRR", "nDCG@5", "bpref", "judged@5", "rel")


def build(root: Path, budget: int) -> dict[str, Path]:
    """A pooled store (queue: qa's 4 items, then qb's, qc's, qd's), judged by the oracle in
    queue order for `budget` items, exported to golden.yaml and TREC qrels."""
    db = root / "study.db"
    with Store(db, create=True) as store:
        store.add_queries([Query(q, f"query {q}") for q in QUERIES])
        store.add_docs(Doc(d, f"text of {d}") for docs in POOL.values() for d in docs)
        store.add_pool_entries(
            PoolEntry(q, d, i, provenance=(Provenance("bm25", i + 1, 10.0 - i),))
            for q, docs in POOL.items()
            for i, d in enumerate(docs)
        )
    oracle = root / "oracle.qrels"
    oracle.write_text("".join(f"{q} 0 {d} {g}\n" for q, j in ORACLE.items() for d, g in j.items()))
    assert (
        main(["simulate", "--db", str(db), "--oracle", str(oracle), "--budget", str(budget)]) == 0
    )
    golden, qrels = root / "study.yaml", root / "study.qrels"
    assert main(["export", "--db", str(db), "--golden", str(golden), "--qrels", str(qrels)]) == 0
    run = root / "sys.run"
    ranked = {q: list(reversed(docs)) for q, docs in POOL.items()} | {"qz": ["zz"]}
    run.write_text(
        "".join(
            f"{q} Q0 {d} {r} {10 - r} sys\n"
            for q, docs in ranked.items()
            for r, d in enumerate(docs, 1)
        )
    )
    return {"db": db, "golden": golden, "qrels": qrels, "run": run}


def verdict(capsys, qrels: Path, run: Path, *extra: str) -> tuple[int, list, dict]:
    code = main(["eval", "--qrels", str(qrels), "--run", str(run), "-k", "5", "--json", *extra])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    report = json.loads(out)
    problems = sorted(
        (str(p["qid"]), p["code"], p["level"])
        for p in report["problems"]
        if p["code"] not in COVERAGE_CODES
    )
    rows = {
        qid: {key: row[key] for key in ROW_KEYS}
        for qid, row in report["runs"]["sys"]["per_query"].items()
    }
    return code, problems, {"rows": rows, "covers": report["runs"]["sys"]["mean_covers"]}


@pytest.mark.parametrize(
    ("budget", "expected_code", "no_relevant"),
    [
        (4, 0, []),  # only qa judged (2 relevant): the rest is not judged yet, never an error
        (8, 1, ["qb"]),  # qb judged too, nothing relevant: the same error in all three
        (10, 1, ["qb"]),  # qc half judged, its relevant doc found
    ],
)
def test_store_golden_and_qrels_give_one_verdict(
    tmp_path, capsys, budget, expected_code, no_relevant
):
    files = build(tmp_path, budget)
    capsys.readouterr()
    verdicts = {
        source: verdict(capsys, files[source], files["run"]) for source in ("db", "golden", "qrels")
    }
    codes = {source: v[0] for source, v in verdicts.items()}
    assert codes == dict.fromkeys(verdicts, expected_code)
    problems = {source: v[1] for source, v in verdicts.items()}
    assert problems["db"] == problems["golden"] == problems["qrels"]
    assert [q for q, code, _ in problems["qrels"] if code == "no_relevant"] == no_relevant
    (extra,) = [p for p in problems["qrels"] if p[1] == "not_in_qrels"]
    assert extra[2] == "warning"
    figures = {source: v[2] for source, v in verdicts.items()}
    assert figures["db"] == figures["golden"] == figures["qrels"]
    # --strict: the store and its golden.yaml carry coverage, and nothing sampled outside the
    # pool measures a denominator: both fail (a gate never passes with less evidence); TREC
    # qrels carry no coverage at all, which fails it too (it passed with exit 0: one verdict
    # for the three), unless --assume-complete states it, which then leaves their own audit
    strict = {s: verdict(capsys, files[s], files["run"], "--strict") for s in verdicts}
    assert strict["db"][0] == strict["golden"][0] == strict["qrels"][0] == 1
    main(["eval", "--qrels", str(files["qrels"]), "--run", str(files["run"]), "-k", "5",
          "--json", "--strict"])  # fmt: skip
    (gate,) = json.loads(capsys.readouterr().out)["problems"][-1:]
    assert (gate["code"], gate["level"], gate["qid"]) == ("coverage_not_measured", "error", None)
    assert "--qrels study.db" in gate["message"] and "golden.yaml" in gate["message"]
    assumed = verdict(capsys, files["qrels"], files["run"], "--strict", "--assume-complete")
    assert assumed[0] == expected_code
    for source in ("db", "golden"):
        main(["eval", "--qrels", str(files[source]), "--run", str(files["run"]), "-k", "5",
                     "--json", "--strict"])  # fmt: skip
        problems = json.loads(capsys.readouterr().out)["problems"]
        unmeasured = [p for p in problems if p["code"] == "unmeasured_coverage"]
        assert unmeasured and all(p["level"] == "error" for p in unmeasured)
        assert all("pool with --sample N" in p["message"] for p in unmeasured)


def test_the_not_judged_yet_message_lists_the_unjudged_queries(tmp_path, capsys):
    files = build(tmp_path, 4)
    capsys.readouterr()
    for source in ("db", "golden", "qrels"):
        main(["eval", "--qrels", str(files[source]), "--run", str(files["run"]), "-k", "5"])
        out = " ".join(capsys.readouterr().out.split())  # notes wrap to the terminal's width
        assert "4 ranked queries with no judgment in the qrels (not judged yet" in out
        assert "not scored: qb qc qd qz" in out
        assert "no_relevant" not in out
