"""A Markdown file's passage on the judging screen: the headings it sits under above it, rendered
as Markdown (code highlighted, tables, admonitions, build-tool lines dim) with nothing from the
data able to act, its source a key away (`m`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from test_tui_hostile import assert_inert, assert_no_click_actions
from tui_fixtures import CLEAR, OSC_TITLE, SGR_RED, press_settled, run_async, screen_text, settle

from workbench.core.model import Doc, PoolEntry, Query, SourceSpan
from workbench.store import Store
from workbench.tui.app import JudgeApp
from workbench.tui.markdown import PassageMarkdown

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


def test_no_hyperlink_reaches_the_terminal() -> None:
    """Rendered for a terminal, the hostile passage carries no link style (no OSC 8)."""
    console = Console(width=100, file=io.StringIO(), force_terminal=True)
    segments = list(console.render(PassageMarkdown(HOSTILE, frozenset({"maize"}))))
    assert not [s for s in segments if s.style is not None and s.style.link]
    output = "".join(s.text for s in segments)
    assert "\x1b" not in output and "\x07" not in output
