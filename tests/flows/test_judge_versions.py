"""Judge versions pinned (issue 15, item 4): every non-human label names the version of the
judge that gave it, in the store (both backends) and in golden.yaml; `eval` warns when one judged
set mixes versions of a judge, `agree` measures each version apart; stores and golden files
written before versions were recorded still open, their labels' versions unknown."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import raw_execute
from tui_fixtures import build_store

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.core.judgments.judge_versions import (
    MIXED_CODE,
    UNKNOWN,
    JudgeIdentity,
    JudgeLabel,
    JudgeLabels,
    cuts_digest,
    mixing_problems,
)
from workbench.core.model import Judgment, Level, Role
from workbench.flows.judged import judged_set
from workbench.formats import golden_text, read_golden
from workbench.store import open_store

ROOT = Path(__file__).resolve().parents[2]
V1 = JudgeIdentity("import-labels", "gpt-4o-2024-05-13", "umbrela-v1")
V2 = JudgeIdentity("import-labels", "gpt-4o-2024-08-06", "umbrela-v1")
ITEMS = [(f"q{q}", f"d{q}-{i:03d}") for q in range(2) for i in range(12)]


def truth(item: tuple[str, str]) -> int:
    """alice's grade of an item (the humans' truth here)."""
    return int(item[1][-3:]) % 4


def noisy(item: tuple[str, str]) -> int:
    """V1's grade: wrong on every third item."""
    return (truth(item) + 1) % 4 if int(item[1][-3:]) % 3 == 0 else truth(item)


def model(item: tuple[str, str], grade: int, version: str) -> Judgment:
    return Judgment("llm", *item, grade, graded_at=1.0, role=Role.MODEL, judge_version=version)


def judged(location: str, second: str = "half") -> str:
    """24 items graded by alice and by the judge llm: V1 on all, then V2 on half of them
    (`second` 'half'), on all (`'all'`: V1's labels all superseded) or nowhere (`'none'`)."""
    with build_store(location, queries=2, per_query=12) as store:
        store.add_judgments(Judgment("alice", *item, truth(item), graded_at=1.0) for item in ITEMS)
        first = store.record_judge("llm", V1)
        store.add_judgments(model(item, noisy(item), first) for item in ITEMS)
        if second != "none":
            newer = store.record_judge("llm", V2)
            again = ITEMS if second == "all" else ITEMS[::2]
            store.add_judgments(model(item, truth(item), newer) for item in again)
    return location


def write_run(path: Path) -> str:
    lines = [f"{q} Q0 {d} {rank} {30 - rank} run" for rank, (q, d) in enumerate(ITEMS, 1)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def mixed_problems(report: dict) -> list[dict]:
    return [p for p in report["problems"] if p["code"] == MIXED_CODE]


def as_schema_1(location: str) -> None:
    """Take a store back to what schema 1 made: no judge_version column, no judge_versions."""
    statements = (
        "DROP TABLE judge_versions",
        "ALTER TABLE judgments DROP COLUMN judge_version",
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
    )
    if location.startswith("postgresql://"):
        for sql in statements:
            raw_execute(location, sql)
        return
    conn = sqlite3.connect(location, isolation_level=None)  # autocommit
    try:
        for sql in statements:
            conn.execute(sql)
        columns = [row[1] for row in conn.execute("PRAGMA table_info(judgments)")]
    finally:
        conn.close()
    assert "judge_version" not in columns


# -- the pure core ------------------------------------------------------------------------------


def test_a_version_is_its_identity_and_every_field_counts():
    same = JudgeIdentity("import-labels", "gpt-4o-2024-05-13", "umbrela-v1", "")
    assert V1.version == same.version and V1 == same
    assert len(V1.version) == 12 and int(V1.version, 16) >= 0
    variants = {
        JudgeIdentity("judge-llm", "m", "p", "s"),
        JudgeIdentity("judge-model", "m", "p", "s"),
        JudgeIdentity("judge-llm", "m2", "p", "s"),
        JudgeIdentity("judge-llm", "m", "p2", "s"),
        JudgeIdentity("judge-llm", "m", "p", "s2"),
        JudgeIdentity("judge-llm", "m", "", "ps"),  # fields do not run into each other
        JudgeIdentity("judge-llm", "m", "ps", ""),
    }
    assert len({v.version for v in variants}) == len(variants)
    assert V1.describe() == "import-labels, model gpt-4o-2024-05-13, prompt umbrela-v1"
    assert cuts_digest([0.10004, 1.5], [0, 1, 2]) == cuts_digest([0.100041, 1.5], [0, 1, 2])
    assert cuts_digest([0.1, 1.5], [0, 1, 2]) != cuts_digest([0.1, 1.6], [0, 1, 2])


def test_mixing_is_several_versions_of_one_judge_and_nothing_else():
    labels = JudgeLabels.of(
        [("alice", "human", "")] * 5  # people have no versions: never counted
        + [("carol", "adjudicator", "x")]
        + [("llm", "model", "a")] * 3
        + [("llm", "model", "b")]
        + [("other", "model", "a")] * 2  # two judges sharing one version: not mixing
        + [("old", "model", UNKNOWN)] * 4  # only unknown: nothing to compare
        + [("oracle", "oracle", UNKNOWN), ("oracle", "oracle", "c")],
        {"llm": {"a": V1, "b": V2}},
    )
    assert labels.counts == {
        "llm": {"a": 3, "b": 1},
        "other": {"a": 2},
        "old": {UNKNOWN: 4},
        "oracle": {UNKNOWN: 1, "c": 1},
    }
    mixed = labels.mixed()
    assert [(m.judge, [(v.version, v.labels) for v in m.versions]) for m in mixed] == [
        ("llm", [("a", 3), ("b", 1)]),
        ("oracle", [(UNKNOWN, 1), ("c", 1)]),
    ]
    problems = mixing_problems(labels)
    assert [(p.level, p.code, p.qid, p.run) for p in problems] == [
        (Level.WARNING, MIXED_CODE, None, None)
    ] * 2
    llm = problems[0].message
    assert llm.startswith("judge llm's labels come from 2 versions: a (import-labels, model gpt-4o")
    assert "a (import-labels, model gpt-4o-2024-05-13, prompt umbrela-v1): 3 labels" in llm
    assert "b (import-labels, model gpt-4o-2024-08-06, prompt umbrela-v1): 1 labels" in llm
    assert "kept beside the qrels" in llm  # a model judge's labels are not what eval scores
    oracle = problems[1].message
    assert "no recorded version" in oracle and "c (identity not recorded): 1 labels" in oracle
    assert "kept beside" not in oracle  # an oracle's grades are in the qrels
    assert mixing_problems(None) == [] and mixing_problems(JudgeLabels.of([])) == []


# -- the store, golden.yaml and eval ------------------------------------------------------------


def test_export_keeps_every_identity_and_reads_back_as_written(store_location, tmp_path, capsys):
    judged(store_location)
    with open_store(store_location) as store:
        assert store.get_meta("schema_version") == "2"
        assert store.judge_versions() == {"llm": {V1.version: V1, V2.version: V2}}
        current = {(j.query_id, j.doc_id): j for j in store.current_judgments("llm")}
        oracle = store.record_judge("oracle", JudgeIdentity("simulate", scorer="oracle q.txt"))
        store.add_judgment(Judgment("oracle", "q0", "d0-001", 1, role=Role.ORACLE,
                                    judge_version=oracle))  # fmt: skip
        expected_verdict = judged_set(store).judges()
    assert {j.judge_version for j in current.values()} == {V1.version, V2.version}
    assert sum(j.judge_version == V2.version for j in current.values()) == 12
    path = tmp_path / "golden.yaml"
    assert main(["export", "--db", store_location, "--golden", str(path)]) == 0
    assert "24 model label(s) of llm kept beside the set" in capsys.readouterr().out
    golden = read_golden(path)
    text = path.read_text()
    assert text.startswith("schema: workbench-golden\nversion: 2\n")
    assert golden.judges == {
        "llm": {V1.version: V1, V2.version: V2},
        "oracle": {oracle: JudgeIdentity("simulate", scorer="oracle q.txt")},
    }
    assert golden.judge_labels == sorted(
        JudgeLabel(q, d, "llm", j.grade or 0, j.judge_version) for (q, d), j in current.items()
    )
    assert golden.label_versions == {("q0", "d0-001"): {"oracle": oracle}}
    assert golden.judged_by[("q0", "d0-001")] == ["alice", "oracle"]
    assert all("llm" not in by for by in golden.judged_by.values())  # never in the qrels
    assert golden.judge_label_counts() == expected_verdict  # one verdict, store or file
    assert golden_text(golden) == text  # read back, written again: byte for byte
    assert f"by: llm, version: {V2.version}}}" in text
    lean = tmp_path / "lean.yaml"
    assert main(["export", "--db", store_location, "--golden", str(lean), "--no-judge-labels"]) == 0
    capsys.readouterr()
    left = read_golden(lean)
    assert left.judge_labels == [] and "llm" not in left.judges
    assert "judge_labels" not in lean.read_text()
    assert left.qrels == golden.qrels and left.judges == {"oracle": golden.judges["oracle"]}


@pytest.mark.parametrize("second", ["half", "all", "none"])
def test_eval_warns_when_a_set_mixes_versions_of_a_judge(store_location, second, tmp_path, capsys):
    judged(store_location, second)
    run = write_run(tmp_path / "r.run")
    golden = tmp_path / "g.yaml"
    assert main(["export", "--db", store_location, "--golden", str(golden)]) == 0
    capsys.readouterr()
    for qrels in (store_location, str(golden)):
        code, report = run_json(["eval", "--qrels", qrels, "--run", run, "-k", "5", "--json"],
                                capsys)  # fmt: skip
        assert code == 0  # a warning, never a failure
        found = mixed_problems(report)
        if second != "half":  # one version (V2 re-judged everything, or V1 alone): silent
            assert found == []
            continue
        assert len(found) == 1 and found[0]["level"] == "warning" and found[0]["run"] is None
        message = found[0]["message"]
        assert f"{V1.version} ({V1.describe()}): 12 labels" in message
        assert f"{V2.version} ({V2.describe()}): 12 labels" in message
        assert message.startswith("judge llm's labels come from 2 versions")
    if second == "half":
        # --strict fails on the denominators (a pool without a sample outside it measures
        # none), never on the mixing, which stays a warning
        argv = ["eval", "--qrels", str(golden), "--run", run, "-k", "5", "--strict"]
        code, report = run_json([*argv, "--json"], capsys)
        assert code == 1 and [p["level"] for p in mixed_problems(report)] == ["warning"]
        errors = {p["code"] for p in report["problems"] if p["level"] == "error"}
        assert errors == {"unmeasured_coverage"}
        assert main(argv) == 1
        out = capsys.readouterr().out
        assert "the judgments" in out and f"warning [{MIXED_CODE}] judge llm's labels" in out


def test_eval_judge_names_the_mixing_of_its_own_judge(tmp_path, capsys):
    db = judged(str(tmp_path / "s.db"))
    run = write_run(tmp_path / "r.run")
    argv = ["eval", "--qrels", db, "--judge", "llm", "--run", run, "-k", "5"]
    code, report = run_json([*argv, "--json"], capsys)
    assert [p["code"] for p in report["problems"]] == [MIXED_CODE]
    assert main(argv) in (0, 1)
    assert f"warning [{MIXED_CODE}] judge llm's labels come from 2 versions" in (
        capsys.readouterr().out
    )


def test_a_store_from_before_versions_opens_reads_and_upgrades(store_location, tmp_path, capsys):
    judged(store_location, "none")
    as_schema_1(store_location)
    with open_store(store_location) as store:
        assert store.get_meta("schema_version") == "1"
        assert store.judge_versions() == {}
        llm = store.current_judgments("llm")
        assert len(llm) == 24 and {j.judge_version for j in llm} == {UNKNOWN}
        store.add_judgment(Judgment("bob", "q0", "d0-000", 2))  # a person's: still schema 1
        assert store.get_meta("schema_version") == "1"
    run = write_run(tmp_path / "r.run")
    golden = tmp_path / "g.yaml"
    assert main(["export", "--db", store_location, "--golden", str(golden)]) == 0
    assert read_golden(golden).judges == {}  # the labels are kept, their version unknown
    assert {label.version for label in read_golden(golden).judge_labels} == {UNKNOWN}
    capsys.readouterr()
    code, report = run_json(["eval", "--qrels", store_location, "--run", run, "--json"], capsys)
    assert code == 0 and mixed_problems(report) == []
    code, report = run_json(["agree", "--db", store_location, "--json"], capsys)
    assert report["judges"][0]["versions"] == [
        {"version": UNKNOWN, "identity": None, "labels": 24, "resolved": None}
    ]
    with open_store(store_location) as store:  # the first versioned label brings schema 2
        newer = store.record_judge("llm", V2)
        store.add_judgments(model(item, truth(item), newer) for item in ITEMS[:6])
        assert store.get_meta("schema_version") == "2"
        assert {j.judge_version for j in store.judgments("bob")} == {UNKNOWN}
    code, report = run_json(["eval", "--qrels", store_location, "--run", run, "--json"], capsys)
    (found,) = mixed_problems(report)
    unknown = "no recorded version (labelled before versions were recorded): 18 labels"
    assert unknown in found["message"]
    assert f"{V2.version} ({V2.describe()}): 6 labels" in found["message"]


def test_golden_files_from_before_versions_are_read_and_written_unchanged(capsys):
    demo = ROOT / "golden" / "demo.yaml"
    golden = read_golden(demo)
    assert not golden.has_judges and golden.judge_label_counts().mixed() == []
    assert golden_text(golden) == demo.read_text()  # still version 1, byte for byte
    seed = ROOT / "golden" / "seed-example"
    argv = ["eval", "--qrels", f"{seed}.yaml", "--run", f"{seed}.run", "-k", "5", "--json"]
    code, report = run_json(argv, capsys)
    assert code == 0 and mixed_problems(report) == []


V2_HEAD = """\
schema: workbench-golden
version: 2
grade_scale: {0: no, 1: yes}
annotators:
  - {name: alice, role: human}
  - {name: llm, role: model}
  - {name: ora, role: oracle}
"""


MALFORMED = """\
judges:
  - {name: llm, version: aaa, kind: judge-llm, model: m}
  - {name: llm, version: aaa, kind: judge-llm}
  - {name: llm, version: bbb}
  - {name: alice, version: ccc, kind: import-labels}
  - {name: ora, version: ddd, kind: simulate, colour: red}
  - {name: ora, version: eee, kind: [simulate]}
queries:
  - id: q1
    text: a query
    judgments:
      - {doc: d1, grade: 1, by: [alice, ora], versions: {ora: zzz}}
      - {doc: d2, grade: 0, by: [alice], versions: {ora: aaa}}
      - {doc: d3, grade: 0, by: [alice], versions: [aaa]}
    judge_labels:
      - {doc: d1, grade: 1, by: llm, version: aaa}
      - {doc: d1, grade: 0, by: llm}
      - {doc: d2, grade: 5, by: llm}
      - {doc: d3, grade: 1, by: alice}
      - {doc: d4, grade: 1, by: llm, version: ddd}
"""


def test_a_malformed_identity_is_named_by_line_and_key_path(tmp_path, capsys):
    path = tmp_path / "g.yaml"
    path.write_text(V2_HEAD + MALFORMED)
    with pytest.raises(InputError) as info:
        read_golden(path)
    assert info.value.problems == [
        f"{path}:10: judges[1].version: version 'aaa' of 'llm' listed twice",
        f"{path}:11: judges[2]: missing key 'kind'",
        f"{path}:12: judges[3].name: 'alice' is a human: only a non-human judge has versions",
        f"{path}:13: judges[4].colour: unknown key (allowed: name, version, kind, model, prompt,"
        " scorer)",
        f"{path}:14: judges[5].kind: expected text",
        f"{path}:19: queries[0].judgments[0].versions.ora: version 'zzz' of 'ora' is not in judges",
        f"{path}:20: queries[0].judgments[1].versions.ora: 'ora' is not in this judgment's by",
        f"{path}:21: queries[0].judgments[2].versions: expected a mapping judge -> version, e.g."
        " {oracle: 5d41402abc4b}",
        f"{path}:24: queries[0].judge_labels[1].doc: doc 'd1' labelled twice by 'llm' for query"
        " 'q1' (first at judge_labels[0])",
        f"{path}:25: queries[0].judge_labels[2].grade: grade 5 is outside the grade scale [0, 1]",
        f"{path}:26: queries[0].judge_labels[3].by: 'alice' is a human: only a non-human judge has"
        " versions",
        f"{path}:27: queries[0].judge_labels[4].version: version 'ddd' of 'llm' is not in judges",
    ]
    run = write_run(tmp_path / "r.run")
    assert main(["eval", "--qrels", str(path), "--run", run]) == 2
    err = capsys.readouterr().err
    assert "judges[2]: missing key 'kind'" in err and "Traceback" not in err


def test_a_version_1_file_with_judges_is_refused_by_line(tmp_path, capsys):
    path = tmp_path / "v1.yaml"
    path.write_text(V2_HEAD.replace("version: 2", "version: 1") + HOSTILE)
    run = write_run(tmp_path / "r.run")
    assert main(["eval", "--qrels", str(path), "--run", run]) == 2
    assert f"{path}:9: judges: version 1 records no judges" in capsys.readouterr().err


HOSTILE = """\
judges:
  - {name: llm, version: aaa, kind: judge-llm, model: "\\e[2J\\e]52;c;eA==\\a"}
  - {name: llm, version: bbb, kind: judge-llm, model: "m2 \\u202e"}
queries:
  - id: q0
    text: a query
    judgments:
      - {doc: d0-001, grade: 1, by: [alice]}
    judge_labels:
      - {doc: d0-001, grade: 1, by: llm, version: aaa}
      - {doc: d0-002, grade: 0, by: llm, version: bbb}
"""


def test_identities_from_the_data_are_shown_literally(tmp_path, capsys):
    text = V2_HEAD + HOSTILE
    path = tmp_path / "g.yaml"
    path.write_text(text)
    assert read_golden(path).judges["llm"]["aaa"].model == "\x1b[2J\x1b]52;c;eA==\x07"
    run = write_run(tmp_path / "r.run")
    assert main(["eval", "--qrels", str(path), "--run", run, "-k", "5"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # notes wrap to the terminal's width
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "model ␛[2J␛]52;c;eA==␇" in out and "model m2 \\u202e" in out


# -- agree --------------------------------------------------------------------------------------


def test_agree_measures_each_version_of_a_judge_apart(store_location, capsys):
    judged(store_location, "half")
    code, report = run_json(["agree", "--db", store_location, "--json"], capsys)
    (judge,) = report["judges"]
    assert judge["judge"] == "llm" and judge["labels"] == 24
    first, second = sorted(judge["versions"], key=lambda v: v["identity"]["model"])
    assert (first["version"], first["labels"], first["identity"]) == (
        V1.version, 12, V1.to_json()
    )  # fmt: skip
    assert (second["version"], second["labels"]) == (V2.version, 12)
    # V2 agrees with the people on every item it graded; V1 is wrong on a third of its own
    assert second["resolved"]["n"] == 12 and second["resolved"]["kappa"] == 1.0
    assert first["resolved"]["n"] == 12 and first["resolved"]["agreement"] == pytest.approx(8 / 12)
    assert first["resolved"]["kappa"] < 0.6 <= judge["resolved"]["kappa"] < 1.0
    assert main(["agree", "--db", store_location]) == 0
    out = capsys.readouterr().out
    assert "llm's labels come from 2 versions of the judge" in out
    assert "llm by version, against the resolved human grade" in out
    assert f"{V2.version} ({V2.describe()}), 12 labels" in out


def test_agree_with_one_version_names_it_and_gives_no_second_table(store_location, capsys):
    judged(store_location, "all")
    code, report = run_json(["agree", "--db", store_location, "--json"], capsys)
    assert report["judges"][0]["versions"] == [
        {"version": V2.version, "identity": V2.to_json(), "labels": 24, "resolved": None}
    ]
    assert main(["agree", "--db", store_location, "--wide"]) == 0
    out = capsys.readouterr().out
    assert f"version {V2.version} ({V2.describe()}), 24 labels" in out
    assert "by version" not in out


# -- the commands that grade --------------------------------------------------------------------


def test_import_labels_record_the_judge_and_a_new_version_writes_again(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    build_store(db, queries=2, per_query=12).close()
    labels = tmp_path / "labels.qrels"
    labels.write_text("".join(f"{q} 0 {d} {truth((q, d))}\n" for q, d in ITEMS))
    argv = ["import-labels", "--db", db, "--as", "llm", str(labels), "--json"]
    _, first = run_json(argv, capsys)
    by_file = first["judge"]
    assert by_file["kind"] == "import-labels" and by_file["scorer"].startswith(
        "file labels.qrels, sha256 "
    )
    _, again = run_json(argv, capsys)  # the same file: the same version, nothing written
    assert again["judge"] == by_file and again["written"] == 0 and again["unchanged"] == 24
    named = [*argv, "--judge-model", "gpt-4o-2024-08-06", "--judge-prompt", "umbrela-v1"]
    _, upgraded = run_json(named, capsys)  # the same grades, from a judge now named: written
    assert upgraded["judge"]["version"] == V2.version and upgraded["new_version"] == 24
    assert upgraded["written"] == 24 and upgraded["changed"] == 0
    with open_store(db) as store:
        assert {j.judge_version for j in store.current_judgments("llm")} == {V2.version}
        assert store.judge_versions()["llm"][V2.version] == V2
        assert len(store.judge_versions()["llm"]) == 2
    human = ["import-labels", "--db", db, "--as", "bob", "--role", "human", str(labels)]
    assert main([*human, "--judge-model", "x"]) == 2
    assert "a person's labels have no judge version" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse: exit 2, the option named
        main([*argv, "--judge-model", "two\nlines"])
    assert refused.value.code == 2
    assert "--judge-model: 'two␊lines': expected 1-200 characters" in capsys.readouterr().err


def test_judge_model_is_a_new_version_when_its_cuts_or_weights_change():
    from workbench.core.judges.calibration import ScoreCuts
    from workbench.flows.model_judge import judge_identity

    cuts = ScoreCuts((-1.0, 0.5, 2.0), (0, 1, 2, 3), 0.8, 40)
    refit = ScoreCuts((-1.0, 0.7, 2.0), (0, 1, 2, 3), 0.8, 40)
    base = judge_identity("cross-encoder", "ms-marco", "", cuts)
    assert base.kind == "judge-model" and base.model == "ms-marco"
    assert base.scorer == f"cross-encoder, cuts {cuts_digest(cuts.cuts, cuts.grades)}"
    assert judge_identity("cross-encoder", "ms-marco", "", cuts) == base  # a rerun: the same
    others = [
        judge_identity("cross-encoder", "ms-marco", "", refit),
        judge_identity("cross-encoder", "ms-marco", "ab" * 32, cuts),
        judge_identity("bi-encoder", "ms-marco", "", cuts),
        judge_identity("cross-encoder", "other", "", cuts),
    ]
    assert "weights abababababab" in others[1].scorer
    assert len({base.version, *(o.version for o in others)}) == 5


def test_simulate_records_its_oracle_and_two_oracles_are_two_versions(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    build_store(db, queries=2, per_query=12).close()
    first, second = tmp_path / "a.qrels", tmp_path / "b.qrels"
    first.write_text("q0 0 d0-001 2\n")
    second.write_text("q0 0 d0-001 3\n")
    argv = ["simulate", "--db", db, "--annotator", "ora", "--per-query", "6"]
    assert main([*argv, "--oracle", str(first)]) == 0
    assert main([*argv, "--oracle", str(second)]) == 0  # another oracle, under the same name
    run = write_run(tmp_path / "r.run")
    capsys.readouterr()
    _, report = run_json(["eval", "--qrels", db, "--run", run, "--json"], capsys)
    (found,) = mixed_problems(report)
    assert "judge ora's labels come from 2 versions" in found["message"]
    assert "(simulate, scorer oracle a.qrels, sha256 " in found["message"]
    assert "(simulate, scorer oracle b.qrels, sha256 " in found["message"]
    assert "kept beside" not in found["message"]  # an oracle's grades are the qrels' here


def test_judge_llm_records_its_identity_and_stamps_labels_from_before(tmp_path, capsys):
    from llm_server import ChatServer, answer

    from workbench.core.judges.llm_grade import ANSWER_RULE

    db = str(tmp_path / "s.db")
    build_store(db, queries=1, per_query=4).close()
    server = ChatServer(lambda prompt, nth: (200, answer("##final score: 2"), 0.0, {}))
    argv = ["judge-llm", "--db", db, "--endpoint", server.url, "--model", "m1", "--as", "llm",
            "--backoff", "0"]  # fmt: skip
    try:
        assert main(argv) == 0
        with open_store(db) as store:
            ((version, identity),) = store.judge_versions()["llm"].items()
            assert identity.kind == "judge-llm" and identity.model == "m1"
            assert identity.scorer == ANSWER_RULE and len(identity.prompt) == 16
            assert {j.judge_version for j in store.current_judgments("llm")} == {version}
        assert f"version {version}" in capsys.readouterr().out
        as_schema_1(db)  # labels from before versions: a rerun stamps them, asking nothing
        assert main(argv) == 0 and len(server.requests) == 4
        assert "4 judgments restored" in capsys.readouterr().out
        with open_store(db) as store:
            assert {j.judge_version for j in store.current_judgments("llm")} == {version}
    finally:
        server.close()


# -- moving a store -----------------------------------------------------------------------------


def test_store_copy_keeps_versions_both_ways(pg_url, tmp_path, capsys):
    source = judged(str(tmp_path / "src.db"))
    assert main(["store", "copy", source, pg_url]) == 0
    assert "DIFFERS" not in capsys.readouterr().out
    back = str(tmp_path / "back.db")
    assert main(["store", "copy", pg_url, back]) == 0
    with open_store(source) as a, open_store(back) as b:
        assert a.judgments() == b.judgments() and a.judge_versions() == b.judge_versions()
        assert len(a.judge_versions()["llm"]) == 2
    old = judged(str(tmp_path / "old.db"), "none")
    as_schema_1(old)  # a schema-1 store copies into a new one: its versions unknown
    new = str(tmp_path / "new.db")
    assert main(["store", "copy", old, new]) == 0
    assert "DIFFERS" not in capsys.readouterr().out
    with open_store(new) as store:
        assert store.get_meta("schema_version") == "2"  # the destination's own, never copied
        assert {j.judge_version for j in store.judgments()} == {UNKNOWN}


def test_the_annotator_login_needs_nothing_new_on_an_older_store(pg_url, capsys):
    """A person's grade on a schema-1 store alters nothing, so an annotators' login made for it
    keeps working; once the owner's first judge brought schema 2, the printed grant of
    judge_versions applies, and that table is append-only for the login too."""
    import uuid

    import psycopg
    from conftest import PG_URL

    schema = pg_url.rsplit("%3D", 1)[1]
    build_store(pg_url, queries=1, per_query=2).close()
    as_schema_1(pg_url)
    assert main(["store", "role-sql", "--schema", schema]) == 0
    role = f"wbtest_annotator_{uuid.uuid4().hex[:8]}"
    made, grants = capsys.readouterr().out.replace("workbench_annotator", role).split("$wb$;")
    statements = [s for s in grants.split(";") if "GRANT" in s]
    later = [s for s in statements if "judge_versions" in s]
    try:
        raw_execute(pg_url, made + "$wb$;")  # the role: one DO block (made, or kept)
        for statement in statements:
            if statement not in later:
                raw_execute(pg_url, statement)
        with pytest.raises(psycopg.Error, match="judge_versions"):
            raw_execute(pg_url, later[0])  # as its comment says: not yet
        as_annotator = pg_url.replace("postgresql://", f"postgresql://{role}@")
        with open_store(as_annotator) as store:
            store.add_judgment(Judgment("ann", "q0", "d0-000", 2))
            assert store.get_meta("schema_version") == "1"
        with open_store(pg_url) as store:  # the owner runs the first judge
            store.add_judgment(model(("q0", "d0-001"), 1, store.record_judge("llm", V1)))
        capsys.readouterr()
        assert main(["export", "--db", as_annotator, "--qrels", "/dev/null"]) == 2  # not yet
        assert "GRANTs again" in capsys.readouterr().err  # and it says what to do
        for statement in statements:  # the GRANTs again, as the comment says
            if "GRANT" in statement:
                raw_execute(pg_url, statement)
        with open_store(as_annotator) as store:
            version = store.record_judge("llm2", V2)
            store.add_judgment(Judgment("llm2", "q0", "d0-000", 3, role=Role.MODEL,
                                        judge_version=version))  # fmt: skip
            assert {n: set(v) for n, v in store.judge_versions().items()} == {
                "llm": {V1.version}, "llm2": {V2.version}
            }  # fmt: skip
        with pytest.raises(psycopg.Error, match="append-only|permission denied"):
            raw_execute(as_annotator, "DELETE FROM judge_versions")
    finally:
        raw_execute(PG_URL, f"DROP OWNED BY {role}")
        raw_execute(PG_URL, f"DROP ROLE {role}")
