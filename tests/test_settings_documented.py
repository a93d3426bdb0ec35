"""Every variable the service reads from the environment is in docs/settings.md's table, and every name there is
still read: the table cannot drift from ``config/settings.py`` and ``config/gunicorn.conf.py``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "config" / "settings.py", ROOT / "config" / "gunicorn.conf.py")
TABLE = ROOT / "docs" / "settings.md"
ENVIRON_GETTERS = {"os.environ.get", "os.getenv", "environ.get"}


def _is_env(node: ast.expr) -> bool:
    """``env`` (django-environ's reader) or one of its typed readers (``env.int``, ``env.db``...)."""
    if isinstance(node, ast.Name):
        return node.id == "env"
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "env"


def _name(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def read_variables(path: Path) -> set[str]:
    """The variable names ``path`` reads: ``env.<type>("NAME"``, ``env("NAME"``, ``"NAME" in env``,
    ``os.environ.get("NAME"`` / ``os.environ["NAME"]``, and the names passed to a module function that hands its
    argument to ``env`` (``_every(task, "NAME", default)``)."""
    tree = ast.parse(path.read_text())
    # Module functions that read the variable named by one of their parameters: which argument it is.
    helpers: dict[str, int] = {}
    for function in (node for node in tree.body if isinstance(node, ast.FunctionDef)):
        params = [arg.arg for arg in function.args.args]
        for call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
            first = call.args[0] if call.args else None
            if _is_env(call.func) and isinstance(first, ast.Name) and first.id in params:
                helpers[function.name] = params.index(first.id)
    names: set[str] = set()
    for node in ast.walk(tree):
        found: str | None = None
        if isinstance(node, ast.Call) and node.args:
            if _is_env(node.func) or ast.unparse(node.func) in ENVIRON_GETTERS:
                found = _name(node.args[0])
            elif isinstance(node.func, ast.Name) and node.func.id in helpers:
                position = helpers[node.func.id]
                found = _name(node.args[position]) if len(node.args) > position else None
        elif isinstance(node, ast.Compare) and any(isinstance(c, ast.Name) and c.id == "env" for c in node.comparators):
            found = _name(node.left)
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            found = _name(node.slice)
        if found:
            names.add(found)
    return names


def documented_variables() -> set[str]:
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", TABLE.read_text(), flags=re.MULTILINE))


def test_every_variable_read_is_documented_and_every_documented_one_is_read() -> None:
    read = set().union(*(read_variables(path) for path in SOURCES))
    documented = documented_variables()
    missing = sorted(read - documented)
    stale = sorted(documented - read)
    assert not missing, f"read in config/ but not in docs/settings.md's table (add a row each): {', '.join(missing)}"
    assert not stale, f"in docs/settings.md's table but no longer read in config/ (remove the rows): {', '.join(stale)}"


def test_the_parser_finds_each_way_a_variable_is_read(tmp_path) -> None:
    source = tmp_path / "settings.py"
    source.write_text(
        "import os\n"
        "def _every(task, setting, default):\n"
        "    return env.float(setting, default=default)\n"
        "A = env.int('TYPED', default=1)\n"
        "B = env('PLAIN')\n"
        "C = 'CHECKED' in env\n"
        "D = os.environ.get('GOT', 'x')\n"
        "E = os.environ['INDEXED']\n"
        "F = _every('task', 'THROUGH_HELPER', 5.0)\n"
        "G = env.str(f'NOT_{A}')\n"
    )
    assert read_variables(source) == {"TYPED", "PLAIN", "CHECKED", "GOT", "INDEXED", "THROUGH_HELPER"}


def test_the_table_is_linked_from_the_operations_page_and_the_readme() -> None:
    assert "(settings.md)" in (ROOT / "docs" / "operations.md").read_text()
    assert "(docs/settings.md)" in (ROOT / "README.md").read_text()
