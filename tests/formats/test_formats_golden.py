"""golden.yaml: the seed example, strict reading, lossless round trips."""

from __future__ import annotations

import math
import unicodedata
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seed_example import SEED_QRELS, SEED_RANKINGS

from workbench.core.display import has_control
from workbench.core.errors import InputError
from workbench.core.model import Query
from workbench.formats import (
    Golden,
    golden_text,
    load_judgments,
    read_golden,
    read_qrels,
    read_run,
    write_golden,
    write_qrels,
)

GOLDEN = Path(__file__).parents[2] / "golden"
SEED_YAML = GOLDEN / "seed-example.yaml"
SEED_RUN = GOLDEN / "seed-example.run"


def problems_of(path: Path) -> list[str]:
    with pytest.raises(InputError) as info:
        read_golden(path)
    return info.value.problems


def write(tmp_path: Path, text: str, name: str = "g.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- the seed example ---------------------------------------------------------------------------


def test_seed_files_match_the_design_table():
    golden = read_golden(SEED_YAML)
    assert golden.name == "seed-example"
    assert "design document" in golden.description
    assert golden.qrels == SEED_QRELS
    assert [q.query_id for q in golden.queries] == list(SEED_QRELS)
    assert all(q.text for q in golden.queries)
    run = read_run(SEED_RUN)
    assert run.name == "seed" and run.warnings == []
    assert run.rankings() == SEED_RANKINGS
    lines = [line.split() for line in SEED_RUN.read_text().splitlines()]
    for qid in SEED_RANKINGS:
        rows = [row for row in lines if row[0] == qid]
        assert [int(r[3]) for r in rows] == list(range(1, 11))
        scores = [float(r[4]) for r in rows]
        assert all(a > b for a, b in pairwise(scores))


def test_seed_figures_at_k5():
    """The figures DESIGN.md states, recomputed here by formula from the two files."""
    qrels, _ = load_judgments(SEED_YAML)
    rankings = read_run(SEED_RUN).rankings()
    k = 5
    figures = {}
    for qid, ranking in rankings.items():
        judged = qrels[qid]
        rel = {d for d, g in judged.items() if g >= 1}
        hits = [d for d in ranking[:k] if d in rel]
        dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
        ideal = sorted(judged.values(), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        figures[qid] = (len(hits) / k, len(hits) / len(rel), round(dcg / idcg, 3))
    assert figures == {
        "q_faw": (0.4, 2 / 3, 0.735),
        "q_store": (0.4, 2 / 3, 0.536),
        "q_milk": (0.4, 2 / 3, 0.811),
        "q_broad": (0.8, 0.5, 0.880),
    }


def test_seed_rewrite_is_lossless(tmp_path):
    golden = read_golden(SEED_YAML)
    out = tmp_path / "seed.yaml"
    write_golden(out, golden)
    assert read_golden(out) == golden


# -- strict reading -----------------------------------------------------------------------------

MINIMAL = """\
schema: workbench-golden
version: 1
queries:
  - id: q1
    text: a query
    judgments:
      - {doc: d1, grade: 0}
"""


def test_minimal_file_uses_the_default_scale_and_keeps_grade_zero(tmp_path):
    golden = read_golden(write(tmp_path, MINIMAL))
    assert golden.qrels == {"q1": {"d1": 0}}
    assert golden.grade_scale == {
        0: "not relevant",
        1: "related",
        2: "relevant",
        3: "highly relevant",
    }
    assert golden.pool is None and golden.coverage is None and golden.judged_by == {}


def test_yaml_11_surprises_stay_strings(tmp_path):
    text = (
        MINIMAL.replace("id: q1", "id: no")
        .replace("doc: d1", "doc: 007")
        .replace("text: a query", "text: yes")
    )
    golden = read_golden(write(tmp_path, text))
    assert golden.qrels == {"no": {"007": 0}}
    assert golden.queries[0].text == "yes"


def test_every_problem_named_with_line_and_key_path(tmp_path):
    text = """\
schema: workbench-golden
version: 1
grade_scale: {0: no, 1: yes}
annotators:
  - {name: alice, role: human}
  - {name: bob, role: robot}
colour: blue
queries:
  - id: q1
    text: first
    judgments:
      - {doc: d1, grade: 2}
      - {doc: d2, grade: "1"}
      - {doc: d3, grade: 1.5}
      - {doc: d4, grade: 1, by: [carol]}
      - {doc: d1, grade: 0}
      - {doc: d5, grade: 1, score: 3}
      - {grade: 1}
  - id: q1
    text: again
  - id: q2
    txt: typo
"""
    path = write(tmp_path, text)
    assert problems_of(path) == [
        f"{path}:7: colour: unknown key (allowed: {', '.join(_top_keys())})",
        f"{path}:6: annotators[1].role: 'robot' is not one of human, adjudicator, model, oracle",
        f"{path}:12: queries[0].judgments[0].grade: grade 2 is outside the grade scale [0, 1]",
        f"{path}:13: queries[0].judgments[1].grade: '1' is not an integer",
        f"{path}:14: queries[0].judgments[2].grade: '1.5' is not an integer",
        f"{path}:15: queries[0].judgments[3].by: 'carol' is not in annotators",
        f"{path}:16: queries[0].judgments[4].doc: doc 'd1' judged twice for query 'q1'",
        f"{path}:17: queries[0].judgments[5].score: unknown key (allowed: doc, grade, by, note,"
        " versions)",
        f"{path}:18: queries[0].judgments[6]: missing key 'doc'",
        f"{path}:19: queries[1].id: query 'q1' listed twice (first on line 9)",
        f"{path}:22: queries[2].txt: unknown key (allowed: id, text, narrative, judgments,"
        " judge_labels)",
        f"{path}:21: queries[2]: missing key 'text'",
    ]


def _top_keys() -> list[str]:
    from workbench.formats.golden import TOP_KEYS

    return list(TOP_KEYS)


def test_duplicate_keys_are_errors_with_their_line(tmp_path):
    text = MINIMAL.replace("version: 1\n", "version: 1\nname: a\nname: b\n")
    text += "coverage:\n  judged: 3\n  judged: 4\n"
    path = write(tmp_path, text)
    assert problems_of(path) == [
        f"{path}:4: name: duplicate key",
        f"{path}:12: coverage.judged: duplicate key",
    ]


@pytest.mark.parametrize(
    "snippet, message",
    [
        (
            "name: !!python/object:os.system x\n",
            "YAML tag 'tag:yaml.org,2002:python/object:os.system' is not allowed",
        ),
        ("name: !!str 3\n", "YAML tag 'tag:yaml.org,2002:str' is not allowed"),
        ("name: &n x\ndescription: *n\n", "YAML anchors and aliases are not allowed"),
    ],
)
def test_tags_anchors_and_aliases_are_refused(tmp_path, snippet, message):
    path = write(tmp_path, MINIMAL.replace("version: 1\n", "version: 1\n" + snippet))
    problems = problems_of(path)
    assert problems and all(p.startswith(f"{path}:3: ") for p in problems[:1])
    assert message in problems[0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty file"),
        ("just text\n", "expected a mapping with keys schema, version"),
        ("a: [1\n", "not valid YAML"),
        ("a: 1\n---\nb: 2\n", "g.yaml:2: only one YAML document is allowed"),
        (
            MINIMAL.replace("workbench-golden", "other"),
            "schema: expected 'workbench-golden', found 'other'",
        ),
        (
            MINIMAL.replace("version: 1", "version: 3"),
            "version: unsupported version 3 (this reads 1, 2)",
        ),
        (MINIMAL.replace("version: 1\n", ""), "missing key 'version'"),
        (MINIMAL + "aliases: {b: c, c: d}\n", "aliases.b: canonical id 'c' is itself an alias"),
        (
            MINIMAL + "pool: {systems: [bm25], depth: twenty, strategy: rrf}\n",
            "pool.depth: 'twenty' is not an integer",
        ),
        (
            MINIMAL + "pool: {systems: bm25, depth: 20, strategy: rrf}\n",
            "pool.systems: expected a list",
        ),
        (MINIMAL.replace("text: a query", "text: [a, b]"), "queries[0].text: expected text"),
    ],
)
def test_invalid_files(tmp_path, text, message):
    problems = problems_of(write(tmp_path, text))
    assert any(message in p for p in problems), problems


# -- round trips --------------------------------------------------------------------------------


def full_golden() -> Golden:
    return Golden(
        name="round trip: ünïcode",
        description="Line one\nline two, with 'quotes' and \"doubles\" and # not a comment",
        grade_scale={-1: "unjudged", 0: "no", 1: "yes", 4: "gain four"},
        annotators=[{"name": "alice", "role": "human"}, {"name": "judge-1", "role": "adjudicator"}],
        pool={"systems": ["bm25", "dense"], "depth": 20, "strategy": "rrf", "seed": 7,
              "params": {"k": 60, "weights": [0.5, 0.5], "note": None}},
        queries=[Query("q1", "Àgbẹ̀ ń gbin àgbàdo", "only: maize"), Query("no", "true", ""),
                 Query("q3", "no judgments", "")],
        qrels={"q1": {"d1": 4, "d2": 0, "doc#x:y,z": -1}, "no": {"007": 1}, "q3": {}},
        judged_by={("q1", "d1"): ["alice", "judge-1"], ("no", "007"): ["alice"]},
        aliases={"d1-copy": "d1", "x": "d2"},
        coverage={"judged_pairs": 4, "per_query": {"q1": {"found": 0.5}}, "estimate": None},
        disagreements=[{"query": "q1", "doc": "d1", "grades": {"alice": 1, "judge-1": 4},
                        "resolved": 4, "rule": "adjudicated"}],
        notes={("q1", "d2"): "off topic: it's about goats"},
    )  # fmt: skip


def test_golden_round_trip_is_lossless_and_deterministic(tmp_path):
    golden = full_golden()
    path = tmp_path / "g.yaml"
    write_golden(path, golden)
    back = read_golden(path)
    assert back == golden
    assert golden_text(back) == path.read_text()


def test_load_judgments_expands_aliases_like_the_qrels_export(tmp_path):
    golden = full_golden()
    path = tmp_path / "g.yml"
    write_golden(path, golden)
    qrels, loaded = load_judgments(path)
    assert loaded == golden
    assert qrels["q1"] == {"d1": 4, "d1-copy": 4, "d2": 0, "x": 0, "doc#x:y,z": -1}
    assert golden.qrels["q1"] == {"d1": 4, "d2": 0, "doc#x:y,z": -1}  # recorded as judged


def test_load_judgments_reads_trec_qrels(tmp_path):
    path = tmp_path / "q.txt"
    write_qrels(path, {"q": {"d": 2}})
    assert load_judgments(path) == ({"q": {"d": 2}}, None)


def test_writer_refuses_what_the_reader_would(tmp_path):
    golden = full_golden()
    golden.qrels["q1"]["d9"] = 2  # not in the scale
    path = tmp_path / "g.yaml"
    with pytest.raises(InputError, match="grade 2 is outside the grade scale"):
        write_golden(path, golden)
    assert not path.exists()


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
ids = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=12
).filter(
    lambda s: len(s.split()) == 1 and s.strip() == s and not has_control(s) and "\ufeff" not in s
    and unicodedata.is_normalized("NFC", s)  # ids are read in NFC (docs/formats.md)
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    qrels=st.dictionaries(
        ids, st.dictionaries(ids, st.integers(-2, 5), max_size=4), min_size=1, max_size=4
    ),
    text=texts,
    note=texts,
)
def test_qrels_to_golden_to_qrels_is_lossless(tmp_path, qrels, text, note):
    scale = {g: f"grade {g}" for g in range(-2, 6)}
    queries = [Query(qid, text, note) for qid in qrels]
    golden = Golden(name=note, description=text, grade_scale=scale, queries=queries, qrels=qrels)
    first = next((q, d) for q, docs in qrels.items() for d in docs) if any(qrels.values()) else None
    if first:
        golden.notes[first] = note or "n"
    path = tmp_path / "h.yaml"
    write_golden(path, golden)
    back = read_golden(path)
    assert back.qrels == {q: d for q, d in qrels.items()}
    assert back == golden
    trec = {q: d for q, d in back.qrels.items() if d and not q.startswith("#")}
    if trec:  # TREC qrels cannot hold a query without judgments, nor a qid starting with '#'
        path_q = tmp_path / "h.qrels"
        write_qrels(path_q, trec)
        assert read_qrels(path_q) == trec


# -- hostile values ------------------------------------------------------------------------------


def test_nothing_but_problems_reach_the_caller(tmp_path):
    """Each of these made read_golden raise ValueError or RecursionError (a traceback)."""
    huge = "1" * 5000
    cases = {
        "version": (MINIMAL.replace("version: 1", f"version: {huge}"), 2, "version: "),
        "grade": (MINIMAL.replace("grade: 0", f"grade: {huge}"), 7, "queries[0].judgments[0]"),
        "scale": (MINIMAL + f"grade_scale:\n  0: no\n  ? {huge}\n  : yes\n", 10, "grade_scale: "),
        "depth": (MINIMAL + f"pool: {{systems: [a], depth: {huge}, strategy: rrf}}\n", 8, "pool"),
        "seed": (MINIMAL + f"pool: {{systems: [a], depth: 1, strategy: x, seed: -{huge}}}\n",
                 8, "pool.seed: "),
        "data int": (MINIMAL + f"coverage: {{x: {huge}}}\n", 8, "coverage.x: "),
        "binary": (MINIMAL + "coverage: {x: 0b_}\n", 8, "coverage.x: '0b_' is not a number"),
        "date": (MINIMAL + "disagreements: [{at: 2024-13-45, n: 0x_}]\n", 8,
                 "disagreements[0].n: '0x_' is not a number"),
        "merge": (MINIMAL + "coverage: {<<: {a: 1}}\n", 8, "coverage.<<: '<<' is not plain"),
        "deep": (MINIMAL + "coverage: " + "{a: " * 900 + "1" + "}" * 900 + "\n", 8,
                 "nested deeper than 64 levels"),
        "deep list": (MINIMAL + "pool: {systems: [a], depth: 1, strategy: x, params: "
                      + "[" * 5000 + "]" * 5000 + "}\n", 8, "not valid YAML"),
    }  # fmt: skip
    for name, (text, line, start) in cases.items():
        path = write(tmp_path, text, f"{name}.yaml")
        problems = problems_of(path)
        assert problems[0].startswith(f"{path}:{line}: "), (name, problems)
        assert start in problems[0] and len(problems[0]) < 300 + len(str(path)), (name, problems)
    date = write(tmp_path, MINIMAL + "disagreements: [{at: 2024-01-05}]\n")
    assert read_golden(date).disagreements == [{"at": "2024-01-05"}]  # plain data: its text


@pytest.mark.parametrize("grade", ["\uff13", "\u0662", "+1", "1_0", "0x1", "9223372036854775808"])
def test_grades_are_ascii_integers_within_64_bits(tmp_path, grade):
    path = write(tmp_path, MINIMAL.replace("grade: 0", f"grade: {grade}"))
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:7: queries[0].judgments[0].grade: {grade!r} is ")
    assert "integer" in problem


@pytest.mark.parametrize(
    "figure, message",
    [
        ("est_rel: .nan", "est_rel: '.nan' is not a finite number"),
        ("est_rel_high: .inf", "est_rel_high: '.inf' is not a finite number"),
        ("completeness: -.Inf", "completeness: '-.Inf' is not a finite number"),
        ("est_rel: 1.0e+400", "est_rel: '1.0e+400' is not a finite number"),
        ("est_rel: 1e400", "est_rel: '1e400' is not a number >= 0 or null"),  # YAML 1.1: text
        ("est_rel_low: abc", "est_rel_low: 'abc' is not a number >= 0 or null"),
        ("completeness_low: -0.5", "completeness_low: '-0.5' is not a number >= 0 or null"),
        ("relevant: -3", "relevant: '-3' is not a count (an integer >= 0) or null"),
        ("pool: 2.5", "pool: '2.5' is not a count (an integer >= 0) or null"),
        ("judged: true", "judged: 'true' is not a count (an integer >= 0) or null"),
        ("status: done", "status: 'done' is not one of complete, incomplete, unmeasured"),
        ("status: [a]", "status: a collection is not one of complete, incomplete, unmeasured"),
        ("est_rel: [1]", "est_rel: expected a number or null"),
    ],
)
def test_coverage_figures_are_checked_with_line_and_key_path(tmp_path, figure, message):
    coverage = f"""\
coverage:
  queries:
    q1:
      extra: 1
      {figure}
  summary: {{queries: 1}}
"""
    path = write(tmp_path, MINIMAL + coverage)
    assert problems_of(path) == [f"{path}:12: coverage.queries.q1.{message}"]


def test_coverage_summary_thresholds_and_rows_are_checked(tmp_path):
    coverage = """\
coverage:
  queries: {q1: 3, q2: {status: complete, est_rel: 2, est_rel_low: null}}
  summary: {queries: -1, mean_completeness: .nan, systems: {bm25: {judged@5: .inf}}}
  thresholds: {complete_at: x, min_samples: 1.5, level: 0.95}
  method: free text
"""
    path = write(tmp_path, MINIMAL + coverage)
    assert problems_of(path) == [
        f"{path}:10: coverage.summary.mean_completeness: '.nan' is not a finite number",
        f"{path}:10: coverage.summary.systems.bm25.judged@5: '.inf' is not a finite number",
        f"{path}:9: coverage.queries.q1: expected a mapping of figures",
        f"{path}:10: coverage.summary.queries: '-1' is not a count (an integer >= 0) or null",
        f"{path}:11: coverage.thresholds.complete_at: 'x' is not a number >= 0 or null",
        f"{path}:11: coverage.thresholds.min_samples: '1.5' is not a count (an integer >= 0) "
        "or null",
    ]


def test_the_demo_coverage_block_reads_and_is_checked():
    golden = read_golden(GOLDEN / "demo.yaml")
    assert golden.coverage is not None and golden.coverage["queries"]["q01"]["relevant"] == 9


def test_lone_surrogates_and_control_characters(tmp_path, monkeypatch):
    text = MINIMAL.replace("text: a query", 'text: "\\ud800"')
    path = write(tmp_path, text)
    [problem] = problems_of(path)  # libyaml refuses the escape itself
    assert problem.startswith(f"{path}:5: not valid YAML")
    from workbench.formats.golden import yamlnodes

    monkeypatch.setattr(yamlnodes, "_Loader", yaml.SafeLoader)  # PyYAML's own parser takes it
    fields = {
        "text": ('text: "\\ud800"', 5, "queries[0].text"),
        "narrative": ('text: a\n    narrative: "x\\udfff"', 6, "queries[0].narrative"),
        "note": ('text: a\n    judgments: [{doc: d, grade: 0, note: "\\ud800"}]', 6,
                 "queries[0].judgments[0].note"),
        "coverage": ('text: a\ncoverage: {x: ["\\ud800"]}', 6, "coverage.x[0]"),
        "id": ('text: a\n    judgments: [{doc: "d\\ud800", grade: 0}]', 6,
               "queries[0].judgments[0].doc: not valid Unicode"),
    }  # fmt: skip
    for name, (replacement, line, where) in fields.items():
        head = MINIMAL.split("    judgments:")[0].replace("text: a query", replacement)
        path = write(tmp_path, head, f"{name}.yaml")
        problems = problems_of(path)
        assert problems[0].startswith(f"{path}:{line}: {where}"), (name, problems)
        assert "lone surrogate" in problems[0] and "\ud800" not in problems[0]
    path = write(tmp_path, MINIMAL.replace("doc: d1", 'doc: "d\\e[31m"'))
    assert problems_of(path) == [
        f"{path}:7: queries[0].judgments[0].doc: id 'd\\x1b[31m' has a control character"
    ]


def test_a_control_character_is_named_by_its_line_after_other_scripts(tmp_path):
    text = MINIMAL.replace("text: a query", "text: é中é中é中é中é中é中é中é中") + "name: x\x1by\n"
    path = write(tmp_path, text)
    assert problems_of(path) == [
        f"{path}:8: not valid YAML: control characters are not allowed (U+001B)"
    ]


def test_lines_are_counted_as_editors_count_them(tmp_path):
    """YAML also breaks lines at U+2028, NEL and a lone CR; problems name the editor's line."""
    text = MINIMAL.replace("text: a query", 'text: "a\u2028b\x85c\rd"') + "colour: blue\n"
    path = write(tmp_path, text)
    assert problems_of(path)[0].startswith(f"{path}:8: colour: unknown key")


def test_writer_refuses_what_would_not_read_back(tmp_path):
    path = tmp_path / "g.yaml"
    bad_goldens = {
        "control id": Golden(name="x", queries=[Query("q\x1b", "t")]),
        "surrogate text": Golden(name="x", queries=[Query("q", "t\ud800")]),
        "surrogate name": Golden(name="\udc80"),
        "nan coverage": Golden(name="x", coverage={"queries": {"q": {"est_rel": math.nan}}}),
        "negative count": Golden(name="x", coverage={"queries": {"q": {"relevant": -1}}}),
        "inf param": Golden(name="x", pool={"systems": ["a"], "depth": 1, "strategy": "x",
                                            "params": {"b": math.inf}}),
        "huge seed": Golden(name="x", pool={"systems": ["a"], "depth": 1, "strategy": "x",
                                            "seed": 2**64}),
        "huge grade": Golden(name="x", grade_scale={2**70: "x"}),
        "object": Golden(name="x", disagreements=[{"at": object()}]),
        "bidi doc": Golden(name="x", queries=[Query("q", "t")], qrels={"q": {"d\u202e": 0}}),
    }  # fmt: skip
    for name, golden in bad_goldens.items():
        with pytest.raises(InputError) as info:
            write_golden(path, golden)
        assert all(p.startswith("golden: ") for p in info.value.problems), name
        assert not path.exists(), name


yaml_minded_ids = st.text(
    st.sampled_from(list("ab7%[]{}#&*!|>'\"@`,:?-~=<.\\/^$()") + ["\u00e9", "\u4e2d", "\u00bf"]),
    min_size=1,
    max_size=10,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc_ids=st.lists(yaml_minded_ids, min_size=1, max_size=5, unique=True), qid=yaml_minded_ids)
def test_ids_full_of_yaml_indicators_round_trip(tmp_path, doc_ids, qid):
    golden = Golden(
        name=qid, queries=[Query(qid, qid, qid)], qrels={qid: dict.fromkeys(doc_ids, 1)}
    )
    golden.judged_by = {(qid, doc_ids[0]): ["alice"]}
    golden.notes = {(qid, doc_ids[0]): doc_ids[-1]}
    golden.aliases = {f"{d}-copy": d for d in doc_ids}
    path = tmp_path / "ids.yaml"
    write_golden(path, golden)
    assert read_golden(path) == golden
