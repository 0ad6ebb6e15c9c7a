"""Strict YAML: one document composed into a node tree, and a reader of its fields that names
each problem with its line and key path.

Tags, anchors and aliases are refused (plain data only); scalars stay unresolved text, so each
field is interpreted by the reader that knows what it should hold (`no`, `007`, `1e3` stay
strings unless a field asks for an integer)."""

from __future__ import annotations

import bisect
import re
from typing import Any

import yaml

from workbench.core.errors import ProblemCollector, quoted
from workbench.core.limits import length_problem
from workbench.formats.textio import has_surrogate, id_problem, int_problem, nfc, plain_int

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DEPTH = 64
"""How deep mappings and lists may nest (golden.yaml needs 5 levels; deeper is hostile)."""

_NULL_WORDS = frozenset({"", "~", "null", "Null", "NULL"})


def key_path(where: str, key: str) -> str:
    """`where.key`, the key cut at 40 characters (a key path names it, not reprints it)."""
    key = key if len(key) <= 40 else f"{key[:40]}…"
    return f"{where}.{key}" if where else key


def is_null(node: yaml.Node) -> bool:
    """A plain `null`, `~` or empty value (what YAML resolves to null)."""
    return isinstance(node, yaml.ScalarNode) and not node.style and node.value in _NULL_WORDS


class NodeReader:
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
            path = key_path(where, "None" if key is None else key)
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
        if is_null(node):
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.add(node, where, "expected a list")
            return []
        return list(node.value)

    def text(
        self, node: yaml.Node, where: str, *, required: bool, limit: int | None = None
    ) -> str | None:
        """A scalar's text exactly as written (so `no`, `007` or `1e3` stay strings), at most
        `limit` characters long."""
        if not isinstance(node, yaml.ScalarNode):
            self.add(node, where, "expected text")
            return None
        if is_null(node):
            if required:
                self.add(node, where, "must not be empty")
                return None
            return ""
        if has_surrogate(node.value):
            self.add(node, where, "not valid Unicode (lone surrogate)")
            return None
        too_long = length_problem(node.value, limit) if limit is not None else None
        if too_long:
            self.add(node, where, too_long)
            return None
        return node.value

    def ident(self, node: yaml.Node, where: str) -> str | None:
        """An id, taken in NFC (`textio.nfc`)."""
        value = self.text(node, where, required=True)
        if value is None:
            return None
        value = nfc(value)
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


def compose(text: str, reader: NodeReader) -> yaml.Node | None:
    """One YAML document as a node tree built straight from the parser's events (PyYAML's own
    composer resolves every scalar in Python and is 4x slower on a big golden set); None, with
    the problems added to `reader`, when the text is not plain, valid YAML."""
    add = reader.problems.add
    try:
        root = _build(text, reader)
    except yaml.MarkedYAMLError as exc:
        add(
            reader.line(exc.problem_mark or exc.context_mark),
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


def _build(text: str, reader: NodeReader) -> yaml.Node | None:
    """The node tree of `compose`, event by event; scalar tags are left unresolved (None)."""
    root: yaml.Node | None = None
    stack: list[yaml.Node] = []
    pending_key: list[yaml.Node | None] = []
    documents = 0
    add = reader.problems.add
    line = reader.line
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
            if len(stack) >= MAX_DEPTH:
                add(line(event.start_mark), f"nested deeper than {MAX_DEPTH} levels")
                return None
            node = _collection_node(event)
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
    return root


def _collection_node(event: yaml.MappingStartEvent | yaml.SequenceStartEvent) -> yaml.Node:
    node_class = (
        yaml.MappingNode if isinstance(event, yaml.MappingStartEvent) else yaml.SequenceNode
    )
    return node_class(
        None,  # type: ignore[arg-type]
        [],
        event.start_mark,  # type: ignore[arg-type]
        event.end_mark,  # type: ignore[arg-type]
        event.flow_style,
    )
