"""`workbench judge` and `workbench demo` check --annotator where it enters (exit 2 on a bad
name, before any store is opened); the $USER default is used only when it passes the same rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import build_store

from workbench.cli import main
from workbench.commands import app_launch, shared_options
from workbench.tui.app import JudgeApp

BAD_NAMES = ["", "john doe", "-x", "a[/]", "a\x1b[31m", "a\tb", "x" * 65]


@pytest.fixture
def no_app(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records the annotator each opened app got, instead of running it."""
    opened: list[str] = []
    monkeypatch.setattr(JudgeApp, "run", lambda self: opened.append(self.annotator))
    monkeypatch.setattr("workbench.commands.app_launch.require_terminal", lambda: None)
    return opened


@pytest.mark.parametrize("command", ["judge", "demo"])
@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_annotator_name_exits_2_at_entry(
    command: str,
    name: str,
    tmp_path: Path,
    no_app: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = tmp_path / "n.db"
    build_store(db, queries=1, per_query=2).close()
    with pytest.raises(SystemExit) as exit_:
        main([command, "--db", str(db), f"--annotator={name}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--annotator" in err and ("required" in err or "not a valid name" in err)
    assert "\x1b" not in err
    assert no_app == []


@pytest.mark.parametrize("user", ["john doe", "", "a[/]", "-x"])
def test_an_unusable_user_falls_back_to_annotator(
    user: str, tmp_path: Path, no_app: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", user)
    assert shared_options.default_annotator() == "annotator"
    db = tmp_path / "u.db"
    build_store(db, queries=1, per_query=2).close()
    assert main(["judge", "--db", str(db)]) == 0
    assert no_app == ["annotator"]


def test_a_valid_user_is_the_default(
    tmp_path: Path, no_app: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "alice.b")
    db = tmp_path / "v.db"
    build_store(db, queries=1, per_query=2).close()
    assert main(["judge", "--db", str(db)]) == 0
    assert main(["judge", "--db", str(db), "--annotator", "bob-2"]) == 0
    assert no_app == ["alice.b", "bob-2"]


def test_open_app_refuses_a_bad_name_too(tmp_path: Path, no_app: list[str]) -> None:
    from workbench.core.errors import InputError

    db = tmp_path / "o.db"
    build_store(db, queries=1, per_query=2).close()
    with pytest.raises(InputError, match="not a valid name"):
        app_launch.open_app(db, "a b")
    assert no_app == []
