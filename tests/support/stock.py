"""Stock in tests: a stock event body of each type, and a product's stock level in a shop, read or stored."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from accounts.models import StockLocation
from ledger.models import StockLevel
from tests.support.tenants import Tenant


def event(type: str = "received", **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"type": type, "product_id": "1001", "stock_location_id": "shop-1"}
    if type == "received":
        body["adjustment"] = 5
    elif type == "stock_count_reset":
        body.update(new_stock_value=3, stock_count_id="count-1")
    else:
        body["new_stock_value"] = 10
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


def level(tenant: Tenant, product_id: str = "1001", variant_id: str = "") -> Decimal:
    return StockLevel.objects.get(
        account=tenant.account, stock_location=tenant.stock_location, product_id=product_id, variant_id=variant_id
    ).quantity


def set_level(location: StockLocation, quantity: Any, product_id: str = "1001", variant_id: str = "") -> None:
    StockLevel.objects.create(
        account=location.account,
        stock_location=location,
        product_id=product_id,
        variant_id=variant_id,
        quantity=quantity,
    )
