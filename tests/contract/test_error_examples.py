"""Every error example the OpenAPI document declares for the POS checkout and the import endpoints is what the
endpoint answers: each is produced by a request and compared in status and shape (the keys, `status`, the
message, and each error's field and code)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from accounts.models import Register
from imports import docs
from ledger.api.checkouts import CHECKOUT_REQUEST_EXAMPLE
from tests.factories import OutgoingOrderFactory
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

CHECKOUTS = "/api/v1/pos/checkouts/"
Call = Callable[[Client, Tenant], Any]


@pytest.fixture
def document(openapi_document: dict) -> dict:
    return openapi_document


def declared_errors(document: dict, route: str, method: str = "post") -> dict[str, tuple[int, dict]]:
    """The examples of the operation's answers other than 200 and 201, by name: (status, body)."""
    found = {}
    for code, response in document["paths"][route][method]["responses"].items():
        if int(code) in (200, 201):
            continue
        for example in response.get("content", {}).get("application/json", {}).get("examples", {}).values():
            found[example["summary"]] = (int(code), example["value"])
    return found


def shape(body: dict) -> dict:
    """What an example must share with the answer: all of it, but the messages of a JSON parser's error (they
    carry the place of the fault in the body)."""
    unreadable = any(e["field"] == "body" for e in body.get("errors", []))
    errors = [(e["field"], e.get("code"), None if unreadable else e["message"]) for e in body.get("errors", [])]
    failed = [(f["index"], f["id"], f["errors"]) for f in body.get("failed", [])]
    message = None if unreadable else body["message"]
    return {"keys": sorted(body), "status": body["status"], "message": message, "errors": errors, "failed": failed}


def as_pos(client: Client, tenant: Tenant, body: Any, key: str | None = None) -> Any:
    url = f"{CHECKOUTS}?{tenant.query(key or tenant.pos_key)}"
    return client.post(url, json.dumps(body), content_type="application/json")


def used_identifier(client: Client, tenant: Tenant) -> Any:
    assert as_pos(client, tenant, CHECKOUT_REQUEST_EXAMPLE).status_code == 201
    other = {**CHECKOUT_REQUEST_EXAMPLE, "timing": {"timestamp": 1736931960, "timezone": "Europe/Copenhagen"}}
    return as_pos(client, tenant, other)


CHECKOUT_CALLS: dict[str, Call] = {
    "Invalid input": lambda client, tenant: as_pos(
        client, tenant, {**CHECKOUT_REQUEST_EXAMPLE, "base_currency_code": "XYZ"}
    ),
    "Invalid credentials": lambda client, tenant: as_pos(client, tenant, CHECKOUT_REQUEST_EXAMPLE, key="wrong"),
    "Missing scope": lambda client, tenant: as_pos(client, tenant, CHECKOUT_REQUEST_EXAMPLE, key=tenant.imports_key),
    "Identifier used by another checkout": used_identifier,
}


def test_every_error_example_of_the_checkout_is_its_answer(
    document: dict, client: Client, tenant: Tenant, register: Register
) -> None:
    declared = declared_errors(document, CHECKOUTS)
    assert set(declared) == set(CHECKOUT_CALLS), "an example without a request that produces it"
    for name, (status_code, example) in declared.items():
        response = CHECKOUT_CALLS[name](client, tenant)
        assert (response.status_code, shape(response.json())) == (status_code, shape(example)), name


def test_the_checkouts_403_names_the_pos_scope(document: dict) -> None:
    status_code, example = declared_errors(document, CHECKOUTS)["Missing scope"]
    assert (status_code, example["message"]) == (403, "This API key lacks the 'pos' scope.")


def import_calls(route: str) -> dict[str, Call]:
    """A request producing each example of an import endpoint, by its name."""
    operation = getattr(docs, next(name for name, at in ROUTES.items() if at == route))
    request = next(e.value for e in operation["examples"] if e.request_only)
    items = request if isinstance(request, list) else next(iter(request.values()))
    wrap: Callable[[list[Any]], Any] = (
        (lambda xs: xs) if isinstance(request, list) else (lambda xs: {next(iter(request)): xs})
    )
    params = {"stock_location": "shop-1"} if "orders" in route and "state" not in route else {}

    def post(client: Client, tenant: Tenant, body: Any, *, key: str | None = None, **extra: Any) -> Any:
        url = f"{route}?{tenant.query(key, **params)}"
        data = body if isinstance(body, str) else json.dumps(body)
        return client.generic("POST", url, data, content_type=extra.get("content_type", "application/json"))

    requests = docs.REFUSALS[route].requests(items)
    return {
        docs.PARTIAL: lambda c, t: post(c, t, wrap(requests[docs.PARTIAL])),
        docs.REFUSED: lambda c, t: post(c, t, wrap(requests[docs.REFUSED])),
        "Unreadable request": lambda c, t: post(c, t, '{"a": 1 "b": 2}'),
        "Not JSON": lambda c, t: post(c, t, "a=1", content_type="application/x-www-form-urlencoded"),
        "Bad credentials": lambda c, t: post(c, t, wrap(items), key="wrong"),
        "Missing scope": lambda c, t: post(c, t, wrap(items), key=t.pos_key),
    }


ROUTES = {
    "INCOMING_ORDERS": "/imports/incoming_orders",
    "EXTERNAL_ORDERS": "/imports/external_orders",
    "STATE_CHANGES": "/imports/outgoing_order_state_changes",
    "CAMPAIGNS_POST": "/imports/discount_campaigns",
    "RULES_POST": "/imports/product_rules",
    "STOCK_EVENTS": "/imports/stock_events",
}


@pytest.mark.parametrize("route", ROUTES.values())
def test_every_error_example_of_an_import_endpoint_is_its_answer(
    document: dict, client: Client, tenant: Tenant, route: str, eager: None
) -> None:
    OutgoingOrderFactory(account=tenant.account, stock_location=tenant.stock_location, order_identifier="out-2291")
    declared = declared_errors(document, route)
    calls = import_calls(route)
    assert set(declared) == set(calls), "an example without a request that produces it"
    for name, (status_code, example) in declared.items():
        response = calls[name](client, tenant)
        assert (response.status_code, shape(response.json())) == (status_code, shape(example)), name


@pytest.fixture
def eager() -> Any:
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous
