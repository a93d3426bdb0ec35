"""The identity export of every entity type matches the schema the OpenAPI document publishes for it
(``exports.bodies``), and docs/events.md shows each type's fields and an example the transform produced.

The entities are made the way they are in use (the POS API, the admin API, the factories), then loaded and
rendered as an export does. ``UPDATE_EVENTS_DOC=1`` writes the generated part of docs/events.md again.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from exports.bodies import ELEMENTS
from exports.entities import REGISTRY
from exports.openapi import element_name, wrapper_name
from exports.transforms.base import Element, RenderContext
from exports.transforms.identity import IdentityTransform
from imports.docs import ORDER
from ledger.api.checkouts import _BASKET, CHECKOUT_REQUEST_EXAMPLE
from orders.models import IncomingOrder, OrderStateChange
from tests.factories import (
    CashierFactory,
    IncomingOrderFactory,
    OrderStateChangeFactory,
    OutgoingOrderFactory,
    RegisterFactory,
)
from tests.support.openapi import component_validator, problems
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
START, END = "<!-- generated: tests/exports/test_identity_schemas.py -->", "<!-- end of generated -->"
# Values that are the time the fixture ran: shown as they were, compared by presence.
TIMES = {"created", "last_change", "reconciliation_time", "opened_at", "timestamp", "timestamp_string"}
TIMES |= {"timestamp_date_string", "timestamp_week_string"}
WHEN = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)


@pytest.fixture
def document(openapi_document: dict) -> dict:
    return openapi_document


def post_pos(client: Client, tenant: Tenant, path: str, body: Any) -> Any:
    url = f"/api/v1/pos/{path}?{tenant.query(tenant.pos_key)}"
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code in (200, 201), response.content
    return response


@pytest.fixture
def exports(client: Client, tenant: Tenant) -> dict[str, bytes]:
    """One entity of each type, made as in use, and its identity export: the wrapper's bytes by type."""
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1", name="Till 1")
    post_pos(client, tenant, "registers/reg-1/open", {"cash_total_at_open": 500})
    post_pos(client, tenant, "checkouts", CHECKOUT_REQUEST_EXAMPLE)
    signup = {"email": "Jane@Example.COM", "first_name": "Jane", "register_id": "reg-1", "timestamp": 1736933400}
    post_pos(client, tenant, "newsletter-signups", {**signup, "shop_id": "shop-1"})
    stock = {"type": "received", "product_id": "tshirt-basic", "stock_location_id": "shop-1", "adjustment": 12}
    post_pos(client, tenant, "stock-events", {**stock, "timestamp": "2025-01-15T08:00:00Z"})
    post_pos(
        client, tenant, "registers/reg-1/close", {"counted": [{"payment_type_identifier": "cash", "counted": 500}]}
    )
    product = {"id": "tshirt-basic", "name": {"da": "T-shirt", "en": "T-shirt"}, "retail_price": {"dk": 125}}
    response = client.post(
        f"/api/v1/products/?{tenant.query(tenant.admin_key)}", json.dumps(product), content_type="application/json"
    )
    assert response.status_code == 201, response.content

    cashier = CashierFactory(account=tenant.account, identifier="cashier-7")
    parts = {k: ORDER[k] for k in ("basket", "customer", "payment", "shipping")}
    incoming = IncomingOrderFactory(
        account=tenant.account, stock_location=tenant.stock_location, order_identifier="web-10042", **parts
    )
    OrderStateChangeFactory(incoming_order=incoming, state="ready", comment="Packed", cashier=cashier.identifier)
    IncomingOrder.objects.filter(pk=incoming.pk).update(created_at=WHEN)
    OrderStateChange.objects.filter(incoming_order=incoming).update(created_at=WHEN)
    OutgoingOrderFactory(
        account=tenant.account,
        stock_location=tenant.stock_location,
        order_identifier="out-2291",
        basket=_BASKET,
        customer={"customer_identifier": "c-77", "name": "Jane Jensen"},
    )

    rendered = {}
    context = RenderContext(queue={}, account={}, now=WHEN, delivery_id="d-1")
    for code, entity in REGISTRY.items():
        found = entity.find(tenant.account.pk, None)
        assert found is not None, f"no {code} made"
        object_id, key = found
        element = Element(element_key=key, entity=entity.load([object_id])[object_id])
        rendered[code] = IdentityTransform().render([element], context, {}).content
    return rendered


def test_every_entity_type_has_a_published_schema(document: dict) -> None:
    schemas = document["components"]["schemas"]
    assert set(ELEMENTS) == set(REGISTRY)
    for code in REGISTRY:
        wrapper = schemas[wrapper_name(code)]
        assert wrapper["additionalProperties"] == {"$ref": f"#/components/schemas/{element_name(code)}"}
        assert schemas[element_name(code)]["properties"]


def test_every_entity_type_is_a_webhook_sending_its_wrapper(document: dict) -> None:
    assert set(document["webhooks"]) == set(REGISTRY)
    for code, item in document["webhooks"].items():
        body = item["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": f"#/components/schemas/{wrapper_name(code)}"}
        headers = {p["name"]: p["required"] for p in item["post"]["parameters"] if p["in"] == "header"}
        assert headers == {"webhook-id": True, "webhook-timestamp": True, "webhook-signature": False}


def test_the_identity_export_of_every_entity_type_matches_its_schema(document: dict, exports: dict) -> None:
    for code, content in exports.items():
        assert problems(component_validator(document, wrapper_name(code)), json.loads(content)) == [], code


def test_the_schema_refuses_what_the_export_does_not_send(document: dict, exports: dict) -> None:
    validator = component_validator(document, wrapper_name("stock_events"))
    wrapper = json.loads(exports["stock_events"])
    (key,) = wrapper
    assert list(validator.iter_errors({key: {**wrapper[key], "type": "moved"}}))
    assert list(validator.iter_errors({}))


# --- docs/events.md ------------------------------------------------------------------------------------------


def steady(value: Any) -> Any:
    """``value`` with the fixture's times and the row ids ending element keys made constant."""
    if isinstance(value, dict):
        return {
            (re.sub(r"\d+$", "N", k) if isinstance(k, str) else k): ("<time>" if k in TIMES else steady(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def field_rows(schema: dict, schemas: dict) -> list[str]:
    """The element's fields as table rows: name, required, description."""
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema["properties"].items():
        description = " ".join(prop.get("description", "").split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {'yes' if name in required else 'no'} | {description} |")
    return rows


def generated(document: dict, exports: dict) -> str:
    schemas = document["components"]["schemas"]
    parts = [START]
    for code, entity in REGISTRY.items():
        element = schemas[element_name(code)]
        intro = " ".join(element.get("description", "").split("\n\nRules:")[0].split())
        parts += [
            "",
            f"## `{code}`",
            "",
            intro,
            "",
            f"Wrapper: `{wrapper_name(code)}`; element: `{element_name(code)}`; element key: `{entity.element_key}`.",
            "",
            "| Field | Required | Meaning |",
            "|---|---|---|",
            *field_rows(element, schemas),
            "",
            "```json",
            json.dumps(json.loads(exports[code]), indent=2, ensure_ascii=False),
            "```",
        ]
    return "\n".join([*parts, "", END])


def examples_of(text: str) -> dict[str, Any]:
    found = re.findall(r"^## `(\w+)`\n.*?```json\n(.*?)\n```", text, flags=re.S | re.M)
    return {code: json.loads(body) for code, body in found}


def test_the_events_page_shows_each_type_with_its_fields_and_an_example_export(document: dict, exports: dict) -> None:
    text = DOC.read_text()
    new = generated(document, exports)
    if os.environ.get("UPDATE_EVENTS_DOC"):
        head, _, rest = text.partition(START)
        text = head + new + rest.partition(END)[2]
        DOC.write_text(text)
    shown = text[text.index(START) : text.index(END) + len(END)]
    assert re.sub(r"```json.*?```", "", shown, flags=re.S) == re.sub(r"```json.*?```", "", new, flags=re.S)
    assert steady(examples_of(shown)) == steady(examples_of(new))
    assert set(examples_of(shown)) == set(REGISTRY)
