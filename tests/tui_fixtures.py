"""Judging stores built directly with the Store API (no models): a small pool for app tests;
and what the app tests read off the judging screen (Textual imported only where one is read)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.store import JudgmentStore, Store, open_store

if TYPE_CHECKING:
    from workbench.tui.app import JudgeApp
    from workbench.tui.judging import JudgingScreen


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


# The demo study's longest query and narrative (q02): 9 lines at 76 columns.
LONG_QUERY = "pests, diseases and parasitic weeds that reduce maize yields and how to control them"
LONG_NARRATIVE = (
    "Any passage that identifies a field pest, disease or parasitic weed of maize (fall "
    "armyworm, stem borers, maize lethal necrosis, striga) or explains a way to prevent or "
    "control one is relevant, including push-pull, residue management, resistant varieties, "
    "scouting and safe pesticide use. Storage insects, aflatoxin after harvest and general "
    "fertiliser advice are not relevant unless they are presented as pest or disease control "
    "in the field."
)


def long_store(path: Path, tmp: Path) -> Store:
    """One query with the demo's longest narrative; passages long enough to scroll."""
    store = Store(path, create=True)
    source = build_store(tmp / "src.db", queries=1, per_query=3, words=200)
    store.add_queries([Query("q0", LONG_QUERY, LONG_NARRATIVE)])
    store.add_docs(source.docs(["d0-000", "d0-001", "d0-002"]).values())
    store.add_pool_entries(source.pool())
    source.close()
    return store


def disagreeing_store(path: Path) -> Store:
    """Two humans who disagree on two pairs (one with notes) and agree on one: adjudication's
    worklist."""
    store = build_store(path, queries=2, per_query=4)
    rows = [
        Judgment("ann", "q0", "d0-001", 3, "exactly the pest"),
        Judgment("bob", "q0", "d0-001", 0, "wrong crop"),
        Judgment("ann", "q0", "d0-002", 1),
        Judgment("bob", "q0", "d0-002", 1),
        Judgment("ann", "q1", "d1-000", 2),
        Judgment("bob", "q1", "d1-000", 1),
    ]
    for row in rows:
        store.add_judgment(row)
    return store


def rows(store: Store, annotator: str = "a") -> list[tuple[str, int | None, str]]:
    """The annotator's stored rows, oldest first: (doc, grade, note)."""
    return [(j.doc_id, j.grade, j.note) for j in store.judgments(annotator)]


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


def screen_of(app: JudgeApp) -> JudgingScreen:
    """The judging screen the app shows now (failing if another screen is on top)."""
    from workbench.tui.judging import JudgingScreen

    screen = app.screen
    assert isinstance(screen, JudgingScreen)
    return screen


def shown(app: JudgeApp) -> str:
    """The doc id of the passage on the judging screen."""
    key = screen_of(app)._shown_key
    assert key is not None
    return key[1]


def dialog_text(screen) -> str:  # type: ignore[no-untyped-def]
    """The note dialog's words (every label, wrapped lines joined), checking each fits."""
    words = []
    for label in screen.query("Label"):
        assert label.region.right <= screen.app.size.width
        words += [
            "".join(s.text for s in label.render_line(y)).strip() for y in range(label.size.height)
        ]
    return " ".join(words)


ACTIVE = ("\x1b", "\x07", "\x9b")
"""Characters that make a terminal act (ESC, BEL, 8-bit CSI): never drawn raw."""


def assert_inert(text: str) -> None:
    for char in ACTIVE:
        assert char not in text, f"{char!r} drawn raw"


def assert_no_click_actions(app: JudgeApp) -> None:
    """No cell of the screen carries a click action: a parsed `[@click=...]` from the data
    would put one (as `@click` in the drawn style's meta) where it is drawn."""
    import io

    from rich.console import Console

    width, height = app.size
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True)
    actions = [
        segment.style.meta
        for segment in console.render(update)
        if segment.style is not None and "@click" in segment.style.meta
    ]
    assert actions == [], actions


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
