"""The layers of the apps (docs/architecture.md, "Layers") hold: the import-linter contracts in pyproject.toml
pass, list no exception, and cover every app of the project, so a new app cannot slip past them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

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
