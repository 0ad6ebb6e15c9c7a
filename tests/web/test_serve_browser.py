"""`workbench serve` in a real browser (headless chromium through playwright), a real server
process on 127.0.0.1, a real store: each annotator's URL grades as that annotator, two at once;
the bare address and a wrong key open no app and store nothing; a revoked key closes its page;
a server killed and started again loses no saved grade."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from served import Browser, Server, chromium_missing, free_port, token_url, wait_text
from tui_fixtures import build_store, title_of

from workbench.core.model import Judgment
from workbench.store import open_store

pytestmark = pytest.mark.slow

missing = chromium_missing()
if missing:
    if os.environ.get("CI"):
        pytest.fail(f"the served app's browser tests cannot run: {missing} (see .ci/run)")
    pytest.skip(missing, allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    made = Browser()
    yield made
    made.close()


@pytest.fixture
def study(tmp_path: Path) -> Iterator[tuple[str, Server]]:
    db = str(tmp_path / "study.db")
    build_store(db, queries=2, per_query=6).close()
    server = Server(db, free_port(), tmp_path / "server.log")
    yield db, server
    server.stop()


def current(db: str) -> list[Judgment]:
    with open_store(db, read_only=True) as store:
        return store.current_judgments()


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the served app processes of a server)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def eventually(check: Callable[[], object], timeout: float = 15) -> object:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_two_annotators_grade_as_themselves_from_two_browsers(
    browser: Browser, study: tuple[str, Server], tmp_path: Path
) -> None:
    db, server = study
    alice, bob = browser.page(), browser.page()
    alice.goto(token_url(db, "alice", server.port))
    first, _ = wait_text(alice, title_of(0, 0))  # the judging screen drew alice's passage
    bob.goto(token_url(db, "bob", server.port))
    wait_text(bob, title_of(0, 1))  # bob's: the next of the shared queue (alice holds d0-000)
    assert alice.title() == "study.db · alice — workbench"
    alice.screenshot(path=str(tmp_path / "served-1280x800.png"))
    alice.keyboard.press("2")
    wait_text(alice, title_of(0, 2), first)  # the next passage drawn once the grade was saved
    bob.keyboard.press("1")
    graded = eventually(lambda: {j.annotator for j in current(db)} == {"alice", "bob"})
    assert graded, current(db)
    rows = {(j.annotator, j.query_id, j.doc_id, j.grade) for j in current(db)}
    assert ("alice", "q0", "d0-000", 2) in rows
    assert [j.grade for j in current(db) if j.annotator == "bob"] == [1]
    assert "#key=" not in server.log() and "key=" not in server.log()
    lead = browser.page()
    lead.goto(token_url(db, "lena", server.port, "--lead"))
    lead.wait_for_selector("#lead", state="visible")
    page = lead.frame_locator("#lead").locator("body").inner_text()
    assert "Who judged what" in page and "alice" in page and "bob" in page


def test_the_bare_address_and_a_wrong_key_open_no_app(
    browser: Browser, study: tuple[str, Server]
) -> None:
    db, server = study
    token_url(db, "alice", server.port)
    for url, said in (
        (server.url, "No annotator's link"),
        (server.url + "#key=" + "A" * 43, "This link does not open the app"),
    ):
        page = browser.page()
        page.goto(url)
        page.wait_for_selector("#message", state="visible")
        assert said in page.inner_text("#message")
        for key in "2233":
            page.keyboard.press(key)
        time.sleep(0.3)
        assert page.evaluate("window.__wb.sockets || 0") == 0  # no app was started for it
        page.context.close()
    assert current(db) == []
    assert "connected" not in server.log()
    assert "A" * 43 not in server.log()


def test_a_revoked_key_closes_its_page_and_opens_nothing_again(
    browser: Browser, study: tuple[str, Server]
) -> None:
    db, server = study
    url = token_url(db, "alice", server.port)
    page = browser.page()
    page.goto(url)
    wait_text(page, title_of(0, 0))
    revoked = token_url(db, "alice", server.port, "--revoke")
    assert "revoked" in revoked
    page.wait_for_selector("#message", state="visible", timeout=15000)
    assert "Session ended" in page.inner_text("#message")
    page.keyboard.press("3")
    page.reload()
    page.wait_for_selector("#message", state="visible")
    assert "does not open the app" in page.inner_text("#message")
    assert current(db) == []


def test_a_server_killed_mid_session_loses_no_saved_grade(
    browser: Browser, study: tuple[str, Server], tmp_path: Path
) -> None:
    db, server = study
    page = browser.page()
    page.goto(token_url(db, "alice", server.port))
    start, _ = wait_text(page, title_of(0, 0))
    for position, grade in ((1, "3"), (2, "0")):
        page.keyboard.press(grade)
        start, _ = wait_text(page, title_of(0, position), start)  # drawn: the grade is saved
    apps = children(server.process.pid)
    assert len(apps) == 1
    server.stop(signal.SIGKILL)
    page.wait_for_selector("#message", state="visible", timeout=15000)
    assert eventually(lambda: not any(Path(f"/proc/{pid}").exists() for pid in apps), 10)
    assert [(j.doc_id, j.grade) for j in current(db)] == [("d0-000", 3), ("d0-001", 0)]
    again = Server(db, server.port, tmp_path / "server-2.log")
    try:
        page.click("#message button")  # Reconnect
        wait_text(page, title_of(0, 2))  # on where it stopped
        page.keyboard.press("1")
        assert eventually(lambda: len(current(db)) == 3)
        assert sorted((j.doc_id, j.grade) for j in current(db)) == [
            ("d0-000", 3), ("d0-001", 0), ("d0-002", 1),
        ]  # fmt: skip
    finally:
        again.stop()
