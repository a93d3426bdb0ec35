"""Tests share helpers through one place: ``tests/support/`` and ``tests/factories.py`` (the root
``tests/conftest.py`` holds fixtures, which are asked for by name, never imported). A test module (or a folder's
conftest) that imports from another test module couples the two and hides where a helper lives; a fixture of
``tests/support/`` defined again elsewhere shadows the one definition. Both are read from the source with ``ast``,
without importing anything."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SHARED = ("tests.support", "tests.factories")


def _modules() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def _is_shared(module: str) -> bool:
    return any(module == shared or module.startswith(f"{shared}.") for shared in SHARED)


def _imported_test_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a module under ``tests`` that is not shared, at any depth."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from tests import x`` and ``from tests.support import x`` import modules by name.
            if node.module in ("tests", "tests.support"):
                modules = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                modules = [node.module]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append((node.lineno, "." * node.level + (node.module or "")))
            continue
        else:
            continue
        found.extend(
            (node.lineno, module)
            for module in modules
            if (module == "tests" or module.startswith("tests.")) and not _is_shared(module)
        )
    return found


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fixture"


def _fixtures(tree: ast.Module) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.name)
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any(_is_fixture(d) for d in node.decorator_list)
    ]


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(TESTS.parent)}:{line}"


def test_no_test_module_imports_another_test_module() -> None:
    offences = [
        f"{_where(path, line)} imports {module}"
        for path in _modules()
        for line, module in _imported_test_modules(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert offences == [], "move the helper to tests/support/ and import it from there:\n" + "\n".join(offences)


def test_a_shared_fixture_is_defined_once() -> None:
    support = TESTS / "support"
    shared: dict[str, str] = {}
    for path in sorted(support.rglob("*.py")):
        for line, name in _fixtures(ast.parse(path.read_text())):
            assert name not in shared, f"{_where(path, line)}: fixture {name} is also {shared[name]}"
            shared[name] = _where(path, line)
    redefined = [
        f"{_where(path, line)} defines fixture {name} again (the shared one: {shared[name]})"
        for path in _modules()
        if support not in path.parents
        for line, name in _fixtures(ast.parse(path.read_text()))
        if name in shared
    ]
    assert redefined == [], "\n".join(redefined)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from tests.ledger.test_checkouts import checkout_body", ["tests.ledger.test_checkouts"]),
        ("from tests.api.conftest import api", ["tests.api.conftest"]),
        ("import tests.orders.test_order_validation as cases", ["tests.orders.test_order_validation"]),
        ("def f():\n    from tests.exports.receiver import Receiver", ["tests.exports.receiver"]),
        ("from tests import rebinding", ["tests.rebinding"]),
        ("from .conftest import make_queue", [".conftest"]),
        ("from tests.support.api import AdminApi", []),
        ("from tests.support import reference_server", []),
        ("from tests.factories import AccountFactory", []),
        ("from tests.conftest import Tenant", ["tests.conftest"]),
        ("from tests.support.tenants import Tenant", []),
        ("from exports import services", []),
    ],
)
def test_the_check_tells_test_modules_from_shared_ones(source: str, expected: list[str]) -> None:
    assert [module for _, module in _imported_test_modules(ast.parse(source))] == expected
