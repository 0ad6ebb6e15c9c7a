"""Markdown files cut under `blocks` (`workbench.formats.passages`, `markdown_blocks`): every
passage an exact span of its file, never cut inside a block that fits a passage, with the
headings it sits under. Checked on generated Markdown and on this project's own docs."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.formats import read_text_folder
from workbench.formats.markdown_blocks import LINE_BREAK, parse_blocks
from workbench.formats.markdown_rows import rendered_rows
from workbench.formats.passages import DEFAULT_RULE, PassageRule

DOCS = Path(__file__).parents[2] / "docs"

CODE = '''# Tests

Run the test like this:

```python
def test_total():
    items = [1, 2]

    assert sum(items) == 3


class Cart:

    items = []
```

That is all.
'''


def test_code_with_blank_lines_is_one_span_and_keeps_its_indentation() -> None:
    """The issue's case: a blank line inside a fence is no paragraph break; the `assert` stays
    inside its function, the class attribute under its class, PEP 8's two blank lines kept."""
    [piece] = DEFAULT_RULE.pieces(CODE, markdown=True)
    assert CODE[piece.start : piece.end] == CODE.rstrip("\n")
    assert "\n\n    assert sum(items) == 3\n\n\nclass Cart:\n\n    items = []" in CODE[
        piece.start : piece.end
    ]


def test_a_fence_longer_than_a_passage_is_cut_at_a_blank_line_and_says_so() -> None:
    body = "\n\n".join(f"x{n} = {n}  # value {n} of the list" for n in range(60))
    text = f"# Big\n\nIntro line.\n\n```python\n{body}\n```\n\nAfter.\n"
    pieces = PassageRule("blocks", 20, 80).pieces(text, markdown=True)
    assert len(pieces) > 2
    inside = [p for p in pieces if p.fence]
    assert inside and all(p.fence == "```python" for p in inside)
    for piece in inside:  # cut at a blank line: the passage starts at a whole line
        assert text[piece.start - 2 : piece.start] == "\n\n"


def test_code_heavy_markdown_is_cut_by_its_rows_on_screen() -> None:
    """Issue 43 item 4: few words, many rows (code a row a line). The default rule cuts it into
    passages of at most DEFAULT_ROWS rendered rows, between blocks, each an exact span; a
    store's older rule without rows (`blocks 80:250`) still cuts it by words alone."""
    from workbench.formats.markdown_rows import span_rows
    from workbench.formats.passages import DEFAULT_ROWS, parse_rule

    code = "\n".join(f"    step_{n} = run({n})" for n in range(7))
    section = "## Step {k}\n\nThen this:\n\n```python\ndef part_{k}():\n" + code + "\n```"
    text = "# Steps\n\n" + "\n\n".join(section.format(k=k) for k in range(6)) + "\n"
    assert len(text.split()) < 250 and span_rows(text, 0, len(text)) > 3 * DEFAULT_ROWS
    assert len(parse_rule("blocks 80:250").pieces(text, markdown=True)) == 1
    pieces = DEFAULT_RULE.pieces(text, markdown=True)
    assert len(pieces) >= 3
    for piece in pieces:
        passage = text[piece.start : piece.end]
        assert span_rows(text, piece.start, piece.end) <= DEFAULT_ROWS
        assert passage.count("```") % 2 == 0 and not piece.fence  # no fence cut
        assert passage.startswith(("# Steps", "## Step"))
    assert [p.headings for p in pieces[1:]] == [("Steps",)] * (len(pieces) - 1)


def test_code_taller_than_a_screen_stays_whole_with_its_intro() -> None:
    """A block taller than DEFAULT_ROWS but within the words is not cut for its rows (it
    scrolls, whole), and keeps the sentence that introduces it."""
    lines = "\n".join(f"    total += item_{n}" for n in range(30))
    text = (f"# Sums\n\nThe whole example:\n\n```python\ndef total():\n{lines}\n```\n\n"
            + "After it, the text goes on. " * 12 + "\n")  # fmt: skip
    pieces = DEFAULT_RULE.pieces(text, markdown=True)
    [code] = [p for p in pieces if "```python" in text[p.start : p.end]]
    assert "The whole example:\n\n```python" in text[code.start : code.end]
    assert text[code.start : code.end].count("```") == 2 and not any(p.fence for p in pieces)


def test_heading_path_is_kept_apart_from_the_text() -> None:
    sections = ("# Guide\n\nIntro words here.", "## Install", "Install it now. " * 60,
                "### From source", "Build it so. " * 60, "## Use", "Run it. " * 40)  # fmt: skip
    text = "\n\n".join(sections)
    pieces = PassageRule("blocks", 20, 100).pieces(text, markdown=True)
    paths = {text[p.start : p.end].split("\n")[0][:20]: p.headings for p in pieces}
    assert paths["# Guide"] == ()
    assert paths["### From source"] == ("Guide", "Install")
    assert paths["## Use"] == ("Guide",)
    middle = [p for p in pieces if text[p.start : p.end].startswith("Build it")]
    assert middle and middle[0].headings == ("Guide", "Install", "From source")


def test_front_matter_is_left_out_and_crlf_kept() -> None:
    text = "---\r\ntitle: x\r\n---\r\n# T\r\n\r\nOne line.\r\n\r\n- a\r\n- b\r\n"
    [piece] = DEFAULT_RULE.pieces(text, markdown=True)
    assert text[piece.start : piece.end] == "# T\r\n\r\nOne line.\r\n\r\n- a\r\n- b"


def test_this_projects_docs_pool_into_exact_spans(tmp_path) -> None:
    docs = read_text_folder(DOCS)
    assert len(docs) > 20
    for doc in docs:
        assert doc.span is not None
        text = (DOCS / doc.span.source).read_bytes().decode("utf-8-sig")
        assert text[doc.span.start : doc.span.end] == doc.text, doc.doc_id
        assert len(doc.text.split()) <= 250


# -- generated Markdown ---------------------------------------------------------------------------

_words = st.lists(st.sampled_from(["maize", "pest", "the", "of", "Scout", "`x`", "**b**"]),
                  min_size=1, max_size=30).map(" ".join)  # fmt: skip
_sentence = _words.map(lambda w: w[0].upper() + w[1:] + ".")
_code_line = st.sampled_from(["x = 1", "    y = 2", "", "", "# a comment", "def f():", "  ~~~"])


@st.composite
def _block(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["para", "heading", "fence", "table", "list", "admonition",
                                 "tabs", "indented", "quote", "html", "include"]))  # fmt: skip
    if kind == "para":
        return " ".join(draw(st.lists(_sentence, min_size=1, max_size=8)))
    if kind == "heading":
        return "#" * draw(st.integers(1, 4)) + " " + draw(_words)
    if kind == "fence":
        lines = draw(st.lists(_code_line, max_size=40))
        return "```python\n" + "\n".join(lines) + "\n```"
    if kind == "table":
        rows = draw(st.lists(_words, min_size=1, max_size=12))
        return "| a | b |\n|---|---|\n" + "\n".join(f"| {r} | 1 |" for r in rows)
    if kind == "list":
        items = draw(st.lists(_sentence, min_size=1, max_size=10))
        gap = draw(st.sampled_from(["\n", "\n\n"]))
        return gap.join(f"- {item}\n\n  {item}" for item in items)
    if kind == "admonition":
        body = draw(st.lists(_sentence, min_size=1, max_size=4))
        return '!!! note "Note"\n' + "\n\n".join(f"    {s}" for s in body)
    if kind == "tabs":
        code = "\n".join(f"    {line}" if line else "" for line in draw(st.lists(_code_line)))
        return f'=== "Python"\n\n    ```python\n{code}\n    ```'
    if kind == "indented":
        return "\n".join(f"    {line}" for line in draw(st.lists(_code_line, min_size=1)))
    if kind == "quote":
        return "\n>\n".join(f"> {s}" for s in draw(st.lists(_sentence, min_size=1, max_size=4)))
    if kind == "html":
        return "<div>\n" + draw(_words) + "\n</div>"
    return '--8<-- "docs/snippet.md"'


@st.composite
def _markdown(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(_block(), min_size=1, max_size=25))
    front = draw(st.sampled_from(["", "---\ntitle: T\n---\n"]))
    gaps = draw(st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n \n"]), min_size=len(blocks),
                         max_size=len(blocks)))  # fmt: skip
    text = front + "".join(b + g for b, g in zip(blocks, gaps, strict=True))
    return text.replace("\n", draw(st.sampled_from(["\n", "\r\n"])))


@settings(max_examples=150, deadline=None)
@given(_markdown(), st.sampled_from([(5, 30), (20, 60), (80, 250)]), st.sampled_from([0, 8, 20]))
def test_generated_markdown_passages_are_exact_spans_cut_between_blocks(text, words, rows) -> None:
    """`rows`: the rule's rendered rows at most (0: none): a block that fits both is not cut."""
    low, high = words
    pieces = PassageRule("blocks", low, high, rows).pieces(text, markdown=True)
    line_starts = [0, *(m.end() for m in LINE_BREAK.finditer(text))]
    blocks = parse_blocks(text)
    body = 0
    if blocks and blocks[0].kind == "front_matter":
        end = blocks[0].end
        body = line_starts[end] if end < len(line_starts) else len(text)
        blocks = blocks[1:]
    assert " ".join(text[p.start : p.end] for p in pieces).split() == text[body:].split()
    last = body
    for piece in pieces:
        passage = text[piece.start : piece.end]
        assert piece.start >= last and passage.strip() and passage == passage.rstrip()
        assert len(passage.split()) <= high
        last = piece.end
    cuts = [p.start for p in pieces[1:]]
    shown = rendered_rows(text, blocks)[0]
    for block in blocks:  # a block that fits a passage is never cut
        start = line_starts[block.first]
        end = line_starts[block.end] if block.end < len(line_starts) else len(text)
        tall = rows and shown[block.end] - shown[block.first] > rows
        if len(text[start:end].split()) <= high and not tall:
            assert not [c for c in cuts if start < c < end and text[start:c].strip()], block
