"""The mapping rule and the text measures over generated files, passages and chunkings
(hypothesis): a chunk that is a judged passage takes its grade, every chunk of judged text gets
a grade (the rule's halves), a grade is always one a passage it overlaps carries, and the text
figures are shares that grow with k."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.measures.chunking import (
    Chunk,
    chunk_grade,
    chunk_qrels,
    judged_spans,
    overlap,
    text_length,
)
from workbench.core.measures.text_measures import TextScale, text_scores, text_view
from workbench.core.model import SourceSpan

WORDS = st.sampled_from(["maize", "milk", "pest", "a", "grain", "x1", "é", "测试"])


@st.composite
def folder(draw: st.DrawFn) -> dict:
    """One file cut into passages that tile it (separated by blank lines), each graded 0-3 or
    unjudged, and a random chunking of the same file that covers it."""
    passages = draw(st.lists(st.lists(WORDS, min_size=1, max_size=12), min_size=1, max_size=8))
    text, spans = "", {}
    for n, words in enumerate(passages, 1):
        start = len(text)
        text += " ".join(words)
        spans[f"p{n}"] = SourceSpan("f.md", start, len(text))
        text += "\n\n"
    drawn = draw(st.lists(st.integers(-1, 3), min_size=len(spans), max_size=len(spans)))
    grades = {p: g for p, g in zip(spans, drawn, strict=True) if g >= 0}
    cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=10))))
    bounds = [0, *cuts, len(text)]
    chunks = [Chunk(f"c{i}", SourceSpan("f.md", a, b)) for i, (a, b) in
              enumerate(zip(bounds, bounds[1:], strict=False)) if a < b]  # fmt: skip
    return {"text": text, "spans": spans, "grades": grades, "chunks": chunks}


@given(folder())
@settings(max_examples=300, deadline=None)
def test_a_chunk_that_is_a_judged_passage_takes_its_grade(case: dict) -> None:
    texts = {"f.md": case["text"]}
    as_chunks = [Chunk(f"x-{p}", s) for p, s in case["spans"].items()]
    grades = chunk_qrels(as_chunks, {"q": case["grades"]}, case["spans"], texts)["q"]
    assert grades == {f"x-{p}": g for p, g in case["grades"].items()}


@given(folder())
@settings(max_examples=300, deadline=None)
def test_every_chunk_of_judged_text_gets_a_grade_one_of_its_passages_carries(case: dict) -> None:
    texts, text = {"f.md": case["text"]}, case["text"]
    judged = judged_spans(case["grades"], case["spans"])
    for chunk in case["chunks"]:
        grade = chunk_grade(chunk.span, judged, texts)
        near = {p: overlap(chunk.span, s) for p, s in case["spans"].items()}
        near = {p: text_length(text, *o) for p, o in near.items() if o is not None}
        near = {p: n for p, n in near.items() if n > 0}
        if grade is not None:
            assert grade in {case["grades"][p] for p in near if p in case["grades"]}
            continue
        whole = text_length(text, chunk.span.start, chunk.span.end)
        judged_text = sum(n for p, n in near.items() if p in case["grades"])
        # the passages tile the text: a chunk of judged text only always gets a grade
        assert not (whole and all(p in case["grades"] for p in near)), chunk
        # ungraded only where the chunk holds text nobody judged
        assert whole == 0 or whole - judged_text > 0


@given(folder(), st.integers(1, 12), st.booleans())
@settings(max_examples=300, deadline=None)
def test_text_figures_are_shares_that_grow_with_k(case: dict, k: int, by_grade: bool) -> None:
    texts = {"f.md": case["text"]}
    judged = judged_spans(case["grades"], case["spans"])
    spans = {c.chunk_id: c.span for c in case["chunks"]}
    top = [c.chunk_id for c in reversed(case["chunks"])] * 2  # each ranked twice: counted once
    view = text_view(top, spans, judged, texts, by_grade=by_grade, scale=TextScale(1.5, 1.0, 3.0))
    shallow, deep = text_scores(view, [k]), text_scores(view, [k + 1])
    for key in ("text_R", "text_P", "text_unjudged"):
        value = shallow[f"{key}@{k}"]
        assert value is None or 0 <= value <= 1 + 1e-9
    if shallow[f"text_R@{k}"] is not None:
        assert shallow[f"text_R@{k}"] <= deep[f"text_R@{k + 1}"] + 1e-9
        low, est, high = (shallow[f"text_R@{k}{e}"] for e in ("_low", "_est", "_high"))
        assert low <= est <= high <= shallow[f"text_R@{k}"] + 1e-9
    assert shallow[f"read@{k}"] <= deep[f"read@{k + 1}"]
    precision, unjudged = shallow[f"text_P@{k}"], shallow[f"text_unjudged@{k}"]
    if precision is not None:
        assert precision + unjudged <= 1 + 1e-9
    everything = text_scores(view, [len(top)])
    relevant = any(g >= 1 for g in case["grades"].values())
    # the chunks tile the file: all of them cover all the relevant text, each read once
    assert everything[f"text_R@{len(top)}"] == (1.0 if relevant else None)
    assert everything[f"read@{len(top)}"] == len(case["text"])


def test_the_rule_at_its_halves() -> None:
    """A chunk holding half of a passage takes its grade; holding less, over other unjudged
    text, it does not; a relevant grade stands over unjudged text, a non-relevant one does
    not."""
    text = "aaaa bbbb cccc dddd" + " eeee" * 10
    texts = {"f": text}
    spans = {"p1": SourceSpan("f", 0, 9), "p2": SourceSpan("f", 10, 19)}
    relevant = judged_spans({"p1": 2, "p2": 0}, spans)
    assert chunk_grade(SourceSpan("f", 5, 14), relevant, texts) == 2  # half of each: the max
    assert chunk_grade(SourceSpan("f", 6, 14), relevant, texts) == 0  # 3 of p1's 8, half of p2
    assert chunk_grade(SourceSpan("f", 0, len(text)), relevant, texts) == 2  # relevant stands
    non_relevant = judged_spans({"p1": 0}, spans)
    assert chunk_grade(SourceSpan("f", 0, 30), non_relevant, texts) is None  # 8 of 24 judged
    assert chunk_grade(SourceSpan("f", 0, 14), non_relevant, texts) == 0
    assert chunk_grade(SourceSpan("f", 20, 30), non_relevant, texts) is None  # none counts
