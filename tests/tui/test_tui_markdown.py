"""A Markdown file's passage on the judging screen: the headings it sits under above it, rendered
as Markdown (code highlighted, tables, admonitions, build-tool lines dim) with nothing from the
data able to act, its source a key away (`m`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from tui_fixtures import (
    CLEAR,
    OSC_TITLE,
    SGR_RED,
    assert_inert,
    assert_no_click_actions,
    press_settled,
    run_async,
    screen_text,
    settle,
)

from workbench.core.model import Doc, PoolEntry, Query, SourceSpan
from workbench.formats import read_text_folder
from workbench.formats.markdown_rows import READING_WIDTH, span_rows
from workbench.formats.passages import DEFAULT_ROWS
from workbench.store import Store
from workbench.tui.app import JudgeApp
from workbench.tui.markdown import PassageMarkdown
from workbench.tui.passage import PassageView

DOCS = Path(__file__).parents[2] / "docs"
ROW_MISS = 4
"""The most rows the cut's count may fall short of the rendering (3 measured on this project's
docs, 4 on Textual's)."""
BOX_ROWS_100X30 = 24
"""The passage box's rows of text at 100x30, the narrative folded: 30 less the query bar, the
box's two borders, the grade bar, the status line and the key hints."""

PAGE = """## Install

Install the package, then check it:

```python
def test_install():
    import maize

    assert maize.version
```

| option | meaning |
|---|---|
| `--depth` | how deep each system's ranking is pooled |

!!! warning "Before you start"
    The maize pest guide needs Python 3.11.

=== "pip"

    ```bash
    pip install maize
    ```

--8<-- "docs/snippets/install.md"
"""
DOCS_PAGE = """# Grid rows

The `grid-rows` style sets the height of the rows of a grid, one value a row.

!!! note

    This style only affects widgets with `layout: grid`.

## Syntax

--8<-- "docs/snippets/syntax_block_start.md"
grid-rows: <scalar>+;
--8<-- "docs/snippets/syntax_block_end.md"

The style takes one or more [`<scalar>`](../css_types/scalar.md) values, the height of each row.
When the grid has more rows than values, the values are used again from the first.
Values beyond the number of rows are ignored.

## Example

The example below lays out ten labels in a grid of five rows and two columns.
We set `grid-rows: 1fr 6 25%`, so the values are used again:

 - rows 1 and 4 are `1fr` high;
 - rows 2 and 5 are `6` high; and
 - row 3 is `25%` of the grid's height.

=== "Output"

    ```{.textual path="docs/examples/styles/grid_rows.py"}
    ```

=== "grid_rows.py"

    ```py
    --8<-- "docs/examples/styles/grid_rows.py"
    ```

## CSS

```css
/* Every row half the height */
grid-rows: 50%;

/* Every other row twice as high as the first */
grid-rows: 1fr 2fr;
```

## Python

```py
grid.styles.grid_rows = "50%"
grid.styles.grid_rows = "1fr 2fr"
```

| value | meaning |
|---|---|
| `1fr` | a share of the room left |
| `6` | six rows of the terminal |

## See also

 - [`grid-columns`](./grid_columns.md) to set the width of the columns.
 - [`grid-gutter`](./grid_gutter.md) to set the space between the cells.
"""
"""A typical page of a framework's docs (a style's reference: prose, a note, build-tool lines,
content tabs, code, a table, a list): 225 words, 50 rows on screen in one passage."""
OSC_LINK = "\x1b]8;;https://evil.example\x07click me\x1b]8;;\x07"
HOSTILE = (f"# Pest [bold]x[/bold]\n\nmaize {SGR_RED}red [link=https://evil.example]l[/link] "
           f"[@click=app.quit]q {OSC_LINK} {CLEAR} <script>alert(1)</script> "
           f"[a link](https://evil.example) ![img](https://evil.example/i.png) {OSC_TITLE}\n\n"
           "```python\n# [bold]not markup[/bold]\nx = '\x1b[2J'\n```\n")  # fmt: skip


def _store(path: Path, *docs: Doc) -> Store:
    store = Store(path, create=True)
    store.add_queries([Query("q", "maize install", "Relevant: how to install.")])
    store.add_docs(docs)
    store.add_pool_entries(PoolEntry("q", d.doc_id, n) for n, d in enumerate(docs))
    return store


def _doc(doc_id: str, text: str, fence: str = "") -> Doc:
    source = doc_id.rpartition("#")[0]
    return Doc(doc_id, text, "Maize guide", SourceSpan(source, 0, len(text), fence),
               ("Maize guide", "Setting up"))  # fmt: skip


@pytest.fixture
def app(tmp_path: Path) -> JudgeApp:
    store = _store(tmp_path / "md.db", _doc("guide/install.md#2", PAGE))
    yield JudgeApp(store, "ann")
    store.close()


def test_a_rendered_code_block_table_and_admonition(app: JudgeApp, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(100, 30), run_before=lambda pilot: settle(pilot, app))


@run_async
async def test_heading_path_rendering_and_the_source_a_key_away(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db", _doc("guide/install.md#2", PAGE))
    app = JudgeApp(store, "ann")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "Maize guide › Setting up" in text
        assert "def test_install():" in text and "    assert maize.version" in text
        assert "```" not in text and "| option" not in text and "!!!" not in text
        assert "Before you start" in text and '--8<-- "docs/snippets/install.md"' in text
        assert '=== "pip"' in text and "pip install maize" in text
        await press_settled(pilot, app, "m")
        raw = screen_text(app)
        assert "```python" in raw and "| option | meaning |" in raw and "!!! warning" in raw
        await press_settled(pilot, app, "m")
        assert "```python" not in screen_text(app)
    store.close()


@run_async
async def test_hostile_markdown_is_rendered_inert(tmp_path: Path) -> None:
    store = _store(tmp_path / "h.db", _doc("h.md#1", HOSTILE), _doc("h.md#2", PAGE, "```python"))
    app = JudgeApp(store, "ann")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert_inert(text)
        assert_no_click_actions(app)
        for literal in ("Pest [bold]x[/bold]", "[link=https://evil.example]l[/link]",
                        "[@click=app.quit]q", "␛]8;;https://evil.example␇click me",
                        "<script>alert(1)</script>", "(https://evil.example)",
                        "[image: img] (https://evil.example/i.png)",
                        "# [bold]not markup[/bold]", "␛[2J"):  # fmt: skip
            assert literal in text, literal
        await press_settled(pilot, app, "m")
        assert_inert(screen_text(app))
        await press_settled(pilot, app, "m", "2")  # the next: a code block cut, said so
        assert "a code block longer than a passage" in screen_text(app)
        assert app.is_running and app.return_code is None
    store.close()


@run_async
async def test_a_typical_docs_page_shows_each_passage_whole_at_100x30(tmp_path: Path) -> None:
    """Issue 43 item 4: pooled with the default rule, every passage of a docs page shows its
    end at 100x30 without scrolling, the query's narrative shown on the first (before: one
    passage of 50 rows, 26 of them below the box)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "grid_rows.md").write_text(DOCS_PAGE, encoding="utf-8", newline="")
    docs = read_text_folder(folder)
    assert len(docs) > 1
    assert all(DOCS_PAGE[d.span.start : d.span.end] == d.text for d in docs if d.span)
    store = _store(tmp_path / "g.db", *docs)
    app = JudgeApp(store, "ann")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        for doc in docs:
            text = screen_text(app)
            assert doc.doc_id in text
            assert "── end of passage ──" in text and "more line" not in text, doc.doc_id
            await press_settled(pilot, app, "0")
    store.close()


def test_the_cuts_row_count_is_the_renderings() -> None:
    """The rows the cut counts for a passage (`markdown_rows.span_rows`) are those the app
    renders, give or take a few (over, mostly: markup is counted as written), for every
    passage of this project's docs under the default rule; so each one the cut made fit shows
    whole at 100x30 (one holding a table or code taller than that scrolls)."""
    console = Console(width=READING_WIDTH, file=io.StringIO(), color_system=None)
    view = PassageView()
    fitted = 0
    for doc in read_text_folder(DOCS):
        assert doc.span is not None
        text = (DOCS / doc.span.source).read_text(encoding="utf-8")
        counted = span_rows(text, doc.span.start, doc.span.end)
        shown = len(console.render_lines(PassageMarkdown(doc.text, frozenset(), doc.span.fence)))
        assert shown <= counted + ROW_MISS, (doc.doc_id, shown, counted)
        if counted <= DEFAULT_ROWS:
            whole = len(console.render_lines(view._content(doc, doc.doc_id, frozenset())))
            assert whole <= BOX_ROWS_100X30, (doc.doc_id, whole)
            fitted += 1
    assert fitted > 100


def test_no_hyperlink_reaches_the_terminal() -> None:
    """Rendered for a terminal, the hostile passage carries no link style (no OSC 8)."""
    console = Console(width=100, file=io.StringIO(), force_terminal=True)
    segments = list(console.render(PassageMarkdown(HOSTILE, frozenset({"maize"}))))
    assert not [s for s in segments if s.style is not None and s.style.link]
    output = "".join(s.text for s in segments)
    assert "\x1b" not in output and "\x07" not in output
