"""Tests share helpers only through fixture modules (issue 44, item 7): a test module imports
the package, conftest's fixtures and the modules in tests/ whose names are not test_*, never
another test module. A test module that is also a library makes a change to one test break
another folder's, and running a file alone depend on which others pytest imported first.

The fixture modules sit at tests/'s top, the one test folder on pytest's `pythonpath`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def python_files() -> list[Path]:
    """Every Python file under tests/: test modules, fixture modules and conftest."""
    return sorted(TESTS.rglob("*.py"))


def imported_names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, dotted module name) of each import, top-level or inside a function; a relative
    `from . import x` gives x, and `importlib.import_module("x")` with a literal name counts."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module:
                yield node.lineno, node.module
            if node.level:
                yield from ((node.lineno, alias.name) for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def is_test_module(name: str) -> bool:
    return any(part.startswith("test_") for part in name.split("."))


def test_no_test_imports_another_test_module() -> None:
    found = [
        f"{path.relative_to(TESTS.parent).as_posix()}:{line}: imports {name}"
        for path in python_files()
        for line, name in imported_names(ast.parse(path.read_text(encoding="utf-8")))
        if is_test_module(name)
    ]
    assert found == [], (
        f"{len(found)} imports of a test module; move the helper to a fixture module in tests/ "
        "(or a fixture in tests/conftest.py):\n" + "\n".join(found)
    )


def test_fixture_modules_sit_at_the_top_of_tests() -> None:
    """A helper module in a subfolder is importable only once pytest has put that folder on
    sys.path for one of its tests: where it sits decides whether a test run alone finds it."""
    misplaced = [
        path.relative_to(TESTS.parent).as_posix()
        for path in python_files()
        if path.parent != TESTS and not path.name.startswith("test_")
    ]
    assert misplaced == [], f"move these to tests/: {misplaced}"


def test_imported_names_sees_every_spelling() -> None:
    source = (
        "import test_a\nfrom test_b import x\nfrom tests.cli.test_c import y\n"
        "def f():\n    from test_d import z\n    importlib.import_module('test_e')\n"
        "from . import test_f\nfrom tui_fixtures import settle\nimport workbench.core.model\n"
    )
    names = [name for _, name in imported_names(ast.parse(source)) if is_test_module(name)]
    assert sorted(names) == ["test_a", "test_b", "test_d", "test_e", "test_f", "tests.cli.test_c"]
