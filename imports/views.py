"""The ``/imports/`` endpoints (spec: Endpoints A): authenticate, parse, call one service, shape the answer.

Answers: all items accepted, 200 ``{"status": "OK", "message"}``; some refused, 207 ``"PARTIAL"``; none
accepted, 400 ``"ERROR"``; the last two carry ``failed: [{index, id, errors: [{field, message, code}]}]``.
A request that cannot be read at all (bad JSON, wrong content type, too large, unknown stock location
or market) answers a 4xx ``{"status": "ERROR", "message", "errors": [{field, message, code}]}``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors as account_selectors
from accounts.authentication import ApiKeyAuthentication, ApiPrincipal, HasImportsScope
from accounts.models import Market, StockLocation
from core import jsonparse
from core.api import read_json, read_json_body
from core.errors import InvalidInput, PayloadTooLarge, ServiceError
from core.nodes import Report
from imports import bodies, docs, services
from imports.models import ImportKind

STATUS_CODES = {"OK": 200, "PARTIAL": 207, "ERROR": 400}


@dataclass
class Batch:
    """The posted items, and per item index the values the bounded parser refused in it."""

    items: list[Any]
    refused: dict[int, list[dict[str, str]]]


def items_under(parsed: jsonparse.Parsed, key: str | None, *, allow_empty: bool = False) -> Batch:
    """The list of items: ``body[key]``, or the body itself when ``key`` is None.

    A refused value inside an item fails that item only (its path is given relative to the item, as every item
    error is); one outside the items refuses the request."""
    body = parsed.value
    field = key or "body"
    start = 0 if key is None else 1
    refused: dict[int, list[dict[str, str]]] = {}
    elsewhere = []
    for problem in parsed.problems:
        path = problem.path
        index = path[start] if len(path) > start else None
        if isinstance(index, int) and path[:start] == ((key,) if key else ()):
            refused.setdefault(index, []).append(problem.as_error(start=start + 1, root=""))
        else:
            elsewhere.append(problem)
    jsonparse.refuse(elsewhere)
    if key is None:
        if not isinstance(body, list):
            raise ServiceError("The body must be a JSON array", field=field, code="invalid_type")
        items = body
    else:
        if not isinstance(body, dict):
            raise ServiceError(
                f"The body must be a JSON object with the key '{key}'", field="body", code="invalid_type"
            )
        if key not in body:
            raise ServiceError(f"'{key}' is required", field=key, code="required")
        items = body[key]
        if not isinstance(items, list):
            raise ServiceError(f"'{key}' must be an array", field=key, code="invalid_type")
    if not items and not allow_empty:
        raise ServiceError(f"'{field}' must contain at least one item", field=field, code="empty")
    if len(items) > settings.IMPORT_MAX_ITEMS:
        raise PayloadTooLarge(
            f"At most {settings.IMPORT_MAX_ITEMS} items per request", field=field, code="too_many_items"
        )
    return Batch(items, refused)


def result_response(result: services.ImportResult) -> Response:
    return Response(result.body(), status=STATUS_CODES[result.status])


class ImportView(APIView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasImportsScope]
    parser_classes: list[type] = []  # the body is read by read_json_body, with its own limits
    schema = docs.ImportSchema()

    def body(self, request: Request) -> jsonparse.Parsed:
        return read_json(request)

    def principal(self, request: Request) -> ApiPrincipal:
        assert isinstance(request.user, ApiPrincipal)
        return request.user

    def sender(self, request: Request) -> dict[str, Any]:
        """Who sends the import, as every import service takes it: ``account=..., integration=...``."""
        principal = self.principal(request)
        return {"account": principal.account, "integration": principal.integration}

    def stock_location(self, request: Request) -> StockLocation:
        identifier = request.query_params.get("stock_location", "")
        if not identifier:
            raise ServiceError(
                "the stock_location query parameter is required", field="stock_location", code="required"
            )
        location = account_selectors.stock_location_by_identifier(
            account=self.principal(request).account, identifier=identifier
        )
        if location is None:
            raise ServiceError(f"unknown stock location '{identifier[:64]}'", field="stock_location", code="unknown")
        return location

    def markets(self, request: Request) -> list[Market]:
        return services.resolve_markets(
            account=self.principal(request).account, markets_param=request.query_params.get("markets")
        )

    def ids_to_delete(self, request: Request) -> list[str]:
        """``?ids=a,b`` and/or a body that is a bare array of ids or ``{"ids": [...]}``."""
        ids = [i.strip() for i in request.query_params.get("ids", "").split(",") if i.strip()]
        has_body = request.META.get("CONTENT_LENGTH") not in (None, "", "0") or bool(
            request.META.get("HTTP_TRANSFER_ENCODING")
        )
        if has_body:
            report = Report()
            listed = bodies.DELETION_IDS.check(read_json_body(request), "", report)
            if report.errors:
                raise InvalidInput(report.errors, message=report.errors[0]["message"])
            ids.extend(listed)
        if not ids:
            raise ServiceError("Name the ids to delete in ?ids=a,b or in the body", field="ids", code="required")
        if len(ids) > settings.IMPORT_MAX_ITEMS:
            raise PayloadTooLarge(f"At most {settings.IMPORT_MAX_ITEMS} ids per request", field="ids")
        return ids


class BatchImport(ImportView):
    """POST hands the items the body lists under ``body_key`` (the body itself when None) to the kind's service as
    ``items_argument``, with who sent them and the service's other ``arguments`` (the kind, and where the items
    go: the stock location or the markets the query names); the service checks each item and queues or stores
    the valid ones. The endpoint's description is its class's docstring."""

    body_key: str | None
    items_argument = "items"
    allow_empty = False
    service: Callable[..., services.ImportResult]

    def arguments(self, request: Request) -> dict[str, Any]:
        return {}

    def post(self, request: Request) -> Response:
        arguments = self.arguments(request)  # an unknown stock location or market is refused before the body is read
        batch = items_under(self.body(request), self.body_key, allow_empty=self.allow_empty)
        result = type(self).service(
            **self.sender(request), **arguments, **{self.items_argument: batch.items}, refused=batch.refused
        )
        return result_response(result)


class OrdersImport(BatchImport):
    """POST queues orders for the stock location named in the query."""

    kind: str
    service = staticmethod(services.queue_orders)

    def arguments(self, request: Request) -> dict[str, Any]:
        return {"kind": self.kind, "stock_location": self.stock_location(request)}


@extend_schema_view(post=extend_schema(**docs.INCOMING_ORDERS))
class IncomingOrdersImport(OrdersImport):
    """Queues orders for the stock location. Handling type: no `payment` = Reserve & Collect, `payment` without
    `shipping` = Click & Collect, both = Ship from Store; `shipping` without `payment` is refused. An `order_identifier`
    already used on the stock location is refused as a duplicate."""

    kind = ImportKind.INCOMING_ORDER
    body_key = "orders"


@extend_schema_view(post=extend_schema(**docs.EXTERNAL_ORDERS))
class ExternalOrdersImport(OrdersImport):
    """Queues external orders (no payment or shipping) for the stock location."""

    kind = ImportKind.EXTERNAL_ORDER
    body_key = "external_orders"


@extend_schema_view(post=extend_schema(**docs.STATE_CHANGES))
class OutgoingOrderStateChangesImport(BatchImport):
    """Queues state changes of orders this service placed. Allowed: forward along created → processing → ready →
    completed (skipping allowed), rejected or cancelled from any open state, nothing out of completed, rejected or
    cancelled. A refused or unknown-order change ends as a failure in the import log."""

    body_key = None  # the body is the array of changes
    items_argument = "changes"
    service = staticmethod(services.queue_outgoing_order_state_changes)


class DefinitionsImport(BatchImport):
    """POST stores campaigns or product rules per market; DELETE removes the listed ids."""

    kind: str
    service = staticmethod(services.import_definitions)
    allow_empty = True

    def arguments(self, request: Request) -> dict[str, Any]:
        return {"kind": self.kind, "markets": self.markets(request)}

    def delete(self, request: Request) -> Response:
        body = services.delete_definitions(
            **self.sender(request),
            kind=self.kind,
            markets=self.markets(request),
            ids=self.ids_to_delete(request),
        )
        return Response(body)


@extend_schema_view(post=extend_schema(**docs.CAMPAIGNS_POST), delete=extend_schema(**docs.CAMPAIGNS_DELETE))
class DiscountCampaignsImport(DefinitionsImport):
    """Stores the campaigns in every listed market, overwriting campaigns with the same id. Applied in the request (not
    queued). A MarketPrice given as an object must price every listed market."""

    kind = ImportKind.DISCOUNT_CAMPAIGN
    body_key = "campaigns"


@extend_schema_view(post=extend_schema(**docs.RULES_POST), delete=extend_schema(**docs.RULES_DELETE))
class ProductRulesImport(DefinitionsImport):
    """Stores the rules in every listed market, overwriting rules with the same id. Only `container_deposit` exists."""

    kind = ImportKind.PRODUCT_RULE
    body_key = "product_rules"


@extend_schema_view(post=extend_schema(**docs.STOCK_EVENTS))
class StockEventsImport(BatchImport):
    """Applies `external_reset` stock events (the only type that can be imported; `type` may be left out) in the
    request, in the order posted, not queued. Each event names its `stock_location_id` and has exactly one of
    `adjustment` (non-zero) and `new_stock_value`; `timestamp` is ISO 8601 with a time zone or Unix seconds (default:
    now). Valid events are applied; the others are listed in `failed`."""

    body_key = "stock_events"
    items_argument = "events"
    service = staticmethod(services.import_stock_events)
