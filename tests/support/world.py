"""A tenant with one real object behind every path parameter of the OpenAPI schema.

The hostile-input suite and schemathesis both send requests to every operation; with these identifiers in
the path a request reaches the view's parsing and validation instead of stopping at a 404.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from rest_framework.test import APIClient

from accounts.models import ApiKey, AuditEntry
from campaigns.models import Campaign, ProductRule
from exports.models import ExportItem, ExportQueue
from giftcards.models import GiftCard
from imports.models import ImportItem
from integrations.models import IntegrationCall, RuntimeIntegration
from ledger.models import (
    Checkout,
    Expense,
    NewsletterSignup,
    Product,
    RegisterCloseStatement,
    Sale,
    StockEvent,
    StockLevel,
)
from orders.models import ExternalOrder, IncomingOrder, OutgoingOrder
from tests.factories import (
    CashierFactory,
    ExternalOrderFactory,
    ImportItemFactory,
    IncomingOrderFactory,
    OutgoingOrderFactory,
    RegisterFactory,
)
from tests.support.checkouts import checkout_body
from tests.support.tenants import Tenant, make_tenant


@dataclass
class World:
    tenant: Tenant
    client: APIClient
    # "{collection}" of a path (e.g. "markets", "pos/giftcards") -> the identifier of one of its objects.
    ids: dict[str, str] = field(default_factory=dict)

    def key_for(self, path: str) -> str:
        if path.startswith("/imports/"):
            return self.tenant.imports_key
        if path.startswith("/api/v1/pos/"):
            return self.tenant.pos_key
        return self.tenant.admin_key

    def query(self, path: str, **extra: str) -> dict[str, str]:
        return {**self.tenant.params(self.key_for(path)), **extra}

    def path_parameters(self, path: str, names: list[str]) -> dict[str, str]:
        """A real value for each path parameter of ``path`` (a schema path such as ``/api/v1/sales/{id}/``)."""
        values: dict[str, str] = {}
        for name in names:
            if name == "stock_location":
                values[name] = self.tenant.stock_location.identifier
            elif name == "order_identifier":
                values[name] = self.ids["incoming-order-identifier"]
            elif name == "register_id":
                values[name] = "reg-1"
            else:
                collection = path.split("/{", 1)[0].removeprefix("/api/v1/")
                values[name] = self.ids[collection]
        return values

    def call(self, method: str, path: str, body: Any = None, **params: str) -> Any:
        url = f"{path}?{self.tenant.query(self.key_for(path), **params)}"
        data = None if body is None else json.dumps(body, default=str)
        return getattr(self.client, method.lower())(url, data, content_type="application/json")


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code in (200, 201), (response.status_code, response.content[:500])
    return response.json()


def build_world() -> World:
    tenant = make_tenant("acme")
    account = tenant.account
    world = World(tenant=tenant, client=APIClient())
    RegisterFactory(account=account, stock_location=tenant.stock_location, identifier="reg-1")
    CashierFactory(account=account, identifier="cashier-1")

    # A queue before the entities, so each of them leaves an export item (the export log).
    queue = ExportQueue.objects.create(
        account=account,
        name="sales",
        entity_type="sales",
        trigger="realtime",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://receiver.example/hook"},
    )
    _ok(world.call("POST", "/api/v1/products/", {"id": "p-1", "name": "T-shirt", "retail_price": 100}))
    _ok(world.call("POST", "/api/v1/expenses/", {"id": "exp-1", "name": "Coffee"}))
    _ok(world.call("POST", "/api/v1/pos/registers/reg-1/open", {"cash_total_at_open": 0}))
    _ok(world.call("POST", "/api/v1/pos/checkouts/", checkout_body()))
    _ok(
        world.call(
            "POST",
            "/api/v1/pos/stock-events/",
            {"type": "received", "product_id": "p-1", "stock_location_id": "shop-1", "adjustment": 5},
        )
    )
    _ok(world.call("POST", "/api/v1/pos/newsletter-signups/", {"email": "ann@example.com"}))
    _ok(
        world.call(
            "POST",
            "/api/v1/pos/registers/reg-1/close",
            {"counted": [{"payment_type_identifier": "cash", "currency_code": "DKK", "counted": 0}]},
        )
    )
    _ok(
        world.call(
            "POST",
            "/imports/discount_campaigns",
            {
                "campaigns": [
                    {
                        "id": "c-1",
                        "type": "percentage_discount-tag",
                        "name": "Tops",
                        "display_name": "Tops -10%",
                        "priority": 1,
                        "tag": "tops",
                        "percentage": 0.1,
                    }
                ]
            },
        )
    )
    _ok(
        world.call(
            "POST",
            "/imports/product_rules",
            {
                "product_rules": [
                    {
                        "id": "r-1",
                        "type": "container_deposit",
                        "name": "Bottle",
                        "display_name": "Pant",
                        "tag": "bottle",
                        "price": 1,
                    }
                ]
            },
        )
    )
    incoming = IncomingOrderFactory(account=account, stock_location=tenant.stock_location, order_identifier="in-1")
    ExternalOrderFactory(account=account, stock_location=tenant.stock_location, order_identifier="ext-1")
    OutgoingOrderFactory(account=account, stock_location=tenant.stock_location, order_identifier="out-1")
    ImportItemFactory(account=account, integration=tenant.integration)
    runtime = RuntimeIntegration.objects.create(
        account=account, kind="customer_lookup", method="GET", url="https://erp.example/customers"
    )
    IntegrationCall.objects.create(
        account=account, integration=runtime, kind="customer_lookup", ok=True, status_code=200, duration_ms=5
    )
    GiftCard.objects.create(
        account=account,
        card_id="gc-1",
        code="GC-1",
        currency_code="DKK",
        amount=Decimal(100),
        status=2,
        create_date=datetime(2026, 1, 1, tzinfo=UTC),
        expiry_date=datetime(2027, 1, 1, tzinfo=UTC),
    )

    def first(model: Any, attribute: str = "pk") -> str:
        return str(getattr(model.objects.filter(account=account).order_by("pk").first(), attribute))

    world.ids = {
        "api-keys": str(ApiKey.objects.filter(account=account).order_by("pk").first().pk),  # type: ignore[union-attr]
        "audit-log": first(AuditEntry),
        "campaigns": first(Campaign),
        "cashiers": "cashier-1",
        "checkouts": first(Checkout),
        "expenses": first(Expense, "expense_id"),
        "export-logs": first(ExportItem),
        "export-queues": str(queue.pk),
        "external-orders": first(ExternalOrder),
        "import-logs": first(ImportItem),
        "incoming-orders": first(IncomingOrder),
        "incoming-order-identifier": incoming.order_identifier,
        "integrations": tenant.integration.identifier,
        "markets": tenant.market.identifier,
        "newsletter-signups": first(NewsletterSignup),
        "outgoing-orders": first(OutgoingOrder),
        "product-rules": first(ProductRule),
        "products": first(Product, "product_id"),
        "register-close-statements": first(RegisterCloseStatement),
        "registers": "reg-1",
        "runtime-integration-calls": first(IntegrationCall),
        "runtime-integrations": str(runtime.pk),
        "sales": first(Sale),
        "stock": first(StockLevel),
        "stock-events": first(StockEvent),
        "stock-locations": tenant.stock_location.identifier,
        "pos/customer-accounts": "cust-1",
        "pos/customers": "cust-1",
        "pos/giftcards": "GC-1",
    }
    return world
