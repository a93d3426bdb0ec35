"""The POS API of orders (``/api/v1/pos/...``, keys with the ``pos`` scope): a shop moves its incoming orders
and places outgoing orders (spec: Order, general model; Order states; Cashier; Events).

Each view reads the body, validates it with its declared body in ``orders.bodies`` (which is also the
request schema published), calls one service and answers the order as the back-office API shows it.
"""

from __future__ import annotations

from typing import Any

from django.urls import re_path
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.scoping import PosView
from core.api import ErrorOutputSerializer, error_responses
from core.declare import BodyMeta
from core.errors import ServiceError
from orders import bodies, selectors, services
from orders.serializers import IncomingOrderOutputSerializer, OutgoingOrderOutputSerializer


def validated(declared: BodyMeta, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ServiceError("The body must be a JSON object", field="body", code="invalid_type")
    return declared.validated(body)  # type: ignore[no-any-return]


# --- OpenAPI ------------------------------------------------------------------------------------------------

AUTH_PARAMETERS = [
    OpenApiParameter("account", str, required=True, description="The account identifier."),
    OpenApiParameter("integration", str, required=True, description="The integration the POS key belongs to."),
    OpenApiParameter("apikey", str, required=False, description="A key with the `pos` scope (or a Bearer header)."),
]
PATH_PARAMETERS = [
    OpenApiParameter(
        "stock_location", str, OpenApiParameter.PATH, description="The shop handling the order, e.g. `shop-1`."
    ),
    OpenApiParameter(
        "order_identifier",
        str,
        OpenApiParameter.PATH,
        description="The order's identifier on that shop (percent-encode reserved characters).",
    ),
]


def _request(name: str, value: dict[str, Any]) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


def _answer(name: str, status_code: int, value: dict[str, Any]) -> OpenApiExample:
    return OpenApiExample(name, value=value, response_only=True, status_codes=[str(status_code)])


def _error(name: str, status_code: int, message: str, field: str, code: str) -> OpenApiExample:
    error = {"field": field, "message": message, "code": code}
    return _answer(name, status_code, {"status": "ERROR", "message": message, "errors": [error]})


def _refused(description: str) -> OpenApiResponse:
    """An error answer in the responses: the shared error body (its examples are the ``_error`` ones)."""
    return OpenApiResponse(ErrorOutputSerializer, description=description)


_CASHIER = {"identifier": "cashier-7", "display_name": "AB", "full_name": "Anne Berg"}
_BASKET = {
    "base_price": 399.9,
    "sales_tax_amount": 0,
    "sub_total": 399.9,
    "total": 399.9,
    "total_discounts": 0,
    "total_tax_amount": 79.98,
    "vat_amount": 79.98,
    "is_return": False,
    "line_items": [
        {
            "line_item_id": "li-1",
            "id": "tshirt-basic",
            "variant_id": "tshirt-basic-m-black",
            "name": "T-shirt, black, M",
            "quantity": 2,
            "base_price": 399.9,
            "retail_price": 399.9,
            "sales_tax_amount": 0,
            "sub_total": 399.9,
            "total": 399.9,
            "total_tax_amount": 79.98,
            "vat_amount": 79.98,
        }
    ],
    "taxes": [{"rate": 0.25, "amount": 79.98, "type": "vat", "name": "VAT"}],
}
_HISTORY: list[dict[str, Any]] = [
    {
        "state": "created",
        "previous_state": None,
        "comment": "",
        "cashier": None,
        "source": "system",
        "created_at": "2025-01-15T09:30:00Z",
    },
    {
        "state": "processing",
        "previous_state": "created",
        "comment": "Picking",
        "cashier": _CASHIER,
        "source": "pos",
        "created_at": "2025-01-15T10:05:00Z",
    },
]
# An incoming order as the state change answers it; the back-office API's example (orders.api) is this order
# as the integrator imported it.
INCOMING_ORDER_MOVED: dict[str, Any] = {
    "id": 101,
    "order_identifier": "shop-2-000031",
    "stock_location": "shop-1",
    "basket": _BASKET,
    "customer": {"customer_identifier": "C-42", "name": "Jane Doe", "email": "jane@example.com"},
    "payment": {"reference": "PAY-778899"},
    "shipping": None,
    "handling_type": "click_and_collect",
    "state": "processing",
    "created_at": "2025-01-15T09:30:00Z",
    "last_change_at": "2025-01-15T10:05:00Z",
    "history": _HISTORY,
}
STATE_CHANGE_DOCS: dict[str, Any] = {
    "operation_id": "pos_incoming_order_state_change",
    "summary": "Move an incoming order to a new state",
    "description": (
        "The shop's POS moves one of its incoming orders (spec: Order states). Allowed: forward along created → "
        "processing → ready → completed (skipping allowed), rejected or cancelled from any open state, nothing out "
        "of completed, rejected or cancelled; a refused move answers 409 naming `state`. `cashier` is the spec's "
        "Cashier object or the identifier of a cashier of the account. Each change produces an incoming order "
        "state change event `{order, state}`. For an order another shop of the account placed, that shop's "
        "outgoing order moves to the same state. Answers the order with its state history."
    ),
    "tags": ["pos"],
    "parameters": [*PATH_PARAMETERS, *AUTH_PARAMETERS],
    "request": {"application/json": bodies.IncomingOrderStateChange},
    "responses": {
        200: IncomingOrderOutputSerializer,
        **error_responses(scope="pos"),
        400: _refused("Invalid body or unknown cashier."),
        404: _refused("Unknown stock location or order."),
        409: _refused("The transition rules refuse the move."),
    },
    "examples": [
        _request("With a Cashier object", {"state": "processing", "comment": "Picking", "cashier": _CASHIER}),
        _request("With a cashier identifier", {"state": "ready", "cashier": "cashier-7"}),
        _answer("Moved", 200, INCOMING_ORDER_MOVED),
        _error("Unknown cashier", 400, "unknown cashier 'cashier-99'", "cashier", "unknown"),
        _error(
            "Unknown order",
            404,
            "no incoming order 'WEB-1' on stock location 'shop-1'",
            "order_identifier",
            "not_found",
        ),
        _error("Refused move", 409, "an order in state 'completed' cannot move to 'processing'", "state", "conflict"),
    ],
}

_CUSTOMER = {**INCOMING_ORDER_MOVED["customer"], "phone_number": "+4512345678"}  # the same customer
_ORDER: dict[str, Any] = {
    "order_identifier": "shop-1-000031",
    "basket": _BASKET,
    "customer": _CUSTOMER,
    "payment": {"reference": "PAY-778899"},
}
_OUTGOING = {
    "id": 7,
    "order_identifier": "shop-1-000031",
    "stock_location": "shop-1",
    "basket": _BASKET,
    "customer": _CUSTOMER,
    "payment": {"reference": "PAY-778899"},
    "shipping": None,
    "handling_type": "click_and_collect",
    "state": "created",
    "created_at": "2025-01-15T09:30:00Z",
    "last_change_at": "2025-01-15T09:30:00Z",
    "history": [{**_HISTORY[0], "source": "pos"}],
}
OUTGOING_ORDER_DOCS: dict[str, Any] = {
    "operation_id": "pos_outgoing_order_create",
    "summary": "Place an order from a shop",
    "description": (
        "The shop's POS places an order (spec: Order, general model; the basket is the full sale.summary shape). "
        "`destination` is another stock location of the account, which receives it at once as an incoming order "
        "in state `created` (with an incoming order state change event; the outgoing order then follows the "
        "states that shop sets), or `external`, which exports it as an outgoing order for the integrated system "
        "(its state changes come back through `/imports/outgoing_order_state_changes`). Handling type: no "
        "`payment` = Reserve & Collect, `payment` = Click & Collect, `payment` and `shipping` = Ship from Store; "
        "`shipping` without `payment` is refused. An `order_identifier` already used by an outgoing order of the "
        "shop or an incoming order of the destination answers 409."
    ),
    "tags": ["pos"],
    "parameters": AUTH_PARAMETERS,
    "request": {"application/json": bodies.OutgoingOrder},
    "responses": {
        201: OutgoingOrderOutputSerializer,
        **error_responses(scope="pos"),
        400: _refused("Invalid body or unknown stock location."),
        409: _refused("The order_identifier is already used."),
    },
    "examples": [
        _request("To another shop", {"stock_location": "shop-1", "destination": "shop-2", "order": _ORDER}),
        _request(
            "To the external system, shipped",
            {
                "stock_location": "shop-1",
                "destination": "external",
                "order": {
                    **_ORDER,
                    "order_identifier": "shop-1-000032",
                    "shipping": {
                        "address": {"name": "Jane Doe", "street": "Nørregade 1", "city": "København"},
                        "method_id": "gls-parcelshop",
                        "method_title": "GLS parcel shop",
                    },
                },
            },
        ),
        _answer(
            "Placed with another shop",
            201,
            {
                **_OUTGOING,
                "destination": "shop-2",
                "incoming_order": {"id": 101, "stock_location": "shop-2", "order_identifier": "shop-1-000031"},
            },
        ),
        _error(
            "Same shop",
            400,
            "the destination must be another stock location than the one placing the order",
            "destination",
            "same_stock_location",
        ),
        _error(
            "Duplicate",
            409,
            "order_identifier 'shop-1-000031' is already used by an order on the destination or this stock location",
            "order.order_identifier",
            "duplicate",
        ),
    ],
}


# --- Views ------------------------------------------------------------------------------------------------


class IncomingOrderStateView(PosView):
    """POST a state change of an incoming order of the shop in the path."""

    @extend_schema(**STATE_CHANGE_DOCS)
    def post(self, request: Request, stock_location: str, order_identifier: str) -> Response:
        change = validated(bodies.IncomingOrderStateChange, self.body())
        order = services.change_incoming_order_state_at(
            account=self.account,
            stock_location_identifier=stock_location,
            order_identifier=order_identifier,
            state=change["state"],
            comment=change.get("comment", ""),
            cashier=change.get("cashier"),
        )
        answer = selectors.incoming_order(account=self.account, pk=order.pk)
        return Response(IncomingOrderOutputSerializer(answer).data)


class OutgoingOrdersView(PosView):
    """POST places an order from a shop, to another shop of the account or to the external system."""

    @extend_schema(**OUTGOING_ORDER_DOCS)
    def post(self, request: Request) -> Response:
        body = validated(bodies.OutgoingOrder, self.body())
        order = services.place_outgoing_order(
            account=self.account,
            stock_location_identifier=body["stock_location"],
            destination_identifier=body["destination"],
            order=body["order"],
        )
        answer = selectors.outgoing_order(account=self.account, pk=order.pk)
        return Response(OutgoingOrderOutputSerializer(answer).data, status=status.HTTP_201_CREATED)


# With and without the trailing slash (a POST cannot be redirected). Stock location identifiers never hold
# a "/"; the order identifier takes everything up to the final "/state", so a percent-encoded "/" works too.
urls: list[Any] = [
    re_path(
        r"^pos/incoming-orders/(?P<stock_location>[^/]+)/(?P<order_identifier>.+)/state/?$",
        IncomingOrderStateView.as_view(),
        name="pos-incoming-order-state",
    ),
    re_path(r"^pos/outgoing-orders/?$", OutgoingOrdersView.as_view(), name="pos-outgoing-orders"),
]
