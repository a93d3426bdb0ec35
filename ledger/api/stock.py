"""REST API of the ledger's stock (spec: Stock event): current stock and stock events under ``/api/v1/``
(admin scope, read-only), and ``POST /api/v1/pos/stock-events`` (pos scope) for goods received, stock counts
and external resets. Sales and returns move stock by themselves, through the checkout."""

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
from core.errors import PayloadTooLarge, ServiceError
from ledger.bodies.stock import MAX_EVENTS_PER_REQUEST, POS_STOCK_EVENTS
from ledger.outbox import stock_event_json as to_json
from ledger.selectors import stock as selectors
from ledger.serializers.stock import (
    StockEventFilterSerializer,
    StockEventOutputSerializer,
    StockEventsRecordedSerializer,
    StockLevelFilterSerializer,
    StockLevelOutputSerializer,
)
from ledger.services import stock as services

STOCK = toolkit.Area(
    "stock",
    filters={
        "stock_location": "Only this stock location (identifier), e.g. shop-1.",
        "product_id": "Only this product id.",
        "variant_id": "Only this variant id.",
        "type": "Only events of this type.",
        "sale_id": "Only events caused by this sale (identifier).",
    },
)

STOCK_LEVEL_EXAMPLE = {
    "id": 31,
    "stock_location": "shop-1",
    "product_id": "tshirt-basic",
    "variant_id": "tshirt-basic-m-black",
    "quantity": 12,
    "updated_at": "2025-01-15T09:30:00Z",
}


@STOCK.reads(selectors.stock_levels, StockLevelOutputSerializer, StockLevelFilterSerializer, STOCK_LEVEL_EXAMPLE)
class StockLevelViewSet(ReadOnlyViewSet):
    """Current stock of a product (and variant) on a stock location, which may be negative; listed by stock
    location, product and variant."""


STOCK_EVENT_EXAMPLE = {
    "id": 907,
    "type": "stock_count_reset",
    "stock_location": "shop-1",
    "product_id": "tshirt-basic",
    "variant_id": "tshirt-basic-m-black",
    "adjustment": None,
    "new_stock_value": 12,
    "sale_id": None,
    "stock_count_id": "count-2025-01",
    "stock_count_expected": 14,
    "stock_count_diff": -2,
    "timestamp": "2025-01-15T09:30:00Z",
    "created_at": "2025-01-15T09:30:01Z",
}


@STOCK.reads(selectors.stock_events, StockEventOutputSerializer, StockEventFilterSerializer, STOCK_EVENT_EXAMPLE)
class StockEventViewSet(ReadOnlyViewSet):
    """Every move of stock, newest first: sales and returns, goods received, stock counts, external resets."""


# --- POS ------------------------------------------------------------------------------------------------------

POS_REQUEST_EXAMPLE = [
    {"type": "received", "product_id": "tshirt-basic", "stock_location_id": "shop-1", "adjustment": 24},
    {
        "type": "stock_count_reset",
        "product_id": "tshirt-basic",
        "variant_id": "tshirt-basic-m-black",
        "stock_location_id": "shop-1",
        "new_stock_value": 12,
        "stock_count_id": "count-2025-01",
        "timestamp": "2025-01-15T09:30:00+01:00",
    },
]
POS_RESPONSE_EXAMPLE = {
    "status": "OK",
    "message": "Recorded 2 stock event(s)",
    "stock_events": [
        {
            "id": 906,
            "adjustment": 24,
            "product_id": "tshirt-basic",
            "stock_location_id": "shop-1",
            "timestamp": "2025-01-15T08:31:02Z",
            "type": "received",
        },
        {
            "id": 907,
            "new_stock_value": 12,
            "product_id": "tshirt-basic",
            "variant_id": "tshirt-basic-m-black",
            "stock_location_id": "shop-1",
            "stock_count_diff": -2,
            "stock_count_expected": 14,
            "stock_count_id": "count-2025-01",
            "timestamp": "2025-01-15T08:30:00Z",
            "type": "stock_count_reset",
        },
    ],
    "stock_levels": [
        {
            "id": 30,
            "stock_location": "shop-1",
            "product_id": "tshirt-basic",
            "variant_id": None,
            "quantity": 31,
            "updated_at": "2025-01-15T08:31:02Z",
        },
        {**STOCK_LEVEL_EXAMPLE, "updated_at": "2025-01-15T08:31:02Z"},
    ],
}

_TOO_MANY = f"At most {MAX_EVENTS_PER_REQUEST} stock events per request"
TOO_MANY_EXAMPLE = {
    "status": "ERROR",
    "message": _TOO_MANY,
    "errors": [{"field": "body", "message": _TOO_MANY, "code": "too_many_items"}],
}


def posted_events(body: Any) -> list[str]:
    """The path of each posted event: a single object (a path without an index) or an array of 1 to
    ``MAX_EVENTS_PER_REQUEST`` objects (``[i]``). Another body is refused here, with its own status and code."""
    if isinstance(body, dict):
        return [""]
    if not isinstance(body, list):
        raise ServiceError(
            "The body must be a stock event object or an array of them", field="body", code="invalid_type"
        )
    if not body:
        raise ServiceError("The body must contain at least one stock event", field="body", code="empty")
    if len(body) > MAX_EVENTS_PER_REQUEST:
        raise PayloadTooLarge(_TOO_MANY, field="body", code="too_many_items")
    return [f"[{i}]" for i in range(len(body))]


class StockEventsPosView(PosView):
    """``POST /api/v1/pos/stock-events``: all or nothing; every refused event is named by its path."""

    @extend_schema(
        tags=["pos"],
        summary="Record stock events",
        description=(
            "Goods received (`received`, a positive `adjustment`), stock counts (`stock_count_reset`, the counted "
            "`new_stock_value` and a `stock_count_id`; the service computes `stock_count_expected` and "
            "`stock_count_diff` from its own level) and external resets (`external_reset`, an `adjustment` or a "
            "`new_stock_value`). The body is one event or an array of up to "
            f"{MAX_EVENTS_PER_REQUEST}. `timestamp` is an ISO 8601 string with a time zone or Unix seconds "
            "(default: now). All or nothing: when any event is refused, none is recorded and every refused field "
            "is listed (e.g. `[3].new_stock_value`). `sale` and `return` events come from checkouts and are "
            "refused here."
        ),
        parameters=toolkit.AUTH_PARAMETERS,
        request={"application/json": POS_STOCK_EVENTS},
        responses={
            201: OpenApiResponse(StockEventsRecordedSerializer, description="Recorded."),
            **toolkit.error_responses(400, scope="pos"),
            413: OpenApiResponse(
                toolkit.ErrorOutputSerializer,
                description=f"More than {MAX_EVENTS_PER_REQUEST} events.",
                examples=[toolkit.response_example("Too many events", TOO_MANY_EXAMPLE, status_code=413)],
            ),
        },
        examples=[
            toolkit.request_example("Goods received and a stock count", POS_REQUEST_EXAMPLE),  # type: ignore[arg-type]
            toolkit.response_example("Recorded", POS_RESPONSE_EXAMPLE, status_code=201),
        ],
    )
    def post(self, request: Request) -> Response:
        body = self.body()
        paths = posted_events(body)
        events = POS_STOCK_EVENTS.validated(body)
        recorded = services.record_stock_events(account=self.account, events=events, paths=paths)
        levels = {(e.stock_location_id, e.product_id, e.variant_id): e for e in recorded}
        body = {
            "status": "OK",
            "message": f"Recorded {len(recorded)} stock event(s)",
            "stock_events": [{"id": e.pk, **to_json(e)} for e in recorded],
            "stock_levels": [
                StockLevelOutputSerializer(level).data
                for level in selectors.levels_of(account=self.account, keys=list(levels))
            ],
        }
        return Response(body, status=status.HTTP_201_CREATED)


# With or without the trailing slash, as the other POS paths: a POST cannot be redirected.
pos_urls: list[Any] = [re_path(r"^pos/stock-events/?$", StockEventsPosView.as_view(), name="pos-stock-events")]


def register(router: SimpleRouter) -> None:
    """Routes of this area under /api/v1/."""
    router.register("stock", StockLevelViewSet, basename="stock-level")
    router.register("stock-events", StockEventViewSet, basename="stock-event")
