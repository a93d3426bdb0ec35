"""Declared bodies live in modules named ``bodies`` (docs/architecture.md, glossary: "declared body"): every
subclass of ``core.declare.Body`` the service defines is in a module whose dotted path has a ``bodies`` part
(``orders.bodies``, ``ledger.bodies.checkouts``), so a new one cannot land in a view, a serializer or a module of
another name. The one exception is the campaign kinds of ``campaigns/pricing/``, each of which keeps its import
body beside its pricing rule (one module per kind)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from django.apps import apps

from core.declare import Body, BodyMeta

ROOT = Path(__file__).resolve().parents[2]
# Registry plugins: each campaign or product rule kind declares its body next to its rule.
EXCEPTIONS = ("campaigns.pricing.",)


def project_apps() -> list[str]:
    return [config.name for config in apps.get_app_configs() if Path(config.path).resolve().parent == ROOT]


def service_modules() -> list[str]:
    """Every module of the project's apps (not their migrations), imported."""
    names = []
    for app in project_apps():
        for module in pkgutil.walk_packages([str(ROOT / app)], prefix=f"{app}."):
            if ".migrations" in module.name:
                continue
            importlib.import_module(module.name)
            names.append(module.name)
    return names


def declared_bodies() -> list[BodyMeta]:
    found, todo = [], list(Body.__subclasses__())
    while todo:
        body = todo.pop()
        found.append(body)
        todo.extend(body.__subclasses__())
    return found


def test_every_declared_body_lives_in_a_bodies_module() -> None:
    modules = set(service_modules())
    assert "orders.bodies" in modules and "ledger.bodies.checkouts" in modules
    service = [body for body in declared_bodies() if body.__module__.split(".")[0] in project_apps()]
    assert len(service) > 100  # every app's bodies were imported
    misplaced = sorted(
        f"{body.__module__}.{body.__qualname__}"
        for body in service
        if "bodies" not in body.__module__.split(".") and not body.__module__.startswith(EXCEPTIONS)
    )
    assert misplaced == [], "declared bodies outside a `bodies` module: " + ", ".join(misplaced)
