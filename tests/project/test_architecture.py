"""The package's shape holds: no import cycles (type-only imports included), no module over 400
lines, no function over ~60 lines without its reason beside it (`# long: why` on the line above
its `def`). The layers themselves are import-linter's contracts (pyproject.toml, `make test`)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

OVER_400: frozenset[str] = frozenset()
"""Modules still over the limit (none: keep it so)."""

LONG_WITHOUT_REASON: frozenset[str] = frozenset()
"""Functions still over the limit without a written reason (this set only shrinks)."""


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def name_of(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
"""Cycles still to be broken (none: keep it so)."""


def import_cycles() -> set[frozenset[str]]:
    """Every group of modules that import each other, directly or through others (Tarjan's
    strongly connected components over every import, lazy and type-only ones included)."""
    graph = grimp.build_graph("workbench", cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                found.add(frozenset(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles() -> None:
    cycles = import_cycles()
    assert cycles <= KNOWN_CYCLES, [sorted(c) for c in cycles - KNOWN_CYCLES]
    assert cycles >= KNOWN_CYCLES, f"broken now, take them off: {KNOWN_CYCLES - cycles}"


def test_no_module_over_400_lines() -> None:
    lengths = {name_of(p): len(p.read_text(encoding="utf-8").splitlines()) for p in modules()}
    over = {name for name, n in lengths.items() if n > MAX_MODULE_LINES}
    assert over <= OVER_400, sorted(over - OVER_400)
    assert over >= OVER_400, f"within the limit now, take them off: {sorted(OVER_400 - over)}"


def test_long_functions_say_why() -> None:
    unexplained = set()
    for path in modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.end_lineno - node.lineno + 1 <= MAX_FUNCTION_LINES:
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first < 2 or "# long:" not in lines[first - 2]:
                unexplained.add(f"{name_of(path)}:{node.name}")
    assert unexplained <= LONG_WITHOUT_REASON, sorted(unexplained - LONG_WITHOUT_REASON)
    assert unexplained >= LONG_WITHOUT_REASON, sorted(LONG_WITHOUT_REASON - unexplained)


def _contract(name_start: str) -> dict:
    import tomllib

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"].startswith(name_start))


def test_every_core_module_is_in_a_family_or_the_shared_floor() -> None:
    """A module at core's top level is one of the shared modules the contract keeps from
    importing any family, and every sub-package is a family in the families' layers: a new
    module cannot slip past both contracts."""
    core = PACKAGE / "core"
    shared = set(_contract("The core's shared modules")["source_modules"])
    top = {f"workbench.core.{p.stem}" for p in core.glob("*.py") if p.stem != "__init__"}
    assert top == shared, (top - shared, shared - top)
    layers = " | ".join(_contract("The core's families")["layers"])
    families = {name.strip() for name in layers.split("|")}
    packages = {f"workbench.core.{p.parent.name}" for p in core.glob("*/__init__.py")}
    assert packages == families, (packages - families, families - packages)
