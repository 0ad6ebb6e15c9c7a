"""A model judge's labels as a covariate of the adaptive queue's model: it changes the fit, a
judge that agrees with the truth narrows the interval, a useless or inverted one keeps it
valid, one version is one covariate (never mixed), and `--judge NAME` through the commands
(stored with the study; an unknown name exits 2 naming it)."""

from __future__ import annotations

import json
import random
import statistics

import numpy as np
import pytest
from adaptive_fixtures import make_study, pool, study

from workbench.cli import main
from workbench.core.adaptive import AdaptiveSession, PolicyConfig, build_frame, walk
from workbench.core.adaptive.judge import (
    COLUMNS,
    JudgeCovariate,
    JudgeLabel,
    VersionedLabel,
    labels_of_version,
    latest_version,
)
from workbench.flows.adaptive import JUDGE_META, judge_covariate, session_from_store
from workbench.store import Store


def synthetic_judge(truth, frames, kind: str, seed: int) -> JudgeCovariate:
    """A judge of every frame passage: 'perfect' (the truth's grade), 'random' (a grade drawn
    from the frames' grades, whatever the passage), 'inverted' (relevant exactly when not)."""
    rng = random.Random(seed)
    items = [(f.query_id, d) for f in frames for d in f.doc_ids]
    grades = [truth.get(q, {}).get(d, 0) for q, d in items]
    labels = {}
    for (q, d), grade in zip(items, grades, strict=True):
        if kind == "perfect":
            label = grade
        elif kind == "random":
            label = rng.choice(grades)
        else:
            label = 0 if grade else 3
        labels[(q, d)] = JudgeLabel(label)
    return JudgeCovariate(kind, "v1", labels)


def judged_session(seed: int, kind: str | None, per_query: int, queries: int = 6):
    ids, tokens, query_tokens, truth, rankings = study(seed, queries=queries, corpus=500)
    frames = [
        build_frame(q, {s: r[q] for s, r in rankings.items()}, ids, seed) for q in query_tokens
    ]
    judge = None if kind is None else synthetic_judge(truth, frames, kind, seed + 100)
    config = PolicyConfig(seed=seed, stop_when_certified=False)
    session = AdaptiveSession(frames, tokens, query_tokens, len(ids), config, judge)
    walk(session, lambda q, d: truth.get(q, {}).get(d, 0), per_query=per_query)
    session.refit()
    return session, truth


@pytest.mark.parametrize("kind", ["random", "inverted"])
def test_a_useless_judge_keeps_the_interval_valid(kind):
    """The true |Rel| (candidates and rest of the corpus) inside the 95% interval for at least
    90% of 24 queries (4 seeds x 6) at 30 judgments per query. Measured while choosing: the
    random judge's intervals held 60 of 60 queries (10 seeds) at 20 and at 40 per query."""
    held = []
    for seed in range(4):
        session, truth = judged_session(seed, kind, per_query=30)
        for qid in session.queries:
            total = session.total(qid)
            n = len(truth[qid])
            held.append(total.low is not None and total.low <= n <= total.high)
    assert sum(held) / len(held) >= 0.9


def test_the_judges_label_changes_the_fit_and_an_agreeing_judge_narrows_the_interval():
    widths: dict[str | None, list[float]] = {None: [], "perfect": []}
    for kind in widths:
        session, truth = judged_session(1, kind, per_query=40)
        for qid in session.queries:
            total = session.total(qid)
            widths[kind].append((total.high - total.low) / len(truth[qid]))
        if kind is None:
            plain = session
    weights = session.weights
    assert len(weights) == len(plain.weights) + len(COLUMNS)
    assert weights[-len(COLUMNS)] > 2.0  # the fit learnt to trust the judge's relevant label
    qid = next(iter(session.queries))
    assert not np.allclose(session.probabilities(qid), plain.probabilities(qid))
    assert statistics.median(widths["perfect"]) < statistics.median(widths[None])


def test_a_passage_the_judge_did_not_label_keeps_its_features_and_says_missing():
    judge = JudgeCovariate("j", "v", {("q", "a"): JudgeLabel(2, 0.9), ("q", "b"): JudgeLabel(0)})
    columns = judge.columns("q", ["a", "b", "c"])
    assert columns.tolist() == [
        [1.0, 2 / 3, 0.0, 0.9],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ]


def test_one_version_is_one_covariate():
    rows = [
        VersionedLabel("q", "a", 3, "v1"),
        VersionedLabel("q", "b", 0, "v1"),
        VersionedLabel("q", "a", 0, "v2"),  # the new version regraded a
        VersionedLabel("q", "c", 2, "v2"),
        VersionedLabel("q", "b", None, "v1"),  # v1's label of b undone
    ]
    assert labels_of_version(rows, "v1") == {("q", "a"): JudgeLabel(3)}
    assert labels_of_version(rows, "v2") == {("q", "a"): JudgeLabel(0), ("q", "c"): JudgeLabel(2)}
    assert latest_version(rows) == "v2"
    assert latest_version([]) is None


def _labels(path, truth, shift: int) -> str:
    """A qrels file of a judge: the truth's grades (shifted) of every listed pair."""
    path.write_text(
        "".join(
            f"{q} 0 {d} {min(3, g + shift)}\n" for q, docs in truth.items() for d, g in docs.items()
        )
    )
    return str(path)


def test_judge_through_the_commands_is_stored_with_the_study_and_versions_are_not_mixed(
    tmp_path, capsys
):
    s = make_study(tmp_path)
    db = str(s["db"])
    assert pool(s, "--seed", "1") == 0
    first = _labels(tmp_path / "v1.qrels", s["truth"], 0)
    assert main(["import-labels", "--db", db, "--as", "llm", first]) == 0
    capsys.readouterr()
    simulate = ["simulate", "--db", db, "--oracle", str(s["qrels"]), "--per-query", "25"]
    assert main([*simulate, "--judge", "llm"]) == 0
    err = capsys.readouterr().err
    assert "judge llm" in err and "stored with the study" in err
    with Store(db) as store:
        v1 = json.loads(store.get_meta(JUDGE_META))
        assert v1["name"] == "llm"
        covariate = judge_covariate(store)
        assert covariate.version == v1["version"]
        assert len(covariate.labels) == sum(len(d) for d in s["truth"].values())
        assert session_from_store(store).judge.version == v1["version"]
    # A new version of the judge (another file): the stored study keeps the first version's
    # labels alone until --judge chooses again.
    second = _labels(tmp_path / "v2.qrels", {"q0": s["truth"]["q0"]}, 1)
    assert main(["import-labels", "--db", db, "--as", "llm", second]) == 0
    with Store(db) as store:
        covariate = judge_covariate(store)
        assert covariate.version == v1["version"]
        assert all(label.grade == s["truth"][q][d] for (q, d), label in covariate.labels.items())
    capsys.readouterr()
    assert main(["coverage", "--db", db, "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)["judge"]
    assert {k: stored[k] for k in v1} == v1
    assert stored["saving"]["judged"] > 0 and "saved" in stored["saving"]
    assert main(["coverage", "--db", db, "--json", "--judge", "llm"]) == 0
    out = capsys.readouterr()
    v2 = {k: json.loads(out.out)["judge"][k] for k in ("name", "version")}
    assert v2["name"] == "llm" and v2["version"] != v1["version"]
    with Store(db) as store:  # a read uses the latest version for its run and stores nothing
        assert json.loads(store.get_meta(JUDGE_META)) == v1
    assert main(["coverage", "--db", db, "--json", "--queue-judge", "llm", "--save"]) == 0
    assert f"was llm version {v1['version']}" in capsys.readouterr().err
    with Store(db) as store:
        covariate = judge_covariate(store)
        assert covariate.version == v2["version"]
        assert set(covariate.labels) == {("q0", d) for d in s["truth"]["q0"]}


@pytest.mark.parametrize("command", ["simulate", "coverage", "eval"])
def test_an_unknown_judge_exits_2_naming_it(tmp_path, capsys, command):
    s = make_study(tmp_path)
    assert pool(s) == 0
    args = [command, "--db", str(s["db"]), "--judge", "nobody-here"]
    if command == "simulate":
        args += ["--oracle", str(s["qrels"]), "--per-query", "5"]
    if command == "eval":
        args = ["eval", "--qrels", str(s["db"]), "--run", str(s["runs"][0]), "--judge",
                "nobody-here"]  # fmt: skip
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    option = "--judge" if command == "eval" else "--queue-judge"  # eval's scores with a judge
    assert f"{option} nobody-here" in err and "Traceback" not in err
    with Store(s["db"]) as store:
        assert store.get_meta(JUDGE_META) is None
        assert not store.judgments()  # nothing judged before the name was checked


def test_a_person_is_no_judge_covariate(tmp_path, capsys):
    s = make_study(tmp_path)
    assert pool(s) == 0
    assert main(["simulate", "--db", str(s["db"]), "--oracle", str(s["qrels"]),
                 "--per-query", "5"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["coverage", "--db", str(s["db"]), "--judge", "oracle"]) == 2
    assert "--queue-judge oracle: is oracle (a model judge is needed)" in capsys.readouterr().err


def test_an_agreeing_judge_saves_human_judgments():
    """The no-judge model on the same judgments and draws (`core.adaptive.saving`): it needs
    more judgments for the widths a perfect judge gives."""
    from workbench.core.adaptive.saving import judge_saving

    session, _ = judged_session(1, "perfect", per_query=40)
    plain = AdaptiveSession(
        [q.frame for q in session.queries.values()], session.vectors._tokens,
        {qid: q.words for qid, q in session.queries.items()}, session.corpus_size,
        session.config,
    )  # fmt: skip
    for qid, q in session.queries.items():
        for i in q.order:
            plain.record(qid, q.frame.doc_ids[i], q.grades[i], refit=False)
        for draw in q.draws:
            plain.restore_draw(draw)
    plain.refit()
    saving = judge_saving(session, plain)
    assert saving.queries == len(session.queries)
    assert saving.judged == sum(session.judged(q) for q in session.queries)
    assert saving.saved > 0
