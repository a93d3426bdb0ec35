"""The import API in tests: a valid incoming order, a POST to ``/imports/``, and what the worker does with the
pending items (``materialise_pending``); ``import_orders`` does both for a list of order identifiers. Against a
live server, over HTTP: ``post_orders`` of a ``batch``."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import requests
from rest_framework.test import APIClient

from imports import services
from imports.models import ImportItem, ImportStatus
from tests.support.tenants import Tenant


def order(identifier: str = "o-1", **overrides: Any) -> dict[str, Any]:
    """A minimal valid incoming order (spec: Endpoints A rule 3) with overrides."""
    body: dict[str, Any] = {
        "order_identifier": identifier,
        "basket": {
            "currency": "DKK",
            "line_items": [{"product_identifier": "1001", "name": "T-shirt", "quantity": 2, "price": 149.95}],
        },
    }
    body.update(overrides)
    return body


def post(
    client: APIClient,
    tenant: Tenant,
    path: str,
    body: Any,
    *,
    raw: bytes | None = None,
    content_type: str = "application/json",
    key: str | None = None,
    **params: str,
) -> Any:
    data = raw if raw is not None else json.dumps(body)
    return client.generic("POST", f"/imports/{path}?{tenant.query(key, **params)}", data, content_type=content_type)


def materialise_pending(tenant: Tenant) -> int:
    """What the worker does with the hand-off's messages for the account's pending items: a task per message."""
    ids = list(
        ImportItem.objects.filter(account=tenant.account, status=ImportStatus.PENDING).values_list("id", flat=True)
    )
    chunk = services.MATERIALISE_CHUNK
    messages = [ids[start : start + chunk] for start in range(0, len(ids), chunk)]
    return sum(services.materialise_items(account_id=tenant.account.pk, item_ids=m) for m in messages)


def import_orders(client: APIClient, tenant: Tenant, *identifiers: str, location: str = "shop-1") -> None:
    body = json.dumps({"orders": [order(i) for i in identifiers]})
    client.generic(
        "POST",
        f"/imports/incoming_orders?{tenant.query(stock_location=location)}",
        body,
        content_type="application/json",
    )
    materialise_pending(tenant)


BATCH_SIZE = 25


def batch(prefix: str, count: int = BATCH_SIZE) -> list[dict[str, Any]]:
    return [
        {
            "order_identifier": f"{prefix}-{i}",
            "basket": {
                "currency": "DKK",
                "line_items": [
                    {"product_identifier": f"p{i}", "name": "Coffee", "quantity": 1 + i % 3, "price": 25.0},
                    {"product_identifier": "bag", "name": "Bag", "quantity": 1, "price": 2.5},
                ],
            },
        }
        for i in range(count)
    ]


def post_orders(live_server: Any, tenant: Tenant, orders: list[dict[str, Any]]) -> requests.Response:
    return requests.post(
        f"{live_server.url}/imports/incoming_orders?{tenant.query(stock_location='shop-1')}",
        json={"orders": orders},
        # The live server keeps each kept-alive connection in a thread holding a database connection, which
        # would stop pytest-django from dropping the test database at the end.
        headers={"Connection": "close"},
        timeout=30,
    )


def as_posted(item: Any) -> Any:
    """The item as the import endpoint parses it: fractions become Decimal."""
    return json.loads(json.dumps(item), parse_float=Decimal)
