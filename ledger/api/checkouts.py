"""REST API of checkouts and sales: the POS posts checkouts (``POST /api/v1/pos/checkouts``); the
back-office reads checkouts and sales (``/api/v1/checkouts/``, ``/api/v1/sales/``). Sales are immutable,
so nothing else writes."""

from __future__ import annotations

from typing import Any

from django.urls import re_path
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts.scoping import PosView, ReadOnlyViewSet
from core import api as toolkit
from ledger.bodies import checkouts as bodies
from ledger.selectors import checkouts as selectors
from ledger.serializers.checkouts import (
    CheckoutFilterSerializer,
    CheckoutOutputSerializer,
    PosCheckoutOutputSerializer,
    SaleFilterSerializer,
    SaleOutputSerializer,
)
from ledger.services import checkouts as services

# Where a sale was made, as its document's ``source`` says it (a register close statement's omits the cashier).
SOURCE_EXAMPLE = {
    "market_id": "dk",
    "market_name": "Denmark",
    "shop_id": "shop-1",
    "shop_name": "Copenhagen",
    "register_id": "reg-1",
    "register_name": "Till 1",
    "cashier_id": "cashier-7",
    "cashier_name": "AB",
}
_TIMING = {
    "timestamp": 1736931900,
    "timezone": "Europe/Copenhagen",
    "timestamp_string": "2025-01-15T10:05:00.000+01:00",
    "timestamp_date_string": "2025-01-15-10-05",
    "timestamp_week_string": "2025-03",
}
_PAYMENTS = [{"amount": 250, "identifier": "pay-1", "payment_type": "card.external", "success": True}]
_BASKET = {
    "base_price": 250,
    "sub_total": 250,
    "total": 250,
    "total_discounts": 0,
    "total_tax_amount": 50,
    "vat_amount": 50,
    "sales_tax_amount": 0,
    "is_return": False,
    "line_items": [
        {
            "line_item_id": "li-1",
            "id": "tshirt-basic",
            "product_group": "tops",
            "quantity": 2,
            "retail_price": 250,
            "cost_price": 120,
            "base_price": 250,
            "sub_total": 250,
            "total": 250,
            "total_tax_amount": 50,
            "vat_amount": 50,
            "sales_tax_amount": 0,
            "taxes": [{"amount": 50, "rate": 0.25, "name": "VAT", "type": "vat"}],
        }
    ],
    "taxes": [{"amount": 50, "rate": 0.25, "name": "VAT", "type": "vat"}],
}
CHECKOUT_REQUEST_EXAMPLE = {
    "identifier": "co-20250115-0001",
    "timing": {"timestamp": 1736931900, "timezone": "Europe/Copenhagen"},
    "source": {"register_id": "reg-1", "cashier_id": "cashier-7", "cashier_name": "AB"},
    "base_currency_code": "DKK",
    "payments": _PAYMENTS,
    "sales": [{"identifier": "sale-20250115-0001", "sequence_number": 1, "basket": _BASKET}],
}
CHECKOUT_DOCUMENT_EXAMPLE = {**CHECKOUT_REQUEST_EXAMPLE, "voided": False, "timing": _TIMING, "source": SOURCE_EXAMPLE}
CHECKOUT_EXAMPLE = {
    "id": 31,
    "identifier": "co-20250115-0001",
    "register": "reg-1",
    "stock_location": "shop-1",
    "period": 4,
    "voided": False,
    "timestamp": "2025-01-15T09:05:00Z",
    "created_at": "2025-01-15T09:05:01Z",
    "warnings": [],
    "sales": [{"id": 40, "identifier": "sale-20250115-0001", "sequence_number": 1, "kind": "sale", "total": 250}],
    "document": CHECKOUT_DOCUMENT_EXAMPLE,
}

# The answer to another body under a used identifier (``ledger.services.checkouts``).
USED_IDENTIFIER = toolkit.conflict(
    "Identifier used by another checkout",
    "The checkout identifier 'co-20250115-0001' is already used by a different checkout",
    field="identifier",
    code="duplicate",
)

INVALID_CURRENCY = (
    "Invalid input",
    {
        "status": "ERROR",
        "message": "The request is invalid.",
        "errors": [
            {
                "field": "base_currency_code",
                "message": "'XYZ' is not an ISO 4217 currency code",
                "code": "invalid_currency",
            }
        ],
    },
)

CHECKOUTS = toolkit.Area(
    "checkouts",
    filters={
        "register": "Only those of this register (identifier), e.g. reg-1.",
        "stock_location": "Only those of this stock location (identifier).",
        "identifier": "Only the {noun} with this identifier.",
        "checkout_identifier": "Only the sales of this checkout.",
        "kind": "Only sales of this kind.",
        "is_return": "true: only returns; false: no returns.",
        "has_warnings": "true: only sales stored with warnings; false: only without.",
        "voided": "true or false.",
        "from": "Timestamp at or after this ISO 8601 time, e.g. 2025-01-15T00:00:00Z.",
        "to": "Timestamp before this ISO 8601 time (exclusive).",
    },
)


@CHECKOUTS.reads(selectors.checkouts, CheckoutOutputSerializer, CheckoutFilterSerializer, CHECKOUT_EXAMPLE)
class CheckoutViewSet(ReadOnlyViewSet):
    """Checkouts posted by the registers (spec: Checkout), with the sales each yielded; newest first, by the
    timestamp of the checkout."""


SALE_EXAMPLE = {
    "id": 40,
    "identifier": "sale-20250115-0001",
    "checkout_identifier": "co-20250115-0001",
    "sequence_number": 1,
    "register": "reg-1",
    "stock_location": "shop-1",
    "kind": "sale",
    "is_return": False,
    "voided": False,
    "base_currency_code": "DKK",
    "total": 250,
    "timestamp": "2025-01-15T09:05:00Z",
    "created_at": "2025-01-15T09:05:01Z",
    "ecommerce_groups": [],
    "warnings": [],
    "document": {
        "base_currency_code": "DKK",
        "identifier": "sale-20250115-0001",
        "payments": _PAYMENTS,
        "sequence_number": 1,
        "source": SOURCE_EXAMPLE,
        "summary": _BASKET,
        "timing": _TIMING,
        "voided": False,
        "checkout_identifier": "co-20250115-0001",
    },
}


@CHECKOUTS.reads(selectors.sales, SaleOutputSerializer, SaleFilterSerializer, SALE_EXAMPLE)
class SaleViewSet(ReadOnlyViewSet):
    """Sales, returns and expenses (spec: Sale), immutable; ``document`` is the exported JSON. Newest first, by
    the timestamp of the checkout."""


class CheckoutPosView(PosView):
    """``POST /api/v1/pos/checkouts``: a register posts a completed (or voided) checkout."""

    @extend_schema(
        tags=["pos"],
        summary="Post a checkout",
        description=(
            "The spec's Checkout. Stored once per `identifier`: the same body again answers 200 with the "
            "stored checkout and `created: false`; another body under a used identifier answers 409. In a "
            "checkout of several sales each sale part carries its own `payments`.\n\n"
            "Refused (400) only for what the spec states or what cannot be true in any reading (missing or "
            "mistyped fields, payments that do not cover the total, `total_tax_amount` differing from its parts, "
            "more than one return, ...). A relation the spec does not state (e.g. `total_discounts = base_price - "
            "sub_total`) is answered in `warnings`: the checkout is stored and exported exactly as sent. The "
            "lists are in docs/amounts.md."
        ),
        parameters=toolkit.AUTH_PARAMETERS,
        request={"application/json": bodies.Checkout},
        responses={
            201: PosCheckoutOutputSerializer,
            200: OpenApiResponse(PosCheckoutOutputSerializer, description="A replay of a stored checkout."),
            **toolkit.error_responses(400, 409, scope="pos", examples={400: INVALID_CURRENCY, 409: USED_IDENTIFIER}),
        },
        examples=[
            toolkit.request_example("checkout", CHECKOUT_REQUEST_EXAMPLE),
            toolkit.response_example("created", {**CHECKOUT_EXAMPLE, "created": True}, status_code=201),
            toolkit.response_example("replayed", {**CHECKOUT_EXAMPLE, "created": False}),
        ],
    )
    def post(self, request: Request) -> Response:
        result = services.record_checkout(account=self.account, body=self.body())
        body = PosCheckoutOutputSerializer(result.checkout, context={"created": result.created}).data
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


pos_urls: list[Any] = [re_path(r"^pos/checkouts/?$", CheckoutPosView.as_view(), name="pos-checkouts")]


def register(router: SimpleRouter) -> None:
    """Routes of this area under /api/v1/."""
    router.register("checkouts", CheckoutViewSet, basename="checkout")
    router.register("sales", SaleViewSet, basename="sale")
