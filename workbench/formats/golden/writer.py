"""Writing golden.yaml: one line per judged pair (a regrade is a one-line diff), every scalar
quoted only as much as it needs to read back as itself, and anything the reader would refuse
refused before a byte is written."""

from __future__ import annotations

import math
import os
import re
from typing import Any

import yaml

from workbench.core.errors import InputError, quoted
from workbench.core.model import Role
from workbench.formats.atomic import atomic_write_text
from workbench.formats.golden.data import data_problems, plain, read_data
from workbench.formats.golden.judges import (
    judge_label_lines,
    judge_problems,
    judges_lines,
    versions_part,
)
from workbench.formats.golden.reader import check_coverage
from workbench.formats.golden.record import SCHEMA, VERSION, Golden
from workbench.formats.golden.yamlnodes import NodeReader, compose, key_path
from workbench.formats.textio import INT64, has_surrogate, id_problem

_PLAIN_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/#]*")
_RESERVED = frozenset(
    "y n yes no true false on off null".split()
)  # YAML 1.1 words that would not read back as strings


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # never write anchors: the reader refuses them
        return True


def _scalar(value: str, *, flow: bool = True) -> str:
    """A YAML scalar that reads back as exactly `value` (a string), on one line. `flow=True`
    makes it valid inside `{...}`/`[...]` too; block context (free text) needs fewer quotes."""
    if _PLAIN_SAFE.fullmatch(value) and value.lower() not in _RESERVED:
        return value
    options: dict[str, Any] = {"Dumper": _Dumper, "allow_unicode": True, "width": math.inf}
    if flow:  # dumped inside a flow list, then unwrapped
        dumped = yaml.dump([value], default_flow_style=True, **options).rstrip("\n")[1:-1]
    else:  # dumped as a block mapping's value, then unwrapped
        dumped = yaml.dump({"k": value}, default_flow_style=False, **options).rstrip("\n")[3:]
    if any(brk in dumped for brk in "\n\r\x85\u2028\u2029"):  # double quotes escape breaks
        dumped = yaml.dump([value], default_style='"', default_flow_style=True, **options)
        dumped = dumped.rstrip("\n")[1:-1]
    return dumped


def _text(value: str) -> str:
    return _scalar(value, flow=False)


def _flow(data: Any) -> str:
    """Free-form data as one flow-style line."""
    dumped = yaml.dump(
        plain(data), Dumper=_Dumper, allow_unicode=True, width=math.inf,
        default_flow_style=True, sort_keys=False,
    )  # fmt: skip
    return dumped[: -len("\n...\n")] if dumped.endswith("\n...\n") else dumped.rstrip("\n")


def _block(data: Any, indent: str) -> list[str]:
    dumped = yaml.dump(
        plain(data), Dumper=_Dumper, allow_unicode=True, width=math.inf,
        default_flow_style=False, sort_keys=False,
    )  # fmt: skip
    return [f"{indent}{line}" for line in dumped.rstrip("\n").split("\n")]


def golden_text(golden: Golden) -> str:
    """The YAML text `write_golden` writes (deterministic: queries in their order, judgments
    by doc id)."""
    problems = _check_writable(golden)
    if problems:
        raise InputError(problems)
    version = VERSION if golden.has_judges else 1  # a people-only set reads as before
    out = [f"schema: {SCHEMA}", f"version: {version}", f"name: {_text(golden.name)}"]
    out.append(f"description: {_text(golden.description)}")
    out.append("grade_scale:")
    out.extend(
        f"  {grade}: {_text(golden.grade_scale[grade])}" for grade in sorted(golden.grade_scale)
    )
    if golden.annotators:
        out.append("annotators:")
        out.extend(
            f"  - {{name: {_scalar(a['name'])}, role: {_scalar(a.get('role', 'human'))}}}"
            for a in golden.annotators
        )
    else:
        out.append("annotators: []")
    out.extend(judges_lines(golden, _scalar))
    out.extend(_pool_lines(golden.pool))
    if golden.aliases:
        out.append("aliases:")
        out.extend(
            f"  {_scalar(alias)}: {_scalar(golden.aliases[alias])}"
            for alias in sorted(golden.aliases)
        )
    else:
        out.append("aliases: {}")
    if golden.coverage is None:
        out.append("coverage: null")
    else:
        block = ["coverage:", *_block(golden.coverage, "  ")]
        _check_coverage_reads_back(block, golden.coverage)
        out.extend(block)
    if golden.disagreements:
        out.append("disagreements:")
        out.extend(f"  - {_flow(d)}" for d in golden.disagreements)
    else:
        out.append("disagreements: []")
    out.extend(_query_lines(golden))
    return "".join(f"{line}\n" for line in out)


def _pool_lines(pool: dict | None) -> list[str]:
    if pool is None:
        return ["pool: null"]
    out = ["pool:"]
    out.append(f"  systems: [{', '.join(_scalar(s) for s in pool.get('systems', []))}]")
    out.append(f"  depth: {int(pool['depth'])}")
    out.append(f"  strategy: {_scalar(pool['strategy'])}")
    if "seed" in pool:
        out.append(f"  seed: {'null' if pool['seed'] is None else int(pool['seed'])}")
    if pool.get("params"):
        out.append("  params:")
        out.extend(_block(pool["params"], "    "))
    return out


def _query_lines(golden: Golden) -> list[str]:
    """The queries, each with its judgments one per line, sorted by doc id."""
    out = ["queries:" if golden.queries else "queries: []"]
    labels_of: dict[str, list] = {}
    for label in golden.judge_labels:
        labels_of.setdefault(label.query_id, []).append(label)
    for query in golden.queries:
        qid = query.query_id
        out.append(f"  - id: {_scalar(qid)}")
        out.append(f"    text: {_text(query.text)}")
        if query.narrative:
            out.append(f"    narrative: {_text(query.narrative)}")
        judged = golden.qrels.get(qid, {})
        if not judged:
            out.append("    judgments: []")
            out.extend(judge_label_lines(labels_of.get(qid, []), _scalar))
            continue
        out.append("    judgments:")
        for doc_id in sorted(judged):
            parts = [f"doc: {_scalar(doc_id)}", f"grade: {int(judged[doc_id])}"]
            by = golden.judged_by.get((qid, doc_id))
            if by:
                parts.append(f"by: [{', '.join(_scalar(name) for name in by)}]")
            note = golden.notes.get((qid, doc_id))
            if note:
                parts.append(f"note: {_scalar(note)}")
            versions = versions_part(golden, (qid, doc_id), _scalar)
            if versions:
                parts.append(versions)
            out.append(f"      - {{{', '.join(parts)}}}")
        out.extend(judge_label_lines(labels_of.get(qid, []), _scalar))
    return out


def _check_coverage_reads_back(block: list[str], coverage: Any) -> None:
    """Read the written coverage block back as the reader does (it is small): its figures
    must pass `check_coverage`, and the data must come back equal."""
    text = "".join(f"{line}\n" for line in block)
    reader = NodeReader("golden", text)
    root = compose(text, reader)
    if isinstance(root, yaml.MappingNode) and isinstance(root.value[0][1], yaml.MappingNode):
        back = read_data(reader, root.value[0][1], "coverage")
        check_coverage(reader, root.value[0][1])
        if not reader.problems.count and back != plain(coverage):
            reader.add(None, "coverage", "would not read back as written (not plain data)")
    if reader.problems.count:
        raise InputError(
            [re.sub(r"^golden:\d+: ", "golden: ", p) for p in reader.problems.problems]
        )


def write_golden(path: str | os.PathLike[str], golden: Golden) -> None:
    atomic_write_text(path, golden_text(golden))


def _check_writable(golden: Golden) -> list[str]:
    """What the reader would refuse, refused before anything is written: ids it would not read
    back (`textio.id_problem`), text that is not valid Unicode, integers beyond 64 bits,
    free-form data that is not plain (see `data_problems`), a grade outside the scale."""
    problems: list[str] = []
    texts: list[tuple[str, Any]] = [("name", golden.name), ("description", golden.description)]
    ids: list[tuple[str, Any]] = []
    integers: list[tuple[str, Any]] = []
    for grade, wording in golden.grade_scale.items():
        integers.append(("grade_scale", grade))
        texts.append((f"grade_scale.{quoted(grade)}", wording))
    for i, annotator in enumerate(golden.annotators):
        ids.append((f"annotators[{i}].name", annotator["name"]))
        texts.append((f"annotators[{i}].role", annotator.get("role", Role.HUMAN)))
    if golden.pool is not None:
        pool = golden.pool
        missing = [k for k in ("systems", "depth", "strategy") if pool.get(k) is None]
        if missing:
            problems.append(f"golden: pool lacks {', '.join(missing)}")
        ids.extend((f"pool.systems[{i}]", name) for i, name in enumerate(pool.get("systems", [])))
        texts.append(("pool.strategy", pool.get("strategy") or ""))
        integers.append(("pool.depth", pool.get("depth") or 0))
        if pool.get("seed") is not None:
            integers.append(("pool.seed", pool["seed"]))
        problems.extend(data_problems(pool.get("params"), "pool.params"))
    for alias, canonical in golden.aliases.items():
        ids.extend([("aliases", alias), (key_path("aliases", str(alias)), canonical)])
    problems.extend(data_problems(golden.coverage, "coverage"))
    for i, item in enumerate(golden.disagreements):
        problems.extend(data_problems(item, f"disagreements[{i}]"))
    problems.extend(_query_problems(golden, ids, texts))
    problems.extend(judge_problems(golden, ids, texts))
    problems.extend(_value_problems(ids, texts, integers))
    return problems


def _query_problems(
    golden: Golden, ids: list[tuple[str, Any]], texts: list[tuple[str, Any]]
) -> list[str]:
    """Problems of the queries and judgments; their ids and texts added to `ids`, `texts`."""
    problems: list[str] = []
    query_ids = [q.query_id for q in golden.queries]
    if len(set(query_ids)) != len(query_ids):
        problems.append("golden: duplicate query ids")
    for i, query in enumerate(golden.queries):
        ids.append((f"queries[{i}].id", query.query_id))
        texts.extend([(f"queries[{i}].text", query.text), (f"queries[{i}].narrative",
                      query.narrative)])  # fmt: skip
    known = set(query_ids)
    for qid, judged in golden.qrels.items():
        if judged and qid not in known:
            problems.append(f"golden: judgments for query {quoted(qid)} which is not in queries")
        for doc_id, grade in judged.items():
            where = f"query {quoted(qid)} doc {quoted(doc_id)}"
            ids.append((f"query {quoted(qid)}: doc id", doc_id))
            if grade not in golden.grade_scale:
                problems.append(
                    f"golden: {where}: grade {quoted(grade)} is outside the grade scale "
                    f"[{', '.join(map(quoted, sorted(golden.grade_scale)))}]"
                )
    for (qid, doc_id), names in golden.judged_by.items():
        ids.extend((f"query {quoted(qid)} doc {quoted(doc_id)}: by", name) for name in names)
    for (qid, doc_id), note in golden.notes.items():
        texts.append((f"query {quoted(qid)} doc {quoted(doc_id)}: note", note))
    return problems


def _value_problems(
    ids: list[tuple[str, Any]], texts: list[tuple[str, Any]], integers: list[tuple[str, Any]]
) -> list[str]:
    problems: list[str] = []
    for where, value in ids:
        problem = id_problem(value) if isinstance(value, str) else "is not text"
        if problem:
            problems.append(f"golden: {where}: id {quoted(value)} {problem}")
    for where, value in texts:
        if not isinstance(value, str):
            problems.append(f"golden: {where}: {quoted(value)} is not text")
        elif has_surrogate(value):
            problems.append(f"golden: {where}: not valid Unicode (lone surrogate)")
    for where, value in integers:
        if not _is_int64(value):
            problems.append(f"golden: {where}: {quoted(value)} is not a 64-bit integer")
    return problems


def _is_int64(value: Any) -> bool:
    try:
        return int(value) == value and int(value) in INT64 and not isinstance(value, bool)
    except (TypeError, ValueError, OverflowError):
        return False
