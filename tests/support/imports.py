"""The import API in tests: a valid incoming order, a POST to ``/imports/``, and what the worker does with the
pending items (``materialise_pending``); ``import_orders`` does both for a list of order identifiers."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.test import APIClient

from imports import services
from imports.models import ImportItem, ImportStatus
from tests.conftest import Tenant


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
