"""core.outbox: the domain offers entities, the exports app (registered in its AppConfig.ready) writes the
outbox rows in the same transaction; the domain never imports exports."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
from django.db import connection, transaction

from core import outbox
from exports import services as export_services
from exports.bodies import ELEMENTS
from exports.entities import REGISTRY

ROOT = Path(__file__).resolve().parents[2]


def test_exports_registered_itself_as_the_outbox_sink() -> None:
    assert export_services.offered in outbox._sinks


def test_an_offer_outside_the_entitys_transaction_is_refused() -> None:
    # In a thread of its own: its own connection, certainly outside any transaction the test run holds open.
    raised: list[BaseException] = []

    def offer() -> None:
        try:
            outbox.offer(account=None, entity_type=outbox.EntityType.SALES, entries=[outbox.Entry(1, "s-1")])
        except BaseException as exc:
            raised.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=offer)
    thread.start()
    thread.join()
    assert len(raised) == 1 and isinstance(raised[0], RuntimeError)
    assert "inside the transaction" in str(raised[0])


@pytest.mark.django_db
def test_an_unknown_entity_type_is_refused(tenant) -> None:
    with transaction.atomic(), pytest.raises(ValueError, match="unknown entity type"):
        outbox.offer(account=tenant.account, entity_type="invoices", entries=[outbox.Entry(1, "i-1")])


def test_every_entity_type_has_one_export_entity_and_one_element_schema() -> None:
    assert sorted(REGISTRY) == sorted(outbox.EntityType.values)
    assert sorted(ELEMENTS) == sorted(outbox.EntityType.values)


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
