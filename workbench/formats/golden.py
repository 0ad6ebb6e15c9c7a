"""golden.yaml: the versioned, human-readable record of a finished judging round.

It keeps every judged pair (grade 0 included), who judged it, the grade scale and its wording,
the pool annotators saw, aliases, a coverage summary and the disagreements. Reading is strict:
YAML tags, anchors and aliases are refused, a repeated mapping key or an unknown key is a
problem naming its line and key path, and a grade outside the declared scale is an error. The
writer emits one line per judged pair, so a regrade is a one-line diff."""

from __future__ import annotations

import gc
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import yaml

from workbench.atomic import atomic_write_text
from workbench.errors import InputError, ProblemCollector
from workbench.formats.textio import read_text
from workbench.model import DEFAULT_GRADE_SCALE, Qrels, Query

SCHEMA = "workbench-golden"
VERSION = 1
ROLES = ("human", "adjudicator", "model", "oracle")
"""Every role the store writes; "oracle" is `workbench simulate`'s answers from existing qrels."""

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN_INT = re.compile(r"[-+]?[0-9]+")


@dataclass(slots=True)
class Golden:
    name: str
    description: str = ""
    grade_scale: dict[int, str] = field(default_factory=lambda: dict(DEFAULT_GRADE_SCALE))
    annotators: list[dict] = field(default_factory=list)
    """[{"name": .., "role": one of ROLES}]"""
    pool: dict | None = None
    """{"systems": [..], "depth": int, "strategy": str, "seed"?: int | None, "params"?: {..}}"""
    queries: list[Query] = field(default_factory=list)
    qrels: Qrels = field(default_factory=dict)
    """The judged pairs exactly as recorded (aliases not expanded: see `expanded_qrels`)."""
    judged_by: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    """alias doc id -> canonical doc id: an identical passage that takes the canonical grade."""
    coverage: dict | None = None
    disagreements: list[dict] = field(default_factory=list)
    notes: dict[tuple[str, str], str] = field(default_factory=dict)

    def expanded_qrels(self) -> Qrels:
        """`qrels` with each alias given its canonical doc's grade (a direct judgment of the
        alias wins), as the TREC qrels export writes them."""
        return expand_aliases(self.qrels, self.aliases)


def expand_aliases(qrels: Qrels, aliases: dict[str, str]) -> Qrels:
    """A copy of `qrels` where each alias takes its canonical doc's grade, per query."""
    by_canonical: dict[str, list[str]] = {}
    for alias, canonical in aliases.items():
        by_canonical.setdefault(canonical, []).append(alias)
    out: Qrels = {}
    for qid, judged in qrels.items():
        expanded = dict(judged)
        for doc_id, grade in judged.items():
            for alias in by_canonical.get(doc_id, ()):
                expanded.setdefault(alias, grade)
        out[qid] = expanded
    return out


# -- reading ------------------------------------------------------------------------------------


class _Reader:
    """Walks the composed YAML node tree so every problem can name its line and key path."""

    def __init__(self, path: str):
        self.problems = ProblemCollector(path)

    def add(self, node: yaml.Node | None, where: str, message: str) -> None:
        line = node.start_mark.line + 1 if node is not None else None
        self.problems.add(line, f"{where}: {message}" if where else message)

    def mapping(
        self, node: yaml.Node, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
    ) -> dict[str, yaml.Node] | None:
        if not isinstance(node, yaml.MappingNode):
            self.add(node, where, f"expected a mapping with keys {', '.join(allowed)}")
            return None
        fields: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            path = f"{where}.{key}" if where else str(key)
            if key is None or key not in allowed:
                self.add(key_node, path, f"unknown key (allowed: {', '.join(allowed)})")
                continue
            if key in fields:
                self.add(key_node, path, "duplicate key")
                continue
            fields[key] = value_node
        for key in required:
            if key not in fields:
                self.add(node, where, f"missing key '{key}'")
        return fields

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        if _is_null(node):
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.add(node, where, "expected a list")
            return []
        return list(node.value)

    def text(self, node: yaml.Node, where: str, *, required: bool) -> str | None:
        """A scalar's text exactly as written (so `no`, `007` or `1e3` stay strings)."""
        if not isinstance(node, yaml.ScalarNode):
            self.add(node, where, "expected text")
            return None
        if _is_null(node):
            if required:
                self.add(node, where, "must not be empty")
                return None
            return ""
        return node.value

    def ident(self, node: yaml.Node, where: str) -> str | None:
        value = self.text(node, where, required=True)
        if value is None:
            return None
        if not _is_id(value):
            self.add(node, where, f"id {value!r} must be non-empty without spaces")
            return None
        return value

    def integer(self, node: yaml.Node, where: str) -> int | None:
        if (
            not isinstance(node, yaml.ScalarNode)
            or node.style not in ("", None)
            or not _PLAIN_INT.fullmatch(node.value)
        ):
            shown = node.value if isinstance(node, yaml.ScalarNode) else "a collection"
            self.add(node, where, f"{shown!r} is not an integer")
            return None
        return int(node.value)

    def names(self, node: yaml.Node, where: str) -> list[str] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.add(node, where, "expected a list of names, e.g. [alice]")
            return None
        out: list[str] = []
        for i, item in enumerate(node.value):
            name = self.ident(item, f"{where}[{i}]")
            if name is not None:
                out.append(name)
        return out

    def data(self, node: yaml.Node, where: str) -> Any:
        """Free-form data (coverage, disagreements, pool params) as plain Python."""
        _resolve_tags(node)
        self._check_duplicates(node, where)
        return yaml.constructor.SafeConstructor().construct_object(node, deep=True)

    def _check_duplicates(self, node: yaml.Node, where: str) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    self.add(key_node, where, "mapping keys must be plain values")
                    continue
                key = (key_node.tag, key_node.value)
                if key in seen:
                    self.add(key_node, f"{where}.{key_node.value}", "duplicate key")
                seen.add(key)
                self._check_duplicates(value_node, f"{where}.{key_node.value}")
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._check_duplicates(item, f"{where}[{i}]")


_RESOLVER = yaml.resolver.Resolver()


def _resolve_tags(node: yaml.Node) -> None:
    """Give a free-form subtree the tags YAML's safe schema would (plain scalars resolved,
    quoted ones strings), so SafeConstructor can build it."""
    if isinstance(node, yaml.ScalarNode):
        if node.tag is None:
            node.tag = _RESOLVER.resolve(yaml.ScalarNode, node.value, (not node.style, False))
    elif isinstance(node, yaml.MappingNode):
        node.tag = "tag:yaml.org,2002:map"
        for key_node, value_node in node.value:
            _resolve_tags(key_node)
            _resolve_tags(value_node)
    elif isinstance(node, yaml.SequenceNode):
        node.tag = "tag:yaml.org,2002:seq"
        for item in node.value:
            _resolve_tags(item)


_NULL_WORDS = frozenset({"", "~", "null", "Null", "NULL"})


def _is_null(node: yaml.Node) -> bool:
    """A plain `null`, `~` or empty value (what YAML resolves to null)."""
    return isinstance(node, yaml.ScalarNode) and not node.style and node.value in _NULL_WORDS


TOP_KEYS = (
    "schema", "version", "name", "description", "grade_scale", "annotators", "pool",
    "aliases", "coverage", "disagreements", "queries",
)  # fmt: skip
POOL_KEYS = ("systems", "depth", "strategy", "seed", "params")
QUERY_KEYS = ("id", "text", "narrative", "judgments")
JUDGMENT_KEYS = ("doc", "grade", "by", "note")
ANNOTATOR_KEYS = ("name", "role")


def read_golden(path: str | os.PathLike[str]) -> Golden:
    text = read_text(path)
    reader = _Reader(str(path))
    with _gc_paused():
        root = _compose(text, reader)
    reader.problems.raise_if_any()
    if root is None:
        reader.add(None, "", "empty file (expected a workbench-golden mapping)")
        reader.problems.raise_if_any()
    assert root is not None
    top = reader.mapping(root, "", TOP_KEYS, required=("schema", "version", "queries"))
    if top is None:
        reader.problems.raise_if_any()
    assert top is not None
    golden = Golden(name="")

    if "schema" in top:
        schema = reader.text(top["schema"], "schema", required=True)
        if schema is not None and schema != SCHEMA:
            reader.add(top["schema"], "schema", f"expected {SCHEMA!r}, found {schema!r}")
    if "version" in top:
        version = reader.integer(top["version"], "version")
        if version is not None and version != VERSION:
            reader.add(
                top["version"], "version", f"unsupported version {version} (this reads {VERSION})"
            )
    if "name" in top:
        golden.name = reader.text(top["name"], "name", required=False) or ""
    if "description" in top:
        golden.description = reader.text(top["description"], "description", required=False) or ""
    if "grade_scale" in top:
        golden.grade_scale = _read_scale(reader, top["grade_scale"])
    if "annotators" in top:
        golden.annotators = _read_annotators(reader, top["annotators"])
    if "pool" in top:
        golden.pool = _read_pool(reader, top["pool"])
    if "aliases" in top:
        golden.aliases = _read_aliases(reader, top["aliases"])
    if "coverage" in top and not _is_null(top["coverage"]):
        if isinstance(top["coverage"], yaml.MappingNode):
            golden.coverage = reader.data(top["coverage"], "coverage")
        else:
            reader.add(top["coverage"], "coverage", "expected a mapping or null")
    if "disagreements" in top:
        for i, item in enumerate(reader.sequence(top["disagreements"], "disagreements")):
            if isinstance(item, yaml.MappingNode):
                golden.disagreements.append(reader.data(item, f"disagreements[{i}]"))
            else:
                reader.add(item, f"disagreements[{i}]", "expected a mapping")
    if "queries" in top:
        _read_queries(reader, top["queries"], golden)
    reader.problems.raise_if_any()
    return golden


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Building ~10 nodes per judged pair makes the cyclic GC rescan the growing tree again
    and again (3-4x slower on 50,000 pairs); nothing here creates cycles worth collecting."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _compose(text: str, reader: _Reader) -> yaml.Node | None:
    """One YAML document as a node tree built straight from the parser's events (PyYAML's own
    composer resolves every scalar in Python and is 4x slower on a big golden set). Tags,
    anchors and aliases are refused (plain data only); scalar tags are left unresolved (None):
    the reader interprets each field itself, and `_Reader.data` resolves free-form parts."""
    root: yaml.Node | None = None
    stack: list[yaml.Node] = []
    pending_key: list[yaml.Node | None] = []
    documents = 0
    add = reader.problems.add
    try:
        for event in yaml.parse(text, Loader=_Loader):
            # PyYAML's stubs type a node's tag as str and its marks as the pure-Python Mark;
            # at run time a node takes None (unresolved) and the C parser's marks.
            if isinstance(event, yaml.ScalarEvent):
                node: yaml.Node = yaml.ScalarNode(
                    None,  # type: ignore[arg-type]
                    event.value,
                    event.start_mark,  # type: ignore[arg-type]
                    event.end_mark,  # type: ignore[arg-type]
                    event.style or "",
                )
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                node_class = (
                    yaml.MappingNode
                    if isinstance(event, yaml.MappingStartEvent)
                    else yaml.SequenceNode
                )
                node = node_class(
                    None,  # type: ignore[arg-type]
                    [],
                    event.start_mark,  # type: ignore[arg-type]
                    event.end_mark,  # type: ignore[arg-type]
                    event.flow_style,
                )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                pending_key.pop()
                continue
            elif isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    add(_event_line(event), "only one YAML document is allowed")
                continue
            elif isinstance(event, yaml.AliasEvent):
                add(_event_line(event), "YAML anchors and aliases are not allowed")
                continue
            else:
                continue
            if event.tag is not None:
                add(
                    _event_line(event),
                    f"YAML tag {event.tag!r} is not allowed (plain data only)",
                )
            if event.anchor is not None:
                add(_event_line(event), "YAML anchors and aliases are not allowed")
            if not stack:
                root = node
            else:
                parent = stack[-1]
                if type(parent) is yaml.SequenceNode:
                    parent.value.append(node)
                elif pending_key[-1] is None:
                    pending_key[-1] = node
                else:
                    parent.value.append((pending_key[-1], node))
                    pending_key[-1] = None
            if not isinstance(event, yaml.ScalarEvent):
                stack.append(node)
                pending_key.append(None)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        add(line, f"not valid YAML: {exc.problem or exc.context}")
        return None
    except yaml.YAMLError as exc:
        add(None, f"not valid YAML: {exc}")
        return None
    return None if reader.problems.count else root


def _read_scale(reader: _Reader, node: yaml.Node) -> dict[int, str]:
    if not isinstance(node, yaml.MappingNode) or not node.value:
        reader.add(
            node, "grade_scale", "expected a mapping grade -> wording, e.g. {0: not relevant}"
        )
        return dict(DEFAULT_GRADE_SCALE)
    scale: dict[int, str] = {}
    for key_node, value_node in node.value:
        grade = reader.integer(key_node, "grade_scale")
        wording = reader.text(value_node, f"grade_scale.{key_node.value}", required=True)
        if grade is None or wording is None:
            continue
        if grade in scale:
            reader.add(key_node, f"grade_scale.{grade}", "duplicate key")
            continue
        scale[grade] = wording
    return scale


def _read_annotators(reader: _Reader, node: yaml.Node) -> list[dict]:
    annotators: list[dict] = []
    seen: set[str] = set()
    for i, item in enumerate(reader.sequence(node, "annotators")):
        where = f"annotators[{i}]"
        fields = reader.mapping(item, where, ANNOTATOR_KEYS, required=("name",))
        if fields is None or "name" not in fields:
            continue
        name = reader.ident(fields["name"], f"{where}.name")
        role = "human"
        if "role" in fields:
            role = reader.text(fields["role"], f"{where}.role", required=True) or "human"
            if role not in ROLES:
                reader.add(
                    fields["role"], f"{where}.role", f"{role!r} is not one of {', '.join(ROLES)}"
                )
        if name is None:
            continue
        if name in seen:
            reader.add(fields["name"], f"{where}.name", f"annotator {name!r} listed twice")
            continue
        seen.add(name)
        annotators.append({"name": name, "role": role})
    return annotators


def _read_pool(reader: _Reader, node: yaml.Node) -> dict | None:
    if _is_null(node):
        return None
    fields = reader.mapping(node, "pool", POOL_KEYS, required=("systems", "depth", "strategy"))
    if fields is None:
        return None
    pool: dict[str, Any] = {}
    if "systems" in fields:
        pool["systems"] = reader.names(fields["systems"], "pool.systems") or []
    if "depth" in fields:
        pool["depth"] = reader.integer(fields["depth"], "pool.depth")
    if "strategy" in fields:
        pool["strategy"] = reader.text(fields["strategy"], "pool.strategy", required=True)
    if "seed" in fields:
        pool["seed"] = (
            None if _is_null(fields["seed"]) else reader.integer(fields["seed"], "pool.seed")
        )
    if "params" in fields:
        params = reader.data(fields["params"], "pool.params")
        if not isinstance(params, dict):
            reader.add(fields["params"], "pool.params", "expected a mapping")
        pool["params"] = params
    return pool


def _read_aliases(reader: _Reader, node: yaml.Node) -> dict[str, str]:
    if _is_null(node):
        return {}
    if not isinstance(node, yaml.MappingNode):
        reader.add(node, "aliases", "expected a mapping alias id -> canonical id")
        return {}
    aliases: dict[str, str] = {}
    for key_node, value_node in node.value:
        alias = reader.ident(key_node, "aliases")
        canonical = reader.ident(value_node, f"aliases.{getattr(key_node, 'value', '?')}")
        if alias is None or canonical is None:
            continue
        if alias in aliases:
            reader.add(key_node, f"aliases.{alias}", "duplicate key")
        elif alias == canonical:
            reader.add(key_node, f"aliases.{alias}", "a doc cannot be its own alias")
        else:
            aliases[alias] = canonical
    for alias, canonical in aliases.items():
        if canonical in aliases:
            reader.add(
                node,
                f"aliases.{alias}",
                f"canonical id {canonical!r} is itself an alias (no chains)",
            )
    return aliases


def _read_queries(reader: _Reader, node: yaml.Node, golden: Golden) -> None:
    names = {a["name"] for a in golden.annotators}
    scale = golden.grade_scale
    query_line: dict[str, int] = {}
    for i, item in enumerate(reader.sequence(node, "queries")):
        where = f"queries[{i}]"
        fields = reader.mapping(item, where, QUERY_KEYS, required=("id", "text"))
        if fields is None or "id" not in fields:
            continue
        qid = reader.ident(fields["id"], f"{where}.id")
        text = (
            reader.text(fields["text"], f"{where}.text", required=False) if "text" in fields else ""
        )
        narrative = ""
        if "narrative" in fields:
            narrative = reader.text(fields["narrative"], f"{where}.narrative", required=False) or ""
        if qid is None:
            continue
        if qid in query_line:
            reader.add(
                fields["id"],
                f"{where}.id",
                f"query {qid!r} listed twice (first on line {query_line[qid]})",
            )
            continue
        query_line[qid] = item.start_mark.line + 1
        golden.queries.append(Query(query_id=qid, text=text or "", narrative=narrative))
        judged = golden.qrels.setdefault(qid, {})
        judgments = (
            reader.sequence(fields["judgments"], f"{where}.judgments")
            if "judgments" in fields
            else []
        )
        seen_docs: set[str | None] = set()
        for j, judgment in enumerate(judgments):
            jwhere = f"{where}.judgments[{j}]"
            jfields = reader.mapping(judgment, jwhere, JUDGMENT_KEYS, required=("doc", "grade"))
            if jfields is None or "doc" not in jfields or "grade" not in jfields:
                continue
            doc_id = reader.ident(jfields["doc"], f"{jwhere}.doc")
            grade = reader.integer(jfields["grade"], f"{jwhere}.grade")
            if grade is not None and grade not in scale:
                reader.add(
                    jfields["grade"], f"{jwhere}.grade",
                    f"grade {grade} is outside the grade scale {sorted(scale)}",
                )  # fmt: skip
                grade = None
            by = reader.names(jfields["by"], f"{jwhere}.by") if "by" in jfields else []
            if by and names:
                for name in by:
                    if name not in names:
                        reader.add(jfields["by"], f"{jwhere}.by", f"{name!r} is not in annotators")
            note = (
                reader.text(jfields["note"], f"{jwhere}.note", required=False)
                if "note" in jfields
                else ""
            )
            if doc_id is not None and doc_id in seen_docs:
                reader.add(
                    jfields["doc"],
                    f"{jwhere}.doc",
                    f"doc {doc_id!r} judged twice for query {qid!r}",
                )
                continue
            seen_docs.add(doc_id)
            if doc_id is None or grade is None:
                continue
            judged[doc_id] = grade
            if by:
                golden.judged_by[(qid, doc_id)] = by
            if note:
                golden.notes[(qid, doc_id)] = note


# -- writing ------------------------------------------------------------------------------------

_PLAIN_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/#]*")
_RESERVED = frozenset(
    "y n yes no true false on off null".split()
)  # YAML 1.1 words that would not read back as strings


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # never write anchors: the reader refuses them
        return True


def _event_line(event: yaml.Event) -> int | None:
    """The 1-based line an event starts on (None if the parser gave it no mark)."""
    mark = event.start_mark
    return mark.line + 1 if mark is not None else None


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
        _plain(data), Dumper=_Dumper, allow_unicode=True, width=math.inf,
        default_flow_style=True, sort_keys=False,
    )  # fmt: skip
    return dumped[: -len("\n...\n")] if dumped.endswith("\n...\n") else dumped.rstrip("\n")


def _block(data: Any, indent: str) -> list[str]:
    dumped = yaml.dump(
        _plain(data), Dumper=_Dumper, allow_unicode=True, width=math.inf,
        default_flow_style=False, sort_keys=False,
    )  # fmt: skip
    return [f"{indent}{line}" for line in dumped.rstrip("\n").split("\n")]


def _plain(data: Any) -> Any:
    """Tuples as lists, numpy scalars as Python numbers: only plain YAML types get written."""
    if isinstance(data, dict):
        return {_plain(k): _plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_plain(v) for v in data]
    if hasattr(data, "item") and not isinstance(data, (str, bytes, int, float, bool)):
        return data.item()
    return data


def golden_text(golden: Golden) -> str:
    """The YAML text `write_golden` writes (deterministic: queries in their order, judgments
    by doc id)."""
    problems = _check_writable(golden)
    if problems:
        raise InputError(problems)
    out = [f"schema: {SCHEMA}", f"version: {VERSION}", f"name: {_text(golden.name)}"]
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
    if golden.pool is None:
        out.append("pool: null")
    else:
        pool = golden.pool
        out.append("pool:")
        out.append(f"  systems: [{', '.join(_scalar(s) for s in pool.get('systems', []))}]")
        out.append(f"  depth: {int(pool['depth'])}")
        out.append(f"  strategy: {_scalar(pool['strategy'])}")
        if "seed" in pool:
            out.append(f"  seed: {'null' if pool['seed'] is None else int(pool['seed'])}")
        if pool.get("params"):
            out.append("  params:")
            out.extend(_block(pool["params"], "    "))
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
        out.append("coverage:")
        out.extend(_block(golden.coverage, "  "))
    if golden.disagreements:
        out.append("disagreements:")
        out.extend(f"  - {_flow(d)}" for d in golden.disagreements)
    else:
        out.append("disagreements: []")
    out.append("queries:" if golden.queries else "queries: []")
    for query in golden.queries:
        qid = query.query_id
        out.append(f"  - id: {_scalar(qid)}")
        out.append(f"    text: {_text(query.text)}")
        if query.narrative:
            out.append(f"    narrative: {_text(query.narrative)}")
        judged = golden.qrels.get(qid, {})
        if not judged:
            out.append("    judgments: []")
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
            out.append(f"      - {{{', '.join(parts)}}}")
    return "".join(f"{line}\n" for line in out)


def write_golden(path: str | os.PathLike[str], golden: Golden) -> None:
    atomic_write_text(path, golden_text(golden))


def _check_writable(golden: Golden) -> list[str]:
    """What the reader would refuse, refused before anything is written."""
    problems: list[str] = []
    query_ids = {q.query_id for q in golden.queries}
    problems.extend(
        f"golden: query id {qid!r} is empty or has spaces" for qid in query_ids if not _is_id(qid)
    )
    if len(query_ids) != len(golden.queries):
        problems.append("golden: duplicate query ids")
    for qid in golden.qrels:
        if golden.qrels[qid] and qid not in query_ids:
            problems.append(f"golden: judgments for query {qid!r} which is not in queries")
    for qid, judged in golden.qrels.items():
        for doc_id, grade in judged.items():
            if not _is_id(doc_id):
                problems.append(f"golden: query {qid!r}: doc id {doc_id!r} is empty or has spaces")
            if grade not in golden.grade_scale:
                problems.append(
                    f"golden: query {qid!r} doc {doc_id!r}: grade {grade} is outside the grade "
                    f"scale {sorted(golden.grade_scale)}"
                )
    if golden.pool is not None:
        missing = [k for k in ("systems", "depth", "strategy") if golden.pool.get(k) is None]
        if missing:
            problems.append(f"golden: pool lacks {', '.join(missing)}")
    return problems


def _is_id(value: str) -> bool:
    return bool(value) and value.strip() == value and len(value.split()) == 1


# -- judgments from either format ---------------------------------------------------------------


def load_judgments(path: str | os.PathLike[str]) -> tuple[Qrels, Golden | None]:
    """A golden.yaml (.yaml/.yml; its qrels with aliases expanded, matching the TREC export)
    or TREC qrels."""
    if str(path).lower().endswith((".yaml", ".yml")):
        golden = read_golden(path)
        return golden.expanded_qrels(), golden
    from workbench.formats.trec import read_qrels

    return read_qrels(path), None
