"""The layers of the apps (docs/architecture.md, "Layers") hold: the import-linter contracts in pyproject.toml
pass, list no exception, and cover every app of the project, so a new app cannot slip past them."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def importlinter_settings() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def test_the_import_contracts_pass() -> None:
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_no_contract_lists_an_exception() -> None:
    for contract in importlinter_settings()["contracts"]:
        assert not contract.get("ignore_imports"), contract["name"]
        assert contract.get("allow_indirect_imports", False) is False, contract["name"]


def test_every_app_of_the_project_is_in_the_layers() -> None:
    project_apps = {config.name for config in apps.get_app_configs() if Path(config.path).resolve().parent == ROOT} | {
        "config"
    }
    settings = importlinter_settings()
    [layers] = [contract for contract in settings["contracts"] if contract["type"] == "layers"]
    layered = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    assert set(settings["root_packages"]) == project_apps
    assert layered == project_apps


# --- No module cycle, and no import hidden in a function to dodge one ----------------------------------------

PACKAGES = tuple(importlinter_settings()["root_packages"])
# Imports a function may hold: any AppConfig.ready() (the models are not loaded before it), the warm-up's,
# which load the application on purpose after gunicorn has read its configuration, and the master's hook that
# folds a dead worker's metric files in multiprocess mode only (none dodges a cycle).
LAZY_ALLOWED = {
    ("config/warmup.py", "_request"),
    ("config/gunicorn.conf.py", "on_starting"),
    ("config/gunicorn.conf.py", "post_worker_init"),
    ("config/gunicorn.conf.py", "child_exit"),
}


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("a", "b", "c", "d"):
        graph.add_module(name)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    graph.add_import(importer="c", imported="d")
    assert module_cycles(graph) == [["a", "b", "c"]]


def test_no_module_of_the_project_imports_itself_through_others() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert module_cycles(graph) == []


def function_level_imports(source: str, where: str) -> list[str]:
    found: list[str] = []

    def walk(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if (
                function
                and isinstance(child, ast.Import | ast.ImportFrom)
                and function != "ready"
                and (where, function) not in LAZY_ALLOWED
            ):
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
                if isinstance(child, ast.ImportFrom) and child.level:
                    names = ["(relative)"]
                found.extend(
                    f"{where}:{child.lineno} {function}() imports {name}"
                    for name in names
                    if name == "(relative)" or name.split(".")[0] in PACKAGES
                )
            walk(child, inner)

    walk(ast.parse(source), None)
    return found


def test_the_finder_finds_an_import_hidden_in_a_function() -> None:
    source = "\n".join(
        [
            "import os",
            "def f():",
            "    import ledger.models",
            "    from os import path",
            "class C:",
            "    def ready(self):",
            "        from ledger import x",
        ]
    )
    assert function_level_imports(source, "x.py") == ["x.py:3 f() imports ledger.models"]


def test_no_function_imports_a_module_of_the_project() -> None:
    found = [
        line
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for line in function_level_imports(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert found == []
