"""`--queue-judge NAME` end to end (issue 30; `--judge`, its former name, a hidden alias): `judge`
(the app) and `simulate` store the adaptive study's judge covariate with the study; the read
commands `export`, `report` and `coverage` use it for their run only and write nothing (issue
44: `coverage --save` stores it); an unknown name, a person or a store that is not adaptive
exits 2 naming it, with nothing written. And `eval --judge` on an adaptive store says why the
correction is unavailable there without sending the user to `draw-sample`, which refuses an
adaptive store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from adaptive_fixtures import make_study, pool

from workbench.cli import main
from workbench.flows.adaptive import JUDGE_META
from workbench.store import Store


def _labels(path: Path, truth: dict) -> str:
    """A model judge's labels: the truth's grade of every relevant pair."""
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in truth.items() for d, g in docs.items())
    )
    return str(path)


@pytest.fixture
def study(tmp_path: Path, capsys) -> dict:
    """An adaptive study with a model judge 'llm' (not chosen yet) and an oracle's judgments."""
    s = make_study(tmp_path)
    assert pool(s, "--seed", "1") == 0
    labels = _labels(tmp_path / "llm.qrels", s["truth"])
    assert main(["import-labels", "--db", str(s["db"]), "--as", "llm", labels]) == 0
    assert main(["simulate", "--db", str(s["db"]), "--oracle", str(s["qrels"]),
                 "--per-query", "25"]) == 0  # fmt: skip
    capsys.readouterr()
    return s


def _args(command: str, s: dict, tmp_path: Path) -> list[str]:
    db = str(s["db"])
    if command == "export":
        return ["export", "--db", db, "--golden", str(tmp_path / "out.yaml")]
    if command == "report":
        return ["report", "--db", db, "-o", str(tmp_path / "out.html")]
    return ["judge", "--db", db, "--annotator", "alice"]


def _stored(db: Path) -> dict | None:
    with Store(db) as store:
        raw = store.get_meta(JUDGE_META)
    return None if raw is None else json.loads(raw)


@pytest.mark.parametrize("option", ["--queue-judge", "--judge"])
def test_the_app_stores_the_queue_judge_with_the_study(study, tmp_path, capsys, option):
    assert _stored(study["db"]) is None
    code = main([*_args("judge", study, tmp_path), option, "llm"])
    err = capsys.readouterr().err
    # the app needs a terminal (none under pytest): the choice is made before it is refused
    assert code == 2
    assert "judge: judge llm" in err and "stored with the study" in err
    assert _stored(study["db"])["name"] == "llm"
    capsys.readouterr()
    assert main(["coverage", "--db", str(study["db"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judge"]["name"] == "llm"


@pytest.mark.parametrize("command", ["export", "report", "coverage"])
@pytest.mark.parametrize("option", ["--queue-judge", "--judge"])
def test_a_read_command_uses_the_queue_judge_and_leaves_the_store_as_it_was(
    study, tmp_path, capsys, command, option
):
    """Every byte of the store as it was: the judge holds for this run only."""
    import hashlib

    def digest() -> str:
        return hashlib.sha256(study["db"].read_bytes()).hexdigest()

    before = digest()
    args = ["coverage", "--db", str(study["db"])] if command == "coverage" else None
    assert main([*(args or _args(command, study, tmp_path)), option, "llm"]) == 0
    assert "stored" not in capsys.readouterr().err
    assert digest() == before and _stored(study["db"]) is None


def test_coverage_save_stores_the_queue_judge(study, capsys):
    db = str(study["db"])
    assert main(["coverage", "--db", db, "--queue-judge", "llm", "--save", "--json"]) == 0
    captured = capsys.readouterr()
    assert "coverage: judge llm" in captured.err and "stored with the study" in captured.err
    assert json.loads(captured.out)["judge"]["name"] == "llm"
    assert _stored(study["db"])["name"] == "llm"


def test_report_with_judge_says_what_it_saved(study, tmp_path, capsys):
    out = tmp_path / "out.html"
    assert main(["report", "--db", str(study["db"]), "-o", str(out), "--judge", "llm"]) == 0
    assert "human judgments so far" in out.read_text(encoding="utf-8")


def _intervals(queries: dict) -> dict:
    return {q: (c["est_rel_low"], c["est_rel_high"]) for q, c in queries.items()}


def test_export_with_judge_writes_the_estimate_with_the_judge(study, tmp_path, capsys):
    """The golden set's coverage is the estimate with the judge as covariate: the intervals
    `coverage --queue-judge` gives, not those without it (the judge moves the intervals, not
    the design-based point)."""
    db = str(study["db"])
    assert main(["coverage", "--db", db, "--json"]) == 0
    plain = _intervals(json.loads(capsys.readouterr().out)["queries"])
    golden_path = str(tmp_path / "g.yaml")
    assert main(["export", "--db", db, "--golden", golden_path, "--queue-judge", "llm"]) == 0
    capsys.readouterr()
    assert main(["coverage", "--db", db, "--json", "--queue-judge", "llm"]) == 0
    out = json.loads(capsys.readouterr().out)
    with_judge = _intervals(out["queries"])
    assert with_judge != plain
    import yaml

    golden = yaml.safe_load((tmp_path / "g.yaml").read_text(encoding="utf-8"))
    # which covariate the intervals used (at its latest version), never stored by a read
    used = {"name": "llm", "version": out["judge"]["version"]}
    assert golden["coverage"]["judge"] == used and _stored(study["db"]) is None
    written = _intervals(golden["coverage"]["queries"])
    assert written.keys() == with_judge.keys()
    for q, (low, high) in written.items():  # bounds rounded outwards to 1 decimal
        computed_low, computed_high = with_judge[q]
        assert computed_low - 0.1 < low <= computed_low, q
        assert computed_high <= high < computed_high + 0.1, q


@pytest.mark.parametrize("command", ["export", "report", "judge"])
@pytest.mark.parametrize("name", ["nobody-here", "oracle"])
def test_an_unknown_judge_or_a_person_exits_2_naming_it(study, tmp_path, capsys, command, name):
    assert main([*_args(command, study, tmp_path), "--judge", name]) == 2
    err = capsys.readouterr().err
    assert f"--queue-judge {name}" in err and "Traceback" not in err
    assert _stored(study["db"]) is None
    assert not (tmp_path / "out.yaml").exists() and not (tmp_path / "out.html").exists()


@pytest.mark.parametrize("command", ["export", "report", "judge"])
def test_a_static_store_takes_no_judge_covariate(tmp_path, capsys, command):
    s = make_study(tmp_path)
    args = ["pool", "--corpus", str(s["corpus"]), "--queries", str(s["queries"]),
            "--db", str(s["db"]), "--systems", "", "--policy", "static", "--run",
            str(s["runs"][0])]  # fmt: skip
    assert main(args) == 0
    labels = _labels(tmp_path / "llm.qrels", s["truth"])
    assert main(["import-labels", "--db", str(s["db"]), "--as", "llm", labels]) == 0
    capsys.readouterr()
    assert main([*_args(command, s, tmp_path), "--judge", "llm"]) == 2
    err = capsys.readouterr().err
    assert "--queue-judge llm" in err and "not an adaptive store" in err and "draw-sample" in err
    assert not (tmp_path / "out.yaml").exists() and not (tmp_path / "out.html").exists()


def test_eval_judge_on_an_adaptive_store_says_why_without_sending_to_draw_sample(study, capsys):
    db = str(study["db"])
    assert main(["eval", "--qrels", db, "--judge", "llm", "--run", str(study["runs"][0]),
                 "-k", "10", "--json"]) == 1  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["design"]["recorded"] is False and out["design"]["adaptive"] is True
    reasons = {row["unavailable"] for row in out["runs"]}
    assert len(reasons) == 1
    reason = reasons.pop()
    assert "adaptive store" in reason and "coverage --queue-judge llm" in reason
    assert f"draw-sample --db {db}" not in reason
    # and draw-sample does refuse it, as the reason says
    assert main(["draw-sample", "--db", db, "--judge", "llm", "--share", "0.1"]) == 2
