"""core.outbox: the domain offers entities, the exports app (registered in its AppConfig.ready) writes the
outbox rows in the same transaction; the domain never imports exports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.db import transaction

from core import outbox
from exports import services as export_services
from exports.models import EntityType

ROOT = Path(__file__).resolve().parents[2]


def test_exports_registered_itself_as_the_outbox_sink() -> None:
    assert export_services.enqueue in outbox._sinks


@pytest.mark.django_db(transaction=True)
def test_an_offer_outside_the_entitys_transaction_is_refused(tenant) -> None:
    with pytest.raises(RuntimeError, match="inside the transaction"):
        outbox.offer(account=tenant.account, entity_type=outbox.SALES, entries=[outbox.Entry(1, "s-1")])


@pytest.mark.django_db
def test_an_unknown_entity_type_is_refused(tenant) -> None:
    with transaction.atomic(), pytest.raises(ValueError, match="unknown entity type"):
        outbox.offer(account=tenant.account, entity_type="invoices", entries=[outbox.Entry(1, "i-1")])


def test_the_codes_are_the_export_entity_types() -> None:
    assert set(outbox.ENTITY_TYPES) == set(EntityType.values)


@pytest.mark.parametrize("app", ["core", "accounts", "orders", "campaigns", "ledger", "giftcards"])
def test_the_domain_never_imports_exports(app: str) -> None:
    offenders = []
    for path in (ROOT / app).rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "exports"]
    assert offenders == []
