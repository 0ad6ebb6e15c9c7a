"""Stores on both backends: `store_location` gives a fresh SQLite file or a fresh PostgreSQL
schema (dropped after the test), so one test checks both.

The PostgreSQL half talks to a real server (WORKBENCH_TEST_PG, default 127.0.0.1:5432/test).
Where this project's machines run one (a /etc/postgresql cluster, or CI) a test that cannot
reach it fails rather than skips; elsewhere it skips, saying why."""

from __future__ import annotations

import gc
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_URL = os.environ.get("WORKBENCH_TEST_PG", "postgresql://127.0.0.1:5432/test")
GRAPH_DIR_ENV = "WORKBENCH_GRAPH_DIR"
_GRAPHS: list[str | None] = [None]
"""The run's graph folder, made by the controller (`pytest_configure`), removed at its end."""


PILOT_IDLE_SLEEP = 1 / 200
"""How long Textual's pilot sleeps between looks at whether the app has gone idle."""


def _quicker_pilot() -> None:
    """Textual's pilot (`press`, `pause`) waits for the app to go idle by sleeping 1/50 s and
    asking whether the process used under 1/20 of that in CPU, again until it did: each key
    pressed cost at least 2 such sleeps, and the app tests spent most of their time asleep in
    them (test_tui_judging: 38 s of its 46). The same rule is asked 4 times as often here (the
    same CPU share is "idle"). What a test checks after a key never rests on it: `press`
    then waits for every widget's queued messages, and `tui_fixtures.settle` for the app's
    own writes and reads."""
    try:
        import textual._wait as wait
    except ImportError:  # textual is the base install's; nothing to tune without it
        return
    if hasattr(wait, "SLEEP_GRANULARITY") and hasattr(wait, "SLEEP_IDLE"):
        wait.SLEEP_GRANULARITY = PILOT_IDLE_SLEEP
        wait.SLEEP_IDLE = PILOT_IDLE_SLEEP / 20


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package once, in the controller, before any worker or subprocess imports
    it: with PYTHONDONTWRITEBYTECODE set (as on this project's machines) every `python -m
    workbench` a test starts (hundreds) otherwise compiles each module it imports again, about
    0.3 s of CPU apiece. `compileall` skips modules whose cache is current."""
    if not hasattr(config, "workerinput") and sys.dont_write_bytecode:
        import compileall

        compileall.compile_dir(Path(__file__).resolve().parents[1] / "workbench", quiet=1)
    if not hasattr(config, "workerinput") and GRAPH_DIR_ENV not in os.environ:
        # One graph folder for the whole run, made before the xdist workers start (they inherit
        # it): MiniLM's ONNX graphs (fp32, int8) are exported once per run, not once per worker.
        import tempfile

        os.environ[GRAPH_DIR_ENV] = _GRAPHS[0] = tempfile.mkdtemp(prefix="workbench-graphs-")
    _quicker_pilot()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Collect once, then freeze what survives, so that pytest's five closing collections skip
    the long-lived heap (torch, textual, models). An xdist worker gets 5 s to finish after the
    last test; those collections took longer on a loaded machine, so execnet sent it SIGINT,
    which landed in hypothesis's gc callback: "PytestUnraisableExceptionWarning ...
    KeyboardInterrupt" at the end of a passing suite. The run's graph folder goes."""
    if _GRAPHS[0] is not None:
        import shutil

        shutil.rmtree(_GRAPHS[0], ignore_errors=True)
    gc.collect()
    gc.freeze()


def postgres_required() -> bool:
    return bool(os.environ.get("CI")) or Path("/etc/postgresql").is_dir()


def _admin():  # type: ignore[no-untyped-def]
    """A connection to the test server, or a skip (a fail where one must be there)."""
    try:
        import psycopg

        return psycopg.connect(PG_URL, autocommit=True, connect_timeout=5)
    except Exception as exc:  # ImportError too: psycopg is the `postgres` extra
        reason = f"PostgreSQL at {PG_URL} is not reachable: {exc}"
        if postgres_required():
            pytest.fail(reason + " (this machine should run one: see .ci/run)")
        pytest.skip(reason)


def schema_url(schema: str) -> str:
    return f"{PG_URL}?options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The URL of an empty schema of its own on the test server."""
    admin = _admin()
    schema = f"wbtest_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(schema)
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a new store goes: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        return str(tmp_path / "judging.db")
    return str(request.getfixturevalue("pg_url"))


def raw_execute(location: str, sql: str) -> None:
    """Run SQL on a store behind the workbench's back (as another client would)."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(sql)
    else:
        import sqlite3

        conn = sqlite3.connect(location)
        try:
            conn.execute(sql)
        finally:
            conn.close()


@pytest.fixture(autouse=True, scope="session")
def _graph_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Exported ONNX graphs go to the run's folder (`pytest_configure`; a worker's own where none
    was made), not to the user's ~/.cache/workbench/graphs."""
    os.environ.setdefault(GRAPH_DIR_ENV, str(tmp_path_factory.mktemp("graphs")))
