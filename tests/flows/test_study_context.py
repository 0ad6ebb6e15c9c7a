"""One study context per command (issue 44, item 3): `coverage` opens its store once and reads
each part of it once, the grades that count are computed once, and a read command writes
nothing: its `--target` and `--queue-judge` hold for its run only (`--save` stores them);
`--judge`, the queue judge's former name, still works."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main
from workbench.flows.adaptive import JUDGE_META
from workbench.store import Store

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
QRELS = Path(__file__).resolve().parents[2] / "golden" / "demo.qrels"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo pooled by bm25, adaptive and static, each judged by an oracle; the adaptive
    one with a model judge 'llm' beside (chosen by no one)."""
    where = tmp_path_factory.mktemp("studies")
    made = {}
    for policy in ("adaptive", "static"):
        db = where / f"{policy}.db"
        pooled = ["pool", "--corpus", str(DEMO / "docs"), "--queries",
                  str(DEMO / "queries.jsonl"), "--db", str(db), "--systems", "bm25",
                  "--policy", policy]  # fmt: skip
        if policy == "static":
            pooled += ["--sample", "3"]
        assert main(pooled) == 0
        judged = ["simulate", "--db", str(db), "--oracle", str(QRELS), "--per-query", "8"]
        assert main(judged) == 0
        made[policy] = db
    assert main(["import-labels", "--db", str(made["adaptive"]), "--as", "llm", str(QRELS)]) == 0
    return made


@pytest.fixture
def studies(built: dict[str, Path], tmp_path: Path, capsys) -> dict[str, Path]:
    """A copy of each built study for one test (a test may write to it)."""
    capsys.readouterr()
    return {name: Path(shutil.copy(db, tmp_path / db.name)) for name, db in built.items()}


def _digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def _counting_opens(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count every `open_store` call (each caller imports it from `workbench.store` when it
    runs), by whether it opened for writing."""
    import workbench.store as store_package

    opened: Counter[str] = Counter()
    real = store_package.open_store

    def counted(location: Any, *args: Any, **kwargs: Any) -> Any:
        opened["read" if kwargs.get("read_only") else "write"] += 1
        return real(location, *args, **kwargs)

    monkeypatch.setattr(store_package, "open_store", counted)
    return opened


@pytest.mark.parametrize("policy", ["adaptive", "static"])
def test_coverage_opens_its_store_once(studies, monkeypatch, capsys, policy):
    opened = _counting_opens(monkeypatch)
    args = ["coverage", "--db", str(studies[policy]), "--json"]
    if policy == "adaptive":
        args += ["--target", "R@10:0.1", "--queue-judge", "llm"]
    assert main(args) == 0
    assert opened == Counter(read=1)
    assert json.loads(capsys.readouterr().out)["rel_threshold"] == 1


def test_each_part_of_the_store_is_read_once_and_the_grades_counted_once(studies, monkeypatch):
    """The report, the plan, the judge's saving (two rebuilt sessions) and the activity all
    read the store's pool and judgments through one `StudyRead`."""
    import workbench.core.coverage as coverage_package
    import workbench.core.coverage.observations as observations
    from workbench.core.study import parse_target
    from workbench.flows.activity import store_activity
    from workbench.flows.study_context import CoverageOptions, RunChoices, StudyContext

    counted = Counter[str]()
    real = observations.grades_counted

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted["grades_counted"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(observations, "grades_counted", counting)
    monkeypatch.setattr(coverage_package, "grades_counted", counting)
    with Store(studies["adaptive"], read_only=True) as store:
        reads: Counter[str] = Counter()
        for name in ("pool", "current_judgments", "judgments", "queries", "poolings", "draws"):
            method = getattr(store, name)

            def read(*args: Any, _method: Any = method, _name: str = name, **kw: Any) -> Any:
                reads[_name] += 1
                return _method(*args, **kw)

            monkeypatch.setattr(store, name, read)
        choices = RunChoices(parse_target("R@10:0.1"), "llm")
        context = StudyContext(store, CoverageOptions(rel_threshold=None), choices)
        parts = context.parts()
        store_activity(context.store, context.rel_threshold)
    assert parts.plan is not None and parts.judge is not None and parts.judge.saving is not None
    assert context.target == parse_target("R@10:0.1") and context.judge[0] == "llm"
    assert counted["grades_counted"] == 1
    once = Counter(pool=1, current_judgments=1, queries=1, poolings=1, draws=1)
    assert reads == once + Counter(judgments=2)  # everyone's (activity), llm's (its labels)


@pytest.mark.parametrize("option", ["--queue-judge", "--judge"])
def test_a_read_with_a_target_and_a_queue_judge_leaves_every_byte(studies, capsys, option):
    db = studies["adaptive"]
    before = _digest(db)
    args = ["coverage", "--db", str(db), "--json", "--target", "nDCG@5:0.2", option, "llm"]
    assert main(args) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["study"]["target"] == "nDCG@5:0.2" and data["judge"]["name"] == "llm"
    assert "stored" not in captured.err
    assert _digest(db) == before
    assert main(["coverage", "--db", str(db), "--json"]) == 0  # the stored study, as it was
    data = json.loads(capsys.readouterr().out)
    assert data["study"]["target"] == "R@10:0.05" and "judge" not in data


def test_save_stores_the_target_and_the_queue_judge(studies, capsys):
    db = str(studies["adaptive"])
    assert main(["coverage", "--db", db, "--target", "P@5:0.3", "--queue-judge", "llm",
                 "--save"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "coverage: target P@5:0.3 stored with the study" in err
    assert "coverage: judge llm" in err
    with Store(db, read_only=True) as store:
        assert store.get_meta("target") == "P@5:0.3"
        assert json.loads(store.get_meta(JUDGE_META))["name"] == "llm"
    assert main(["coverage", "--db", db, "--save"]) == 2
    assert "--save: stores --target and --queue-judge" in capsys.readouterr().err


def test_a_static_study_takes_no_target_or_queue_judge_and_keeps_every_byte(studies, capsys):
    db = studies["static"]
    before = _digest(db)
    for extra in (["--target", "R@10:0.1"], ["--queue-judge", "llm"]):
        for save in ([], ["--save"]):
            assert main(["coverage", "--db", str(db), *extra, *save]) == 2
            assert "not an adaptive store" in capsys.readouterr().err
    assert _digest(db) == before


def test_the_queue_judge_option_is_named_and_its_old_name_hidden(capsys):
    with pytest.raises(SystemExit):
        main(["coverage", "--help"])
    shown = capsys.readouterr().out
    assert "--queue-judge NAME" in shown and "--judge" not in shown.replace("--queue-judge", "")
    assert "--save" in shown


@pytest.mark.parametrize("given", [[], ["--rel-threshold", "1"]])
def test_eval_on_a_store_opens_it_once_at_the_studys_threshold(studies, monkeypatch, capsys, given):
    """The threshold stored with the study is read with its judgments (no first opening to find
    it); one given on the command line wins."""
    db = studies["adaptive"]
    with Store(db) as store:
        store.set_meta("rel_threshold", "2")
    run = Path(__file__).resolve().parents[2] / "golden" / "demo-bm25.run"
    opened = _counting_opens(monkeypatch)
    main(["eval", "--qrels", str(db), "--run", str(run), "--json", *given])
    assert opened == Counter(read=1)
    assert json.loads(capsys.readouterr().out)["rel_threshold"] == (1 if given else 2)
