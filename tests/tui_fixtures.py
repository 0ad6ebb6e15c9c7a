"""Judging stores built directly with the Store API (no models): a small pool for app tests."""

from __future__ import annotations

from pathlib import Path

from workbench.core.model import Doc, PoolEntry, Provenance, Query
from workbench.store import JudgmentStore, Store, open_store


def title_of(query_number: int, item: int) -> str:
    """A passage title that is unique and contains no query term (so it renders unbroken)."""
    return f"Passage Q{query_number}-{item:03d}"


def build_store(
    path: Path | str, queries: int = 3, per_query: int = 10, words: int = 30, extra_text: str = ""
) -> JudgmentStore:
    """`queries` x `per_query` pooled items; doc d{q}-{i}; provenance from bm25 and dense. `path`:
    a SQLite file or a PostgreSQL URL."""
    store = open_store(path, create=True)
    store.add_queries(
        Query(f"q{q}", f"maize pest number {q}", f"Relevant: passages about pest {q}.")
        for q in range(queries)
    )
    docs, entries = [], []
    for q in range(queries):
        for i in range(per_query):
            doc_id = f"d{q}-{i:03d}"
            body = " ".join(f"word{(q * 7 + i + w) % 50}" for w in range(words))
            docs.append(Doc(doc_id, f"The maize crop {body} {extra_text}".strip(), title_of(q, i)))
            entries.append(
                PoolEntry(
                    f"q{q}",
                    doc_id,
                    i,
                    provenance=(
                        Provenance("bm25", i + 1, 10.0 - i),
                        Provenance("dense", i + 2, 0.5),
                    ),
                )
            )
    store.add_docs(docs)
    store.add_pool_entries(entries)
    return store


def run_async(test):  # type: ignore[no-untyped-def]
    """Run an async test on a fresh event loop (no asyncio pytest plugin needed)."""
    import asyncio
    import functools

    @functools.wraps(test)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        asyncio.run(test(*args, **kwargs))

    return wrapper


OSC_TITLE = "\x1b]2;TITLE\x07"
"""Sets the terminal window's title to TITLE, were it written raw."""
OSC_CLIPBOARD = "\x1b]52;c;aGk=\x07"
"""Sets the clipboard to 'hi', were it written raw."""
CLEAR = "\x1b[2J"
SGR_RED = "\x1b[31m"
HOSTILE_QUERY = Query(
    "q[/]",
    f"maize {OSC_TITLE}pest [b]x[/b]",
    f"Relevant: {OSC_CLIPBOARD}[@click=app.quit]q {CLEAR}narrative end",
)
HOSTILE_DOC_IDS = ("d[/]", "a[b].md#2", f"e{SGR_RED}1", "[@click=app.quit]q", "plain-5")


def build_hostile_store(path: Path) -> Store:
    """One query whose ids, text, narrative, titles, passages and run tags carry markup and
    terminal escape sequences (OSC 2, OSC 52, ESC[2J, SGR); the last passage is plain."""
    store = Store(path, create=True)
    store.add_queries([HOSTILE_QUERY])
    store.add_docs(
        Doc(
            doc_id,
            f"maize {CLEAR}text {SGR_RED}red [b]x[/b] [@click=app.quit]q d[/] {OSC_CLIPBOARD}end",
            f"Title {n} {OSC_TITLE}[b]x[/b] d[/]",
        )
        for n, doc_id in enumerate(HOSTILE_DOC_IDS)
    )
    store.add_pool_entries(
        PoolEntry(
            HOSTILE_QUERY.query_id,
            doc_id,
            n,
            provenance=(
                Provenance("[@click=app.quit]bm25", 1, 1.0),
                Provenance(f"dense{SGR_RED}[/]", 2, 0.5),
            ),
        )
        for n, doc_id in enumerate(HOSTILE_DOC_IDS)
    )
    return store


def screen_text(app) -> str:  # type: ignore[no-untyped-def]
    """What the app's screen shows now, as plain text (as export_screenshot renders it)."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text(styles=False)


async def settle(pilot, app, figures: bool = True) -> None:  # type: ignore[no-untyped-def]
    """Wait until every write and read is served and its message handled. `figures` False:
    short of the adaptive status line's figures (they wait for the passages' vectors)."""
    import asyncio

    from workbench.tui.grading import GradingScreen

    for _ in range(500):
        await pilot.pause()
        screen = app.screen
        done = not isinstance(screen, GradingScreen) or (
            screen.settled if figures else GradingScreen.settled.fget(screen)
        )
        if not app.writer.busy and done:
            await pilot.pause()
            return
        await asyncio.sleep(0.01)
    raise AssertionError("writes did not settle")


async def press_settled(pilot, app, *keys: str) -> None:  # type: ignore[no-untyped-def]
    """Press each key once the last one's writes and reads are served (the next passage on
    screen), as an annotator does who reads before grading; then settle. A grade key typed
    while nothing can be graded is dropped (tests/tui/test_tui_blind.py)."""
    for key in keys:
        await settle(pilot, app)
        await pilot.press(key)
    await settle(pilot, app)
