"""Pairwise judgments for `workbench position-bias`: JSONL {"qid", "a", "b", "first",
"preferred"}, read strictly (every problem named by line)."""

from __future__ import annotations

from workbench.core.errors import ProblemCollector
from workbench.core.judges.position_bias import Comparison, PairKey
from workbench.formats.textio import json_objects


def parse_comparisons(text: str, path: str) -> list[Comparison]:
    """Strict JSONL: {"qid", "a", "b", "first": "a"|"b", "preferred": "a"|"b"|"tie"}; every
    problem collected as path:line, then one InputError. A pair judged twice in the same order
    is an error (it would silently weigh one order double)."""
    problems = ProblemCollector(path)
    out: list[Comparison] = []
    seen: dict[tuple[PairKey, str], int] = {}
    fields = '"qid", "a", "b", "first", "preferred"'
    for lineno, record in json_objects(text, problems, fields):
        ok = True
        for key in ("qid", "a", "b"):
            value = record.get(key)
            if not isinstance(value, str) or not value:
                problems.add(lineno, f'"{key}" must be a non-empty string, found {value!r}')
                ok = False
        if record.get("first") not in ("a", "b"):
            problems.add(lineno, f'"first" must be "a" or "b", found {record.get("first")!r}')
            ok = False
        if record.get("preferred") not in ("a", "b", "tie"):
            problems.add(
                lineno, f'"preferred" must be "a", "b" or "tie", found {record.get("preferred")!r}'
            )
            ok = False
        if ok and record["a"] == record["b"]:
            problems.add(lineno, f'"a" and "b" are the same document {record["a"]!r}')
            ok = False
        if not ok:
            continue
        first = record[record["first"]]
        second = record["b" if record["first"] == "a" else "a"]
        preferred = None if record["preferred"] == "tie" else record[record["preferred"]]
        comparison = Comparison(record["qid"], first, second, preferred, lineno)
        order = (comparison.key, first)
        if order in seen:
            problems.add(
                lineno,
                f"query {record['qid']!r} pair {first!r} first, {second!r} second judged again "
                f"(first on line {seen[order]})",
            )
            continue
        seen[order] = lineno
        out.append(comparison)
    if not out and not problems.count:
        problems.add(None, "no comparisons")
    problems.raise_if_any()
    return out
