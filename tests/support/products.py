"""Products in tests: a valid product body, creating one through the admin API, a raw request with any body,
and the product edit events stored for a tenant."""

from __future__ import annotations

import copy
from typing import Any

from ledger.api.catalog import PRODUCT_REQUEST_EXAMPLE
from ledger.models import ProductEditEvent
from tests.support.api import AdminApi
from tests.support.tenants import Tenant


def product_body(**overrides: Any) -> dict[str, Any]:
    """The API's example product (a black T-shirt, 199.95 DKK, VAT 25%) with ``overrides``; ``...`` leaves a field
    out."""
    body: dict[str, Any] = {**copy.deepcopy(PRODUCT_REQUEST_EXAMPLE), **overrides}
    return {k: v for k, v in body.items() if v is not ...}


def create(api: AdminApi, **overrides: Any) -> dict[str, Any]:
    response = api.post("products", product_body(**overrides))
    assert response.status_code == 201, response.json()
    return response.json()


def events(tenant: Tenant) -> list[dict[str, Any]]:
    """Documents of the tenant's product edit events, oldest first."""
    return [e.document for e in ProductEditEvent.objects.filter(account=tenant.account).order_by("id")]


def raw(api: AdminApi, method: str, path: str, data: str) -> Any:
    return getattr(api.client, method)(api.url(path), data, content_type="application/json")
