"""Back-office REST API (``/api/v1/``): incoming, external and outgoing orders, read-only, by id.

Orders are created by imports and moved by state changes; the spec ("Order states") forbids updating or
deleting incoming and external orders, so nothing here writes.
"""

from __future__ import annotations

from typing import Any

from rest_framework.routers import SimpleRouter

from accounts.scoping import ReadOnlyViewSet
from core.api import Area
from orders import pos_api, selectors
from orders.serializers import (
    ExternalOrderFilterSerializer,
    ExternalOrderOutputSerializer,
    IncomingOrderOutputSerializer,
    OrderFilterSerializer,
    OutgoingOrderOutputSerializer,
)

ORDERS = Area(
    "orders",
    filters={
        "stock_location": "Only orders of this stock location (identifier), e.g. shop-1.",
        "state": "Only orders in this state.",
        "order_identifier": "Only the order with this order_identifier.",
    },
)

_BASKET = {
    "currency": "DKK",
    "line_items": [
        {
            "product_identifier": "tshirt-basic",
            "variant_identifier": "tshirt-basic-m-black",
            "name": "T-shirt, black, M",
            "quantity": 2,
            "price": 199.95,
        }
    ],
}
_CASHIER = {"identifier": "cashier-7", "display_name": "AB", "full_name": "Anne Berg"}
_MOVED_HISTORY = pos_api.INCOMING_ORDER_MOVED["history"]
INCOMING_ORDER_EXAMPLE = {
    **pos_api.INCOMING_ORDER_MOVED,
    "order_identifier": "WEB-10001",
    "basket": _BASKET,
    # as imported: its first change came from the import, not from another shop
    "history": [{**_MOVED_HISTORY[0], "source": "import"}, *_MOVED_HISTORY[1:]],
}


@ORDERS.reads(selectors.incoming_orders, IncomingOrderOutputSerializer, OrderFilterSerializer, INCOMING_ORDER_EXAMPLE)
class IncomingOrderViewSet(ReadOnlyViewSet):
    """Orders received on a stock location from an integrator, newest first, with their state history."""


EXTERNAL_ORDER_EXAMPLE = {
    "id": 55,
    "order_identifier": "ERP-2001",
    "stock_location": "shop-1",
    "basket": _BASKET,
    "customer": {"customer_identifier": "C-42", "name": "Jane Doe"},
    "created_at": "2025-01-15T09:30:00Z",
}


@ORDERS.reads(
    selectors.external_orders, ExternalOrderOutputSerializer, ExternalOrderFilterSerializer, EXTERNAL_ORDER_EXAMPLE
)
class ExternalOrderViewSet(ReadOnlyViewSet):
    """Orders from external systems (no payment, shipping or state), newest first."""


OUTGOING_ORDER_EXAMPLE = {
    "id": 7,
    "order_identifier": "shop-1-000031",
    "stock_location": "shop-1",
    "destination": None,
    "incoming_order": None,
    "basket": {"currency": "DKK", "line_items": [], "total": 399.9},
    "customer": None,
    "payment": None,
    "shipping": None,
    "handling_type": "reserve_and_collect",
    "state": "ready",
    "created_at": "2025-01-15T09:30:00Z",
    "last_change_at": "2025-01-15T11:00:00Z",
    "history": [
        {
            "state": "processing",
            "previous_state": "created",
            "comment": "",
            "cashier": None,
            "source": "import",
            "created_at": "2025-01-15T10:00:00Z",
        },
        {
            "state": "ready",
            "previous_state": "processing",
            "comment": "Ready for pick-up",
            "cashier": _CASHIER,
            "source": "import",
            "created_at": "2025-01-15T11:00:00Z",
        },
    ],
}


@ORDERS.reads(selectors.outgoing_orders, OutgoingOrderOutputSerializer, OrderFilterSerializer, OUTGOING_ORDER_EXAMPLE)
class OutgoingOrderViewSet(ReadOnlyViewSet):
    """Orders placed from a stock location, to another shop or an external system (``destination`` null),
    newest first."""


pos_urls: list[Any] = pos_api.urls  # the POS API of orders (/api/v1/pos/...)


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("incoming-orders", IncomingOrderViewSet, basename="incoming-order")
    router.register("external-orders", ExternalOrderViewSet, basename="external-order")
    router.register("outgoing-orders", OutgoingOrderViewSet, basename="outgoing-order")
