"""read_run's chunked, column-wise parser must behave exactly like the plain line-by-line
definition of the format: same scores (in file order), same name, same rank warning, and on
bad input the same problems, wherever the chunk boundaries fall."""

from __future__ import annotations

import math
import re
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from run_file_strategies import run_text

from workbench.core.display import has_control
from workbench.core.errors import InputError, ProblemCollector
from workbench.core.model import order_pairs
from workbench.formats import trec
from workbench.formats.trec import read_run


def reference_read_run(path: Path) -> tuple[str, dict, list[str]] | list[str]:
    """The format by definition, one line at a time: (name, scores, warnings) or problems."""
    problems = ProblemCollector(str(path))
    scores: dict[str, dict[str, float]] = {}
    ranks: dict[str, list[int]] = {}
    tags: set[str] = set()
    text = path.read_bytes().decode("utf-8-sig")
    for lineno, line in enumerate(text.split("\n"), 1):
        cols = line.split()
        if not cols or cols[0].startswith("#"):
            continue
        if len(cols) != 6:
            problems.add(lineno, f"expected 6 columns {trec.RUN_COLUMNS}, found {len(cols)}")
            continue
        qid, _, doc_id, rank_text, score_text, tag = cols
        try:
            score = float(score_text)
        except ValueError:
            problems.add(lineno, f"score {score_text!r} is not a number")
            continue
        if not score_text.isascii() or "_" in score_text:
            problems.add(lineno, f"score {score_text!r} is not a plain number (ASCII, no '_')")
            continue
        if not math.isfinite(score):
            problems.add(lineno, f"score {score_text!r} is not a finite number")
            continue
        if not re.fullmatch(r"-?[0-9]+", rank_text):
            try:
                int(rank_text)
            except ValueError:
                problems.add(lineno, f"rank {rank_text!r} is not an integer")
            else:
                problems.add(
                    lineno,
                    f"rank {rank_text!r} is not a plain integer (ASCII digits, an optional "
                    "leading '-')",
                )
            continue
        rank = int(rank_text)
        if not -(2**63) <= rank < 2**63:
            problems.add(lineno, f"rank {rank_text!r} is out of range (a 64-bit integer)")
            continue
        controlled = [("query id", qid), ("doc id", doc_id), ("tag", tag)]
        for what, value in controlled:
            if has_control(value):
                problems.add(lineno, f"{what} {value!r} has a control character")
        if any(has_control(value) for _, value in controlled):
            continue
        docs = scores.setdefault(qid, {})
        if doc_id in docs:
            problems.add(lineno, f"query {qid!r} lists doc {doc_id!r} twice")
            continue
        docs[doc_id] = score
        ranks.setdefault(qid, []).append(rank)
        tags.add(tag)
    if not scores and not problems.count:
        problems.add(None, f"no run lines (expected {trec.RUN_COLUMNS})")
    try:
        problems.raise_if_any()
    except InputError as exc:
        return exc.problems
    disagreeing = tie_only = 0
    for qid, docs in scores.items():
        rank_of = dict(zip(docs, ranks[qid], strict=True))
        along_rule = [rank_of[d] for d in order_pairs(docs.items())]
        if not all(a < b for a, b in pairwise(along_rule)):
            disagreeing += 1
            by_rank = [s for _, s in sorted(zip(ranks[qid], docs.values(), strict=True))]
            tie_only += all(a >= b for a, b in pairwise(by_rank))
    warnings = []
    if disagreeing:
        ties = f" ({tie_only} of them only among tied scores)" if tie_only else ""
        warnings.append(
            f"{path}: the rank column disagrees with the scores in {disagreeing} of "
            f"{len(scores)} queries{ties}; order follows the scores (score descending, ties by "
            "docid descending), as trec_eval does"
        )
    name = next(iter(tags)) if len(tags) == 1 else path.name
    return name, scores, warnings


def actual(path: Path) -> tuple[str, dict, list[str]] | list[str]:
    try:
        run = read_run(path)
    except InputError as exc:
        return exc.problems
    return run.name, run.scores, run.warnings


def same(a, b) -> bool:
    """Equal, dict order (queries and docs: file order) included."""
    if isinstance(a, list) or isinstance(b, list):
        return a == b
    return (
        a[0] == b[0]
        and a[2] == b[2]
        and [(q, list(d.items())) for q, d in a[1].items()]
        == [(q, list(d.items())) for q, d in b[1].items()]
    )


@pytest.mark.parametrize("chunk_chars", [1, 30, 1 << 14])
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=run_text)
def test_chunked_reader_equals_the_line_definition(tmp_path, monkeypatch, chunk_chars, text):
    monkeypatch.setattr(trec.run, "_CHUNK_CHARS", chunk_chars)
    path = tmp_path / "fuzz.run"
    path.write_bytes(text.encode())
    assert same(actual(path), reference_read_run(path))


@pytest.mark.parametrize("chunk_chars", [1, 40, 1 << 14])
def test_regular_files_across_chunks(tmp_path, monkeypatch, chunk_chars):
    """Queries split over chunks, interleaved queries, a duplicate far from its first line,
    ties in the rule's order and against it, ranks from 0, 1 and a gap."""
    monkeypatch.setattr(trec.run, "_CHUNK_CHARS", chunk_chars)
    cases = {
        "rule": [f"q{q} Q0 d{9 - i} {i + 1} {10 - i // 2} t" for q in range(3) for i in range(9)],
        "ties_ascending": [f"q1 Q0 d{i} {i} {5 - i // 3} t" for i in range(9)],
        "gap": ["q1 Q0 a 1 3 t", "q1 Q0 b 2 2 t", "q1 Q0 c 7 1 t", "q1 Q0 d 8 0 t"],
        "back": ["q1 Q0 a 2 3 t", "q1 Q0 b 1 2 t"],
        "interleaved": [f"q{i % 3} Q0 d{i} {i // 3 + 1} {-i} t" for i in range(30)],
        "dup_far": [f"q1 Q0 d{i} {i + 1} {-i} t" for i in range(20)] + ["q1 Q0 d3 21 -99 t"],
        "dup_interleaved": ["q1 Q0 a 1 3 t", "q2 Q0 a 1 1 t", "q1 Q0 b 2 2 t", "q1 Q0 a 3 1 t"],
        "crlf_tabs": [f"q1\tQ0\td{i}\t{i + 1}\t{-i}\tt\r" for i in range(12)],
        "shifted": ["q1 Q0 a 1 2", "t q1 Q0 b 2 1 t"],
        "comment_six": ["#q Q0 a 1 2 t", "q1 Q0 a 1 2 t"],
        "header": ["# made by hand", ""] + [f"q1 Q0 d{i} {i + 1} {-i} t" for i in range(12)],
    }
    for name, lines in cases.items():
        path = tmp_path / f"{name}.run"
        path.write_text("\n".join(lines) + "\n")
        assert same(actual(path), reference_read_run(path)), name
