"""`workbench import-labels`: the import rules, through the real CLI and a real store."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.core.judgments.labels import OUTSIDE_POOL, is_outside_pool
from workbench.core.model import Doc, Judgment, PoolEntry, Query
from workbench.formats.labels import read_jsonl_labels
from workbench.store import Store


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "s.db"
    with Store(path, create=True) as store:
        store.add_queries([Query("q1", "maize pests"), Query("q2", "milk")])
        store.add_docs([Doc(f"d{i}", f"text {i}") for i in range(6)])
        store.add_pool_entries(
            [PoolEntry("q1", f"d{i}", i) for i in range(3)]
            + [PoolEntry("q2", f"d{i}", i) for i in range(2)]
        )
        store.add_judgment(Judgment("ann", "q1", "d0", 3))
    return path


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def current(db, name):
    with Store(db) as store:
        return {(j.query_id, j.doc_id): j for j in store.current_judgments(name)}


def test_qrels_import_keeps_outside_pool_and_skips_unknown_queries(db, tmp_path, capsys):
    labels = write(
        tmp_path / "bm.qrels",
        ["q1 0 d0 3", "q1 0 d5 2", "q2 0 d1 0", "q9 0 d1 1", "q8 0 d2 1", "q9 0 d3 2"],
    )
    assert main(["import-labels", "--db", str(db), "--as", "bm", labels, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["format"] == "qrels"
    assert summary["new"] == 3 and summary["written"] == 3
    assert summary["outside_pool"] == 1
    assert summary["unknown_queries"] == 2
    assert summary["unknown_query_examples"] == ["q8", "q9"]
    assert summary["skipped_labels"] == 3
    got = current(db, "bm")
    assert set(got) == {("q1", "d0"), ("q1", "d5"), ("q2", "d1")}
    assert got[("q1", "d5")].note == OUTSIDE_POOL and is_outside_pool(got[("q1", "d5")])
    assert not is_outside_pool(got[("q1", "d0")])
    assert got[("q2", "d1")].grade == 0  # grade 0 is a label, kept
    with Store(db) as store:
        assert store.annotators()["bm"] == "model"
        log = json.loads(store.get_meta("import:bm"))
    assert len(log) == 1 and log[0]["written"] == 3 and len(log[0]["sha256"]) == 64


def test_jsonl_sniffed_note_kept_and_extra_fields_reported(db, tmp_path, capsys):
    labels = write(
        tmp_path / "llm.jsonl",
        [
            json.dumps({"qid": "q1", "docid": "d1", "grade": 2, "note": "mentions armyworm"}),
            json.dumps({"qid": "q1", "docid": "d4", "grade": 1, "reason": "weak"}),
        ],
    )
    assert main(["import-labels", "--db", str(db), "--as", "llm", labels]) == 0
    out = capsys.readouterr().out
    assert "ignored field 'reason' on 1 lines" in out
    got = current(db, "llm")
    assert got[("q1", "d1")].note == "mentions armyworm"
    assert got[("q1", "d4")].note == OUTSIDE_POOL
    assert all(j.role == "model" for j in got.values())


def test_grade_outside_scale_is_exit_2_and_nothing_written(db, tmp_path, capsys):
    labels = write(tmp_path / "bad.qrels", ["q1 0 d0 1", "q1 0 d1 4", "q2 0 d0 -1", "q9 0 d0 7"])
    assert main(["import-labels", "--db", str(db), "--as", "bm", labels]) == 2
    err = capsys.readouterr().err
    assert f"{labels}:2: grade 4" in err
    assert f"{labels}:3: grade -1" in err
    assert f"{labels}:4: grade 7" in err
    with Store(db) as store:
        assert [j.annotator for j in store.judgments()] == ["ann"]
        assert "bm" not in store.annotators()
        assert store.get_meta("import:bm") is None


def test_jsonl_reader_collects_every_problem_with_lines(tmp_path):
    labels = write(
        tmp_path / "x.jsonl",
        [
            json.dumps({"qid": "q1", "docid": "d1", "grade": 2}),
            "{not json",
            json.dumps({"qid": "q1", "docid": "", "grade": 1}),
            json.dumps({"qid": "q1", "docid": "d2", "grade": "2"}),
            json.dumps({"qid": "q1", "docid": "d3", "grade": True}),
            json.dumps({"qid": "q1", "docid": "d1", "grade": 3}),
            "[1, 2]",
        ],
    )
    with pytest.raises(InputError) as caught:
        read_jsonl_labels(labels)
    problems = caught.value.problems
    assert [p.split(": ")[0] for p in problems] == [f"{labels}:{n}" for n in (2, 3, 4, 5, 6, 7)]
    assert "first on line 1" in problems[4]


def test_reimport_same_file_writes_nothing_and_changed_grades_supersede(db, tmp_path, capsys):
    labels = write(tmp_path / "bm.qrels", ["q1 0 d0 3", "q1 0 d1 2"])
    args = ["import-labels", "--db", str(db), "--as", "bm", labels, "--json"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["written"] == 0 and again["unchanged"] == 2
    with Store(db) as store:
        assert len(store.judgments("bm")) == 2
    write(tmp_path / "bm.qrels", ["q1 0 d0 1"])
    assert main(args) == 0
    changed = json.loads(capsys.readouterr().out)
    assert changed["changed"] == 1 and changed["written"] == 1 and changed["kept_from_before"] == 1
    with Store(db) as store:
        assert [j.grade for j in store.judgments("bm")] == [3, 2, 1]  # history kept
        log = json.loads(store.get_meta("import:bm"))
    assert [entry["written"] for entry in log] == [2, 0, 1]
    assert {k: j.grade for k, j in current(db, "bm").items()} == {("q1", "d0"): 1, ("q1", "d1"): 2}


def test_name_of_a_human_annotator_is_refused(db, tmp_path, capsys):
    labels = write(tmp_path / "x.qrels", ["q1 0 d0 3"])
    assert main(["import-labels", "--db", str(db), "--as", "ann", labels]) == 2
    assert "role 'human'" in capsys.readouterr().err
    assert len(current(db, "ann")) == 1


def test_imported_judge_appears_in_agree(db, tmp_path, capsys):
    labels = write(tmp_path / "bm.qrels", ["q1 0 d0 3", "q1 0 d1 2"])
    assert main(["import-labels", "--db", str(db), "--as", "bm", labels]) == 0
    capsys.readouterr()
    assert main(["agree", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (judge,) = report["judges"]
    assert judge["judge"] == "bm" and judge["labels"] == 2
    assert judge["against"][0]["annotator"] == "ann" and judge["against"][0]["n"] == 1
