"""golden.yaml: the versioned, human-readable record of a finished judging round.

It keeps every judged pair (grade 0 included), who judged it, the grade scale and its wording,
the pool annotators saw, aliases, a coverage summary and the disagreements. Reading is strict:
YAML tags, anchors and aliases are refused, a repeated mapping key or an unknown key is a
problem naming its line and key path, and a grade outside the declared scale is an error. The
writer emits one line per judged pair, so a regrade is a one-line diff."""

from __future__ import annotations

import bisect
import gc
import math
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import yaml

from workbench.core.errors import InputError, ProblemCollector, quoted
from workbench.core.model import DEFAULT_GRADE_SCALE, Qrels, Query, Role
from workbench.formats.atomic import atomic_write_text
from workbench.formats.textio import (
    INT64,
    has_surrogate,
    id_problem,
    int_problem,
    plain_int,
    read_text,
)

SCHEMA = "workbench-golden"
VERSION = 1
ROLES = tuple(Role)
"""Every role the store writes (see `model.Role`)."""

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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

    def __init__(self, path: str, text: str):
        self.problems = ProblemCollector(path)
        self.source = text
        self._line_ends: list[int] | None = None

    def line(self, mark: Any) -> int | None:
        """The 1-based line of a YAML mark, counting '\n' as editors do (YAML also breaks
        lines at a lone CR, NEL, U+2028 and U+2029, which would shift every later line)."""
        if mark is None:
            return None
        if self._line_ends is None:
            self._line_ends = [m.start() for m in re.finditer("\n", self.source)]
        return bisect.bisect_left(self._line_ends, mark.index) + 1

    def add(self, node: yaml.Node | None, where: str, message: str) -> None:
        line = self.line(node.start_mark) if node is not None else None
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
            path = _path(where, "None" if key is None else key)
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
        if has_surrogate(node.value):
            self.add(node, where, "not valid Unicode (lone surrogate)")
            return None
        return node.value

    def ident(self, node: yaml.Node, where: str) -> str | None:
        value = self.text(node, where, required=True)
        if value is None:
            return None
        problem = id_problem(value)
        if problem:
            self.add(node, where, f"id {quoted(value)} {problem}")
            return None
        return value

    def integer(self, node: yaml.Node, where: str) -> int | None:
        """A plain (unquoted) `textio.PLAIN_INT` within 64 bits."""
        if not isinstance(node, yaml.ScalarNode):
            self.add(node, where, "'a collection' is not an integer")
            return None
        plain = node.style in ("", None)
        value = plain_int(node.value) if plain else None
        if value is None:
            problem = int_problem(node.value) if plain else "is not an integer"
            self.add(node, where, f"{quoted(node.value)} {problem}")
        return value

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
        """Free-form data (coverage, disagreements, pool params) as plain Python: null,
        booleans, 64-bit integers, finite floats, strings (a YAML 1.1 date stays its text),
        lists, and mappings with scalar keys. Anything else, or a repeated key, is a problem
        and is left out. `_compose` bounds the depth of this recursion."""
        value = self._data(node, where)
        return None if value is _BAD else value

    def _data(self, node: yaml.Node, where: str) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return self._scalar_data(node, where)
        if isinstance(node, yaml.SequenceNode):
            items = [self._data(item, f"{where}[{i}]") for i, item in enumerate(node.value)]
            return [item for item in items if item is not _BAD]
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self.add(key_node, where, "mapping keys must be plain values")
                continue
            path = _path(where, key_node.value)
            key = self._scalar_data(key_node, path)
            if key is _BAD:
                continue
            if key in out:
                self.add(key_node, path, "duplicate key")
                continue
            value = self._data(value_node, path)
            if value is not _BAD:
                out[key] = value
        return out

    def _scalar_data(self, node: yaml.ScalarNode, where: str) -> Any:
        value, problem = _plain_scalar(node)
        if problem:
            self.add(node, where, problem)
        return value


def _plain_scalar(node: yaml.ScalarNode) -> tuple[Any, str | None]:
    """(value, None) for a scalar of free-form data, as YAML's safe schema reads it; (_BAD,
    why) when it is not plain data (a merge key, an unreadable or non-finite number, a number
    beyond 64 bits, a lone surrogate)."""
    text = node.value
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (not node.style, False))
    if tag in (_STR, _TIMESTAMP):
        if has_surrogate(text):
            return _BAD, "not valid Unicode (lone surrogate)"
        return text, None
    if tag == _INT and len(text) > 30:
        return _BAD, f"{quoted(text)} is out of range (a 64-bit integer)"
    construct = _CONSTRUCTORS.get(tag)
    if construct is None:  # a merge key (<<) or a value key (=)
        return _BAD, f"{quoted(text)} is not plain data (a YAML merge key)"
    try:
        value = construct(_CONSTRUCTOR, node)
    except (ValueError, TypeError, OverflowError, yaml.YAMLError):
        return _BAD, f"{quoted(text)} is not a number YAML can read"
    if type(value) is int and value not in INT64:
        return _BAD, f"{quoted(text)} is out of range (a 64-bit integer)"
    if type(value) is float and not math.isfinite(value):
        return _BAD, f"{quoted(text)} is not a finite number"
    return value, None


_BAD = object()
"""A free-form value the reader refused (its problem already added)."""
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_CONSTRUCTORS: dict[str, Callable[[Any, yaml.ScalarNode], Any]] = {
    "tag:yaml.org,2002:null": yaml.constructor.SafeConstructor.construct_yaml_null,
    "tag:yaml.org,2002:bool": yaml.constructor.SafeConstructor.construct_yaml_bool,
    _INT: yaml.constructor.SafeConstructor.construct_yaml_int,
    "tag:yaml.org,2002:float": yaml.constructor.SafeConstructor.construct_yaml_float,
}
_MAX_DEPTH = 64
"""How deep mappings and lists may nest (golden.yaml needs 5 levels; deeper is hostile)."""


def _path(where: str, key: str) -> str:
    """`where.key`, the key cut at 40 characters (a key path names it, not reprints it)."""
    key = key if len(key) <= 40 else f"{key[:40]}…"
    return f"{where}.{key}" if where else key


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
    reader = _Reader(str(path), text)
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
            reader.add(top["schema"], "schema", f"expected {SCHEMA!r}, found {quoted(schema)}")
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
            _check_coverage(reader, top["coverage"])
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
    line = reader.line
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
                if len(stack) >= _MAX_DEPTH:
                    add(line(event.start_mark), f"nested deeper than {_MAX_DEPTH} levels")
                    return None
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
                    add(line(event.start_mark), "only one YAML document is allowed")
                continue
            elif isinstance(event, yaml.AliasEvent):
                add(line(event.start_mark), "YAML anchors and aliases are not allowed")
                continue
            else:
                continue
            if event.tag is not None:
                add(
                    line(event.start_mark),
                    f"YAML tag {quoted(event.tag)} is not allowed (plain data only)",
                )
            if event.anchor is not None:
                add(line(event.start_mark), "YAML anchors and aliases are not allowed")
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
        add(
            line(exc.problem_mark or exc.context_mark),
            f"not valid YAML: {exc.problem or exc.context}",
        )
        return None
    except yaml.reader.ReaderError as exc:  # a control character (no mark; a byte offset in C)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        first = text.find(chr(code))  # the reader stops at the first one
        add(
            text.count("\n", 0, first) + 1 if first >= 0 else None,
            f"not valid YAML: {exc.reason} (U+{code:04X})",
        )
        return None
    except yaml.YAMLError as exc:
        add(None, f"not valid YAML: {exc}")
        return None
    return None if reader.problems.count else root


COVERAGE_STATUSES = ("complete", "incomplete", "unmeasured")
_COVERAGE_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # block: (counts, figures), as coverage.summary_for_store writes them
    "queries.*": (
        ("pool", "judged", "relevant"),
        ("est_rel", "est_rel_low", "est_rel_high", "completeness", "completeness_low"),
    ),
    "summary": (
        ("queries", "complete", "incomplete", "unmeasured", "pool", "judged", "relevant",
         "corpus_size"),
        ("est_rel", "mean_completeness", "median_completeness", "mean_completeness_low",
         "mean_label_coverage", "mean_last_quarter_share"),
    ),
    "thresholds": (("min_samples",), ("complete_at", "level")),
}  # fmt: skip


def _check_coverage(reader: _Reader, node: yaml.MappingNode) -> None:
    """The coverage block's figures, each named with its line: a count is a non-negative
    integer, a figure a non-negative number, either may be null; a query's status is one of
    COVERAGE_STATUSES. Other keys are free-form (and, like all data, finite)."""
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        where = _path("coverage", str(key))
        if key not in ("queries", "summary", "thresholds") or _is_null(value_node):
            continue
        if not isinstance(value_node, yaml.MappingNode):
            reader.add(value_node, where, "expected a mapping")
            continue
        if key != "queries":
            _check_figures(reader, value_node, where, *_COVERAGE_FIELDS[key])
            continue
        for qid_node, row in value_node.value:
            row_where = _path(
                where, qid_node.value if isinstance(qid_node, yaml.ScalarNode) else "?"
            )
            if not isinstance(row, yaml.MappingNode):
                reader.add(row, row_where, "expected a mapping of figures")
                continue
            _check_figures(reader, row, row_where, *_COVERAGE_FIELDS["queries.*"])
            for field_node, status in row.value:
                if getattr(field_node, "value", None) != "status":
                    continue
                value = _plain_scalar(status)[0] if isinstance(status, yaml.ScalarNode) else None
                if value not in COVERAGE_STATUSES and value is not _BAD:
                    shown = (
                        quoted(status.value)
                        if isinstance(status, yaml.ScalarNode)
                        else "a collection"
                    )
                    reader.add(
                        status, f"{row_where}.status",
                        f"{shown} is not one of {', '.join(COVERAGE_STATUSES)}",
                    )  # fmt: skip


def _check_figures(
    reader: _Reader,
    node: yaml.MappingNode,
    where: str,
    counts: tuple[str, ...],
    figures: tuple[str, ...],
) -> None:
    for key_node, value_node in node.value:
        key = getattr(key_node, "value", None)
        if key not in counts and key not in figures:
            continue
        field_where = _path(where, key)
        if not isinstance(value_node, yaml.ScalarNode):
            reader.add(value_node, field_where, "expected a number or null")
            continue
        value, problem = _plain_scalar(value_node)
        if problem or value is None:  # a refused value was reported already
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key in counts and (not number or type(value) is not int or value < 0):
            reader.add(value_node, field_where, f"{quoted(value_node.value)} is not a count (an "
                       "integer >= 0) or null")  # fmt: skip
        elif key in figures and (not number or value < 0):
            reader.add(value_node, field_where, f"{quoted(value_node.value)} is not a number "
                       ">= 0 or null")  # fmt: skip


def _read_scale(reader: _Reader, node: yaml.Node) -> dict[int, str]:
    if not isinstance(node, yaml.MappingNode) or not node.value:
        reader.add(
            node, "grade_scale", "expected a mapping grade -> wording, e.g. {0: not relevant}"
        )
        return dict(DEFAULT_GRADE_SCALE)
    scale: dict[int, str] = {}
    for key_node, value_node in node.value:
        grade = reader.integer(key_node, "grade_scale")
        wording = reader.text(value_node, _path("grade_scale", key_node.value), required=True)
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
        role: str = Role.HUMAN
        if "role" in fields:
            role = reader.text(fields["role"], f"{where}.role", required=True) or Role.HUMAN
            if role not in ROLES:
                reader.add(
                    fields["role"],
                    f"{where}.role",
                    f"{quoted(role)} is not one of {', '.join(ROLES)}",
                )
        if name is None:
            continue
        if name in seen:
            reader.add(fields["name"], f"{where}.name", f"annotator {quoted(name)} listed twice")
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
            reader.add(key_node, _path("aliases", alias), "duplicate key")
        elif alias == canonical:
            reader.add(key_node, _path("aliases", alias), "a doc cannot be its own alias")
        else:
            aliases[alias] = canonical
    for alias, canonical in aliases.items():
        if canonical in aliases:
            reader.add(
                node,
                _path("aliases", alias),
                f"canonical id {quoted(canonical)} is itself an alias (no chains)",
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
                f"query {quoted(qid)} listed twice (first on line {query_line[qid]})",
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
                        reader.add(
                            jfields["by"], f"{jwhere}.by", f"{quoted(name)} is not in annotators"
                        )
            note = (
                reader.text(jfields["note"], f"{jwhere}.note", required=False)
                if "note" in jfields
                else ""
            )
            if doc_id is not None and doc_id in seen_docs:
                reader.add(
                    jfields["doc"],
                    f"{jwhere}.doc",
                    f"doc {quoted(doc_id)} judged twice for query {quoted(qid)}",
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
    """Tuples as lists, numpy scalars as Python numbers, enum words as plain text: only plain
    YAML types get written."""
    if isinstance(data, str):
        return str(data)
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
        block = ["coverage:", *_block(golden.coverage, "  ")]
        _check_coverage_reads_back(block, golden.coverage)
        out.extend(block)
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


def _check_coverage_reads_back(block: list[str], coverage: Any) -> None:
    """Read the written coverage block back as the reader does (it is small): its figures
    must pass `_check_coverage`, and the data must come back equal."""
    text = "".join(f"{line}\n" for line in block)
    reader = _Reader("golden", text)
    root = _compose(text, reader)
    if isinstance(root, yaml.MappingNode) and isinstance(root.value[0][1], yaml.MappingNode):
        back = reader.data(root.value[0][1], "coverage")
        _check_coverage(reader, root.value[0][1])
        if not reader.problems.count and back != _plain(coverage):
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
    free-form data that is not plain (see `_data_problems`), a grade outside the scale."""
    problems: list[str] = []
    texts: list[tuple[str, str]] = [("name", golden.name), ("description", golden.description)]
    ids: list[tuple[str, str]] = []
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
        problems.extend(_data_problems(pool.get("params"), "pool.params"))
    for alias, canonical in golden.aliases.items():
        ids.extend([("aliases", alias), (_path("aliases", str(alias)), canonical)])
    problems.extend(_data_problems(golden.coverage, "coverage"))
    for i, item in enumerate(golden.disagreements):
        problems.extend(_data_problems(item, f"disagreements[{i}]"))
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


def _data_problems(data: Any, where: str) -> list[str]:
    """Why free-form `data` would not read back as itself: only null, booleans, 64-bit
    integers, finite floats, valid strings, lists and mappings with such scalar keys are
    plain data (what `_Reader.data` returns)."""
    problems: list[str] = []
    stack: list[tuple[str, Any, int]] = [(where, _plain(data), 0)]
    while stack and len(problems) < 20:
        at, value, depth = stack.pop()
        if depth > _MAX_DEPTH - 4:
            problems.append(f"golden: {at}: nested too deeply")
        elif isinstance(value, str):
            if has_surrogate(value):
                problems.append(f"golden: {at}: not valid Unicode (lone surrogate)")
        elif value is None or isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if value not in INT64:
                problems.append(f"golden: {at}: {quoted(value)} is not a 64-bit integer")
        elif isinstance(value, float):
            if not math.isfinite(value):
                problems.append(f"golden: {at}: {quoted(value)} is not a finite number")
        elif isinstance(value, list):
            stack.extend((f"{at}[{i}]", item, depth + 1) for i, item in enumerate(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                key_at = _path(at, key) if isinstance(key, str) else f"{at}.{quoted(key)}"
                if key is not None and not isinstance(key, (str, int, float)):
                    problems.append(f"golden: {key_at}: a key must be text or a number")
                else:
                    stack.append((f"{key_at} (key)", key, depth + 1))
                stack.append((key_at, item, depth + 1))
        else:
            problems.append(f"golden: {at}: {type(value).__name__} is not plain data")
    return problems


# -- judgments from either format ---------------------------------------------------------------


def load_judgments(path: str | os.PathLike[str]) -> tuple[Qrels, Golden | None]:
    """A golden.yaml (.yaml/.yml; its qrels with aliases expanded, matching the TREC export)
    or TREC qrels."""
    if str(path).lower().endswith((".yaml", ".yml")):
        golden = read_golden(path)
        return golden.expanded_qrels(), golden
    from workbench.formats.trec import read_qrels

    return read_qrels(path), None
