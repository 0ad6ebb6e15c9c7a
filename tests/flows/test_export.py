"""resolve (several annotators -> one grade) and `workbench export` over a real Store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core.judgments.judge_versions import JudgeLabel
from workbench.core.judgments.resolve import median_rounded_down, resolve
from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.flows.coverage import summary_for_store
from workbench.formats import read_golden, read_qrels
from workbench.store import Store, open_store


def j(annotator: str, qid: str, doc: str, grade: int | None, role: str = "human") -> Judgment:
    return Judgment(annotator=annotator, query_id=qid, doc_id=doc, grade=grade, role=role)


# -- resolve ------------------------------------------------------------------------------------


def test_single_and_agreeing_annotators_need_no_rule():
    qrels, judged_by, disagreements = resolve(
        [j("alice", "q1", "d1", 0), j("alice", "q1", "d2", 2), j("bob", "q1", "d2", 2)]
    )
    assert qrels == {"q1": {"d1": 0, "d2": 2}}
    assert judged_by == {("q1", "d1"): ["alice"], ("q1", "d2"): ["alice", "bob"]}
    assert disagreements == []


def test_disagreement_resolves_to_the_median_rounded_down():
    qrels, _, disagreements = resolve(
        [j("bob", "q", "a", 3), j("alice", "q", "a", 0), j("x", "q", "b", 1), j("y", "q", "b", 2)]
        + [j("x", "q", "c", 1), j("y", "q", "c", 2), j("z", "q", "c", 3)]
    )
    assert qrels == {"q": {"a": 1, "b": 1, "c": 2}}
    assert disagreements[0] == {
        "query": "q",
        "doc": "a",
        "grades": {"alice": 0, "bob": 3},
        "resolved": 1,
        "rule": "median",
    }
    assert [d["doc"] for d in disagreements] == ["a", "b", "c"]
    assert (
        median_rounded_down([-1, 2]) == 0
        and median_rounded_down([3]) == 3
        and median_rounded_down([0, 1, 1, 3]) == 1
    )


def test_adjudicator_decides_and_models_never_take_part():
    qrels, judged_by, disagreements = resolve(
        [
            j("alice", "q", "a", 3),
            j("bob", "q", "a", 3),
            j("carol", "q", "a", 1, role="adjudicator"),
            j("llm", "q", "a", 0, role="model"),
            j("llm", "q", "only-model", 3, role="model"),
        ]
    )
    assert qrels == {"q": {"a": 1}}
    assert judged_by == {("q", "a"): ["alice", "bob", "carol"]}
    assert disagreements[0]["rule"] == "adjudicated"
    assert disagreements[0]["grades"] == {"alice": 3, "bob": 3, "carol": 1}


def test_undo_rows_are_skipped_and_the_later_row_wins():
    qrels, _, _ = resolve(
        [j("alice", "q", "a", 3), j("alice", "q", "a", 1), j("alice", "q", "b", None)]
    )
    assert qrels == {"q": {"a": 1}}


# -- workbench export ---------------------------------------------------------------------------


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A SQLite store judged by two humans, an adjudicator and a model (see `judged_store`)."""
    return Path(judged_store(str(tmp_path / "judging.db")))


@pytest.fixture
def any_store(store_location: str) -> str:
    """The same store on SQLite and on PostgreSQL."""
    return judged_store(store_location)


def judged_store(location: str) -> str:
    """A store judged by two humans, an adjudicator and a model, with an alias and an undo."""
    path = location
    store = open_store(path, create=True)
    store.add_queries(
        [
            Query("q1", "fall armyworm control", "Control methods only."),
            Query("q2", "aflatoxin: storage", ""),
            Query("q3", "never judged", ""),
        ]
    )
    store.add_docs([Doc(f"d{i}", f"passage {i}") for i in range(1, 6)] + [Doc("d1-copy", "p 1")])
    pooling = store.record_pooling(["bm25", "dense"], 20, "rrf", 13, {"k": 60})
    store.add_pool_entries(
        [
            PoolEntry("q1", "d1", 0, 1.0, (Provenance("bm25", 1, 9.0),), aliases=("d1-copy",)),
            PoolEntry("q1", "d2", 1, 0.5, (Provenance("dense", 1, 0.8),)),
            PoolEntry("q1", "d3", 2, 0.4),
            PoolEntry("q2", "d4", 0, 1.0),
            PoolEntry("q2", "d5", 1, 0.9),
        ],
        pooling_id=pooling,
    )
    for judgment in [
        j("alice", "q1", "d1", 3),
        j("bob", "q1", "d1", 2),
        j("alice", "q1", "d2", 0),
        j("bob", "q1", "d2", 0),
        j("alice", "q1", "d3", 2),
        j("alice", "q1", "d3", None),  # undone: d3 is unjudged again
        j("alice", "q2", "d4", 1),
        j("alice", "q2", "d4", 2),  # regraded: the later row counts
        j("bob", "q2", "d4", 0),
        j("carol", "q2", "d4", 1, role="adjudicator"),
        j("llm", "q2", "d5", 3, role="model"),
    ]:
        store.add_judgment(judgment)
    store.close()
    return path


def test_export_writes_golden_and_qrels(any_store, tmp_path, capsys):
    golden_path = tmp_path / "out" / "golden.yaml"
    qrels_path = tmp_path / "out" / "qrels.txt"
    outputs = ["--golden", str(golden_path), "--qrels", str(qrels_path)]
    naming = ["--name", "round-1", "--description", "Test round."]
    code = main(["export", "--db", any_store, *outputs, *naming])
    assert code == 0
    summary = capsys.readouterr().out
    assert (
        "Exported 3 judged pairs over 2 of 3 queries (2 relevant at grade >= 1, 1 not)" in summary
    )
    assert "3 annotator(s) (alice, bob, carol)" in summary
    assert "2 pair(s) with disagreeing grades" in summary

    golden = read_golden(golden_path)
    assert golden.name == "round-1" and golden.description == "Test round."
    assert golden.qrels == {"q1": {"d1": 2, "d2": 0}, "q2": {"d4": 1}, "q3": {}}
    assert golden.judged_by[("q1", "d2")] == ["alice", "bob"]  # grade 0 kept, with who judged
    assert golden.judged_by[("q2", "d4")] == ["alice", "bob", "carol"]
    assert [q.query_id for q in golden.queries] == ["q1", "q2", "q3"]
    assert golden.queries[0].narrative == "Control methods only."
    assert golden.annotators == [
        {"name": "alice", "role": "human"},
        {"name": "bob", "role": "human"},
        {"name": "carol", "role": "adjudicator"},
        {"name": "llm", "role": "model"},
    ]
    # the model's label is kept beside the set (no version recorded: unknown), never in its qrels
    assert golden.judge_labels == [JudgeLabel("q2", "d5", "llm", 3, "")]
    assert golden.pool == {"systems": ["bm25", "dense"], "depth": 20, "strategy": "rrf", "seed": 13}
    assert golden.aliases == {"d1-copy": "d1"}
    assert golden.grade_scale == {
        0: "not relevant",
        1: "related",
        2: "relevant",
        3: "highly relevant",
    }
    assert [(d["query"], d["doc"], d["resolved"], d["rule"]) for d in golden.disagreements] == [
        ("q1", "d1", 2, "median"),
        ("q2", "d4", 1, "adjudicated"),
    ]

    with open_store(any_store) as store:
        assert golden.coverage == summary_for_store(store)

    assert read_qrels(qrels_path) == {"q1": {"d1": 2, "d1-copy": 2, "d2": 0}, "q2": {"d4": 1}}
    # other tools read it as it is: every line a judgment, no comment line
    import ir_measures
    import pytrec_eval

    with qrels_path.open() as handle:
        assert len(pytrec_eval.parse_qrel(handle)["q1"]) == 3
    found = {
        (q.query_id, q.doc_id, q.relevance) for q in ir_measures.read_trec_qrels(str(qrels_path))
    }
    assert ("q2", "d4", 1) in found and len(found) == 4


def test_export_records_coverage_at_its_relevance_threshold(any_store, tmp_path):
    golden_path = tmp_path / "g.yaml"
    code = main(["export", "--db", any_store, "--golden", str(golden_path)])
    assert code == 0 and read_golden(golden_path).coverage["queries"]["q2"]["relevant"] == 1
    code = main(["export", "--db", any_store, "--golden", str(golden_path), "--rel-threshold", "2"])
    coverage = read_golden(golden_path).coverage
    assert code == 0 and coverage["queries"]["q1"]["relevant"] == 1  # d1 (grade 2) only
    assert coverage["queries"]["q2"]["relevant"] == 0  # d4 resolved to 1: not relevant at 2


def test_export_of_a_simulated_round_reads_back(store_path, tmp_path):
    """`workbench simulate` writes role 'oracle'; the golden.yaml export must read back."""
    oracle = tmp_path / "oracle.qrels"
    oracle.write_text("q1 0 d1 3\nq2 0 d4 1\n")
    fresh = tmp_path / "fresh.db"
    with Store(store_path) as judged, Store(fresh, create=True) as store:
        store.add_queries(judged.queries())
        store.add_docs(judged.docs(e.doc_id for e in judged.pool()).values())
        store.add_pool_entries(judged.pool())
    assert main(["simulate", "--db", str(fresh), "--oracle", str(oracle)]) == 0
    golden_path = tmp_path / "simulated.yaml"
    assert main(["export", "--db", str(fresh), "--golden", str(golden_path)]) == 0
    golden = read_golden(golden_path)
    assert golden.annotators == [{"name": "oracle", "role": "oracle"}]
    assert golden.qrels["q1"] == {"d1": 3, "d2": 0, "d3": 0}


def test_export_golden_only_then_qrels_only(any_store, tmp_path):
    golden_path = tmp_path / "g.yaml"
    assert main(["export", "--db", any_store, "--golden", str(golden_path)]) == 0
    # the store's file name (or database name) by default
    assert read_golden(golden_path).name == ("judging" if "://" not in any_store else "test")
    qrels_path = tmp_path / "q.txt"
    assert main(["export", "--db", any_store, "--qrels", str(qrels_path)]) == 0
    assert not (tmp_path / "g.yaml.tmp").exists() and qrels_path.exists()


def test_export_needs_an_output_and_a_store(store_path, tmp_path, capsys):
    assert main(["export", "--db", str(store_path)]) == 2
    assert "--golden" in capsys.readouterr().err
    missing = tmp_path / "missing.db"
    assert main(["export", "--db", str(missing), "--golden", str(tmp_path / "g.yaml")]) == 2
    assert not missing.exists() and not (tmp_path / "g.yaml").exists()


def test_export_of_judgments_for_unknown_queries_keeps_them(tmp_path):
    path = tmp_path / "s.db"
    with Store(path, create=True) as store:
        store.add_judgment(j("alice", "ghost", "d1", 1))
    golden_path = tmp_path / "g.yaml"
    assert main(["export", "--db", str(path), "--golden", str(golden_path)]) == 0
    golden = read_golden(golden_path)
    assert golden.qrels == {"ghost": {"d1": 1}} and golden.queries[0].text == ""
    assert golden.pool is None


# -- hostile paths, modes, notes, legacy aliases ------------------------------------------------


def _digest(path: Path) -> bytes:
    import hashlib

    return hashlib.sha256(path.read_bytes()).digest()


@pytest.mark.parametrize(
    "outputs",
    [
        ["--golden", "{db}"],
        ["--qrels", "{db}"],
        ["--qrels", "{db}-wal"],
        ["--golden", "{tmp}/same.txt", "--qrels", "{tmp}/./same.txt"],
        ["--qrels", "{tmp}/new.qrels", "--golden", "{tmp}/adir"],
        ["--qrels", "{tmp}/new.qrels", "--golden", "{db}/golden.yaml"],
    ],
)
def test_export_never_writes_onto_an_input_or_half_its_outputs(
    store_path, tmp_path, capsys, outputs
):
    (tmp_path / "adir").mkdir()
    before = _digest(store_path)
    args = [o.format(db=store_path, tmp=tmp_path) for o in outputs]
    assert main(["export", "--db", str(store_path), *args]) == 2
    assert "error:" in capsys.readouterr().err
    assert _digest(store_path) == before
    assert not (tmp_path / "new.qrels").exists() and not (tmp_path / "same.txt").exists()
    assert Store(store_path).current_judgments()  # still a store


def test_export_files_take_the_umask_and_a_replaced_file_keeps_its_mode(store_path, tmp_path):
    import os

    old = os.umask(0o022)
    try:
        golden, qrels = tmp_path / "g.yaml", tmp_path / "g.qrels"
        assert main(["export", "--db", str(store_path), "--golden", str(golden)]) == 0
        assert golden.stat().st_mode & 0o777 == 0o644
        qrels.write_text("old\n")
        qrels.chmod(0o640)
        assert main(["export", "--db", str(store_path), "--qrels", str(qrels)]) == 0
        assert qrels.stat().st_mode & 0o777 == 0o640 and "old" not in qrels.read_text()
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_notes_typed_in_the_app_reach_golden_yaml(any_store, tmp_path):
    with open_store(any_store) as store:
        store.add_judgment(Judgment("alice", "q1", "d2", 0, note="off topic: [b]maize[/b] \x1b[2J"))
        store.add_judgment(Judgment("bob", "q1", "d2", 0, note="storage, not control"))
    golden_path = tmp_path / "g.yaml"
    assert main(["export", "--db", any_store, "--golden", str(golden_path)]) == 0
    notes = read_golden(golden_path).notes
    assert notes[("q1", "d2")] == (
        "alice: off topic: [b]maize[/b] \x1b[2J | bob: storage, not control"
    )


def test_a_store_whose_aliases_chain_exports_a_golden_set_eval_reads(tmp_path, capsys):
    """Stores pooled before one canonical id per group of identical passages was the rule can
    hold a 2-cycle (a -> b in one query's pooling, b -> a in another's)."""
    path = tmp_path / "old.db"
    with Store(path, create=True) as store:
        store.add_queries([Query("q1", "t"), Query("q2", "t")])
        store.add_docs([Doc(d, "same text") for d in "abc"] + [Doc("x", "other")])
        store.add_pool_entries(
            [
                PoolEntry("q1", "b", 0, aliases=("a", "c")),
                PoolEntry("q2", "a", 0, aliases=("b", "c")),
                PoolEntry("q2", "x", 1),
            ]
        )
        assert store.aliases() == {"a": "b", "b": "a", "c": "b"}
        store.add_judgment(j("alice", "q1", "b", 2))
        store.add_judgment(j("alice", "q2", "a", 1))
        store.add_judgment(j("alice", "q2", "x", 0))
    golden_path = tmp_path / "g.yaml"
    assert main(["export", "--db", str(path), "--golden", str(golden_path)]) == 0
    golden = read_golden(golden_path)
    assert golden.aliases == {"b": "a", "c": "a"}
    assert golden.qrels == {"q1": {"a": 2}, "q2": {"a": 1, "x": 0}}
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 b 1 3 r\nq2 Q0 c 1 3 r\nq2 Q0 x 2 2 r\n")
    capsys.readouterr()
    assert main(["eval", "--qrels", str(golden_path), "--run", str(run), "-k", "1"]) == 0


def test_a_grade_under_an_alias_joins_the_canonicals_and_both_formats_agree(tmp_path, capsys):
    """alice graded the copy d2 (an alias of d1 in a legacy store), bob graded d1: one document,
    two grades, a disagreement; the note kept; the store and its golden.yaml score alike."""
    path = tmp_path / "old.db"
    with Store(path, create=True) as store:
        store.add_queries([Query("q", "t")])
        store.add_docs([Doc("d1", "same"), Doc("d2", "same"), Doc("x", "other")])
        store.add_pool_entries([PoolEntry("q", "d1", 0, aliases=("d2",)), PoolEntry("q", "x", 1)])
        store.add_judgment(Judgment("alice", "q", "d2", 3, note="the copy"))
        store.add_judgment(j("bob", "q", "d1", 0))
        store.add_judgment(j("bob", "q", "x", 1))
    golden_path = tmp_path / "g.yaml"
    assert main(["export", "--db", str(path), "--golden", str(golden_path)]) == 0
    golden = read_golden(golden_path)
    assert golden.qrels == {"q": {"d1": 1, "x": 1}}
    assert golden.judged_by[("q", "d1")] == ["alice", "bob"]
    assert [d["grades"] for d in golden.disagreements] == [{"alice": 3, "bob": 0}]
    assert golden.notes == {("q", "d1"): "the copy"}
    run = tmp_path / "r.run"
    run.write_text("q Q0 d2 1 3 r\nq Q0 x 2 2 r\n")
    scores = []
    for qrels in (path, golden_path):
        capsys.readouterr()
        assert main(["eval", "--qrels", str(qrels), "--run", str(run), "-k", "2", "--json"]) == 0
        scores.append(json.loads(capsys.readouterr().out)["runs"]["r"]["per_query"]["q"]["rel"])
    assert scores == [2, 2]
