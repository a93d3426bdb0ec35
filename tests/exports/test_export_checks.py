"""The suite's check of every export against its published schema (``tests.support.export_checks``) finds an
export that does not match, passes one that does, whether rendered in memory or streamed, and hands a worker's
outcomes to the test process.

These tests install a check of their own over the session's; they are marked ``made_up_entities`` so that the
session's check leaves their made-up exports alone."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from exports.entities import REGISTRY as ENTITIES
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import Element, RenderContext
from ledger.api.checkouts import CHECKOUT_REQUEST_EXAMPLE
from tests.factories import RegisterFactory
from tests.support.export_checks import ExportCheck, install
from tests.support.tenants import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.made_up_entities]

SALES = RenderContext(
    queue={"id": 1, "name": "q", "entity_type": "sales", "trigger": "daily"},
    account={"identifier": "acme", "name": "Acme"},
    now=datetime(2025, 1, 15, 9, 30, tzinfo=UTC),
    delivery_id="d-1",
)
MADE_UP = Element("k0", {"identifier": "s0", "base_currency_code": "DKK", "summary": {"total": 1}})


@pytest.fixture
def check() -> Iterator[ExportCheck]:
    installed = ExportCheck()
    undo = install(installed)
    yield installed
    undo()


@pytest.fixture
def sale(tenant: Tenant) -> Element:
    from rest_framework.test import APIClient

    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    client = APIClient()
    for path, body in (("registers/reg-1/open", {"cash_total_at_open": 500}), ("checkouts", CHECKOUT_REQUEST_EXAMPLE)):
        answer = client.post(f"/api/v1/pos/{path}?{tenant.query(tenant.pos_key)}", body, format="json")
        assert answer.status_code in (200, 201), answer.content
    found = ENTITIES["sales"].find(tenant.account.pk, None)
    assert found is not None
    object_id, key = found
    return Element(key, ENTITIES["sales"].load([object_id])[object_id])


def test_an_identity_export_that_does_not_match_its_schema_is_a_problem(check: ExportCheck) -> None:
    TRANSFORMS["identity"].render([MADE_UP], SALES, {"type": "identity"})

    assert check.validated == {"identity sales": 1}
    assert len(check.problems) == 1 and '"payments" is a required property' in check.problems[0]


def test_an_identity_export_of_a_real_sale_matches_in_memory_and_streamed(check: ExportCheck, sale: Element) -> None:
    TRANSFORMS["identity"].render([sale], SALES, {"type": "identity"})
    out = io.BytesIO(b"before")
    out.seek(0, io.SEEK_END)
    TRANSFORMS["identity"].render_to(iter([sale, sale]), SALES, {"type": "identity"}, out)

    assert check.problems == [] and check.validated == {"identity sales": 2}
    assert out.tell() == len(out.getvalue())  # the check read the file back and left it where it was


def test_a_simple_json_export_is_checked_against_the_schema_of_its_fields(check: ExportCheck, sale: Element) -> None:
    fields = {"sale": "{identifier}", "total": "{summary.total}"}
    TRANSFORMS["simple_json"].render([sale], SALES, {"type": "simple_json", "fields": fields})
    assert check.problems == []

    # A made-up sale whose identifier is a number: the key is declared a string by the element's schema.
    odd = Element("k1", {**sale.entity, "identifier": 7})
    TRANSFORMS["simple_json"].render([odd], SALES, {"type": "simple_json", "fields": fields})
    assert check.validated == {"simple_json sales": 2}
    assert len(check.problems) == 1 and "/k1/sale" in check.problems[0]


def test_a_render_without_an_entity_type_is_counted_not_checked(check: ExportCheck) -> None:
    context = RenderContext(queue={}, account={}, now=SALES.now, delivery_id="d-1")
    TRANSFORMS["identity"].render([MADE_UP], context, {"type": "identity"})

    assert (check.validated, check.problems) == ({}, [])
    assert check.unchecked == {"identity without an entity type": 1}


def test_a_worker_appends_its_outcomes_for_the_test_process(tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"
    worker = ExportCheck(report=report)
    undo = install(worker)
    try:
        TRANSFORMS["identity"].render([MADE_UP], SALES, {"type": "identity"})
    finally:
        undo()
    lines: list[dict[str, Any]] = [json.loads(line) for line in report.read_text().splitlines()]

    assert worker.validated == {} and len(lines) == 1
    reader = ExportCheck()
    reader.add(**lines[0])
    assert reader.validated == {"identity sales": 1} and len(reader.problems) == 1
