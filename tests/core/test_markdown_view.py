"""What the Markdown renderer is given (`core.markdown_view`) and the heading path line
(`core.display.heading_path`): pure text in, text out."""

from __future__ import annotations

from workbench.core.display import heading_path, opens_with_title
from workbench.core.markdown_view import TOOL_INFO, markdown_for_display, tool_line


def test_build_tool_lines_become_one_dim_line_each() -> None:
    text = ('--8<-- "a.md"\n\n```python\n--8<-- "b.py"\n```\n\n::: pkg.Name\n    options:\n'
            '      show_root_heading: true\n\nAfter.')  # fmt: skip
    lines = ('--8<-- "a.md"', '--8<-- "b.py"', "::: pkg.Name (and 2 option lines)")
    assert markdown_for_display(text) == tool_line("\n".join(lines)) + "\n\nAfter."  # one block
    empty = '```{.textual path="app.py"}\n```'
    assert markdown_for_display(empty) == tool_line('```{.textual path="app.py"}')
    assert TOOL_INFO in tool_line("x")


def test_tabs_are_dedented_and_admonitions_become_quotes() -> None:
    text = ('=== "Py"\n\n    ```py\n    def f():\n\n        return 1\n    ```\n\n'
            '!!! note "Mind [b]x[/b]"\n    Body *one*.\n\nEnd.')
    shown = markdown_for_display(text)
    assert '```py\ndef f():\n\n    return 1\n```' in shown
    assert "> **Mind \\[b\\]x\\[/b\\]**\n>\n> Body *one*." in shown
    assert shown.endswith("\n\nEnd.")


def test_code_inside_a_fence_is_left_alone_and_a_cut_fence_reopened() -> None:
    text = "```\n=== \"not a tab\"\n!!! note\n```"
    assert markdown_for_display(text) == text
    assert markdown_for_display("x = 1\n```", "```python") == "```python\nx = 1\n```"


def test_an_html_block_is_left_as_written() -> None:
    """An include inside a `<div>` stays a line of the HTML (the renderer shows the block as
    written): made a tool block there, its fence lines showed as text inside the HTML."""
    text = 'Intro.\n\n<div class="x">\n--8<-- "a.svg"\n</div>\n\n--8<-- "b.md"'
    assert markdown_for_display(text) == text.replace('--8<-- "b.md"', tool_line('--8<-- "b.md"'))


def test_heading_path() -> None:
    assert heading_path("Guide", ("Guide", "Install", "From source")) == (
        "Guide › Install › From source"
    )
    assert heading_path("notes.md", ("Install",)) == "notes.md › Install"
    assert heading_path("T", ()) == "T" and heading_path("", ()) == ""
    assert heading_path("T\x1b[2J", ("A\nB",)) == "T␛[2J › A␊B"
    assert opens_with_title("Guide", "# Guide\n\nText") and not opens_with_title("G", "Text")
