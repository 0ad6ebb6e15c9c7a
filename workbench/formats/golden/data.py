"""Free-form data in golden.yaml (coverage, disagreements, pool params): what plain data is,
read from YAML nodes and checked before writing.

Plain data is null, booleans, 64-bit integers, finite floats, valid strings (a YAML 1.1 date
stays its text), lists, and mappings with scalar keys."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import yaml

from workbench.core.errors import quoted
from workbench.formats.golden.yamlnodes import MAX_DEPTH, NodeReader, key_path
from workbench.formats.textio import INT64, has_surrogate

BAD = object()
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


def read_data(reader: NodeReader, node: yaml.Node, where: str) -> Any:
    """A node as plain Python data; anything else, or a repeated key, is a problem added to
    `reader` and is left out. `compose` bounds the depth of this recursion."""
    value = _data(reader, node, where)
    return None if value is BAD else value


def _data(reader: NodeReader, node: yaml.Node, where: str) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return _scalar_data(reader, node, where)
    if isinstance(node, yaml.SequenceNode):
        items = [_data(reader, item, f"{where}[{i}]") for i, item in enumerate(node.value)]
        return [item for item in items if item is not BAD]
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            reader.add(key_node, where, "mapping keys must be plain values")
            continue
        path = key_path(where, key_node.value)
        key = _scalar_data(reader, key_node, path)
        if key is BAD:
            continue
        if key in out:
            reader.add(key_node, path, "duplicate key")
            continue
        value = _data(reader, value_node, path)
        if value is not BAD:
            out[key] = value
    return out


def _scalar_data(reader: NodeReader, node: yaml.ScalarNode, where: str) -> Any:
    value, problem = plain_scalar(node)
    if problem:
        reader.add(node, where, problem)
    return value


def plain_scalar(node: yaml.ScalarNode) -> tuple[Any, str | None]:
    """(value, None) for a scalar of free-form data, as YAML's safe schema reads it; (BAD,
    why) when it is not plain data (a merge key, an unreadable or non-finite number, a number
    beyond 64 bits, a lone surrogate)."""
    text = node.value
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (not node.style, False))
    if tag in (_STR, _TIMESTAMP):
        if has_surrogate(text):
            return BAD, "not valid Unicode (lone surrogate)"
        return text, None
    if tag == _INT and len(text) > 30:
        return BAD, f"{quoted(text)} is out of range (a 64-bit integer)"
    construct = _CONSTRUCTORS.get(tag)
    if construct is None:  # a merge key (<<) or a value key (=)
        return BAD, f"{quoted(text)} is not plain data (a YAML merge key)"
    try:
        value = construct(_CONSTRUCTOR, node)
    except (ValueError, TypeError, OverflowError, yaml.YAMLError):
        return BAD, f"{quoted(text)} is not a number YAML can read"
    if type(value) is int and value not in INT64:
        return BAD, f"{quoted(text)} is out of range (a 64-bit integer)"
    if type(value) is float and not math.isfinite(value):
        return BAD, f"{quoted(text)} is not a finite number"
    return value, None


def plain(data: Any) -> Any:
    """Tuples as lists, numpy scalars as Python numbers, enum words as plain text: only plain
    YAML types get written."""
    if isinstance(data, str):
        return str(data)
    if isinstance(data, dict):
        return {plain(k): plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain(v) for v in data]
    if hasattr(data, "item") and not isinstance(data, (str, bytes, int, float, bool)):
        return data.item()
    return data


def data_problems(data: Any, where: str) -> list[str]:
    """Why free-form `data` would not read back as itself (at most about 20 reasons)."""
    problems: list[str] = []
    stack: list[tuple[str, Any, int]] = [(where, plain(data), 0)]
    while stack and len(problems) < 20:
        at, value, depth = stack.pop()
        if depth > MAX_DEPTH - 4:
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
                key_at = key_path(at, key) if isinstance(key, str) else f"{at}.{quoted(key)}"
                if key is not None and not isinstance(key, (str, int, float)):
                    problems.append(f"golden: {key_at}: a key must be text or a number")
                else:
                    stack.append((f"{key_at} (key)", key, depth + 1))
                stack.append((key_at, item, depth + 1))
        else:
            problems.append(f"golden: {at}: {type(value).__name__} is not plain data")
    return problems
