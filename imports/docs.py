"""OpenAPI descriptions of the import endpoints, with request and response examples from the spec."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from campaigns.docs import PRODUCT_RULE_DEFINITION
from core.api.credentials import INVALID_CREDENTIALS
from core.api.schema import ErrorOutputSerializer
from imports import bodies
from imports.serializers import ImportErrorSerializer

AUTH_PARAMETERS = [
    OpenApiParameter("account", str, required=True, description="The account identifier."),
    OpenApiParameter("integration", str, required=True, description="The import integration (queue) of the account."),
    OpenApiParameter("apikey", str, required=False, description="The API key (or send `Authorization: Bearer <key>`)."),
]
STOCK_LOCATION = OpenApiParameter(
    "stock_location", str, required=True, description="The receiving stock location (shop) identifier."
)
MARKETS = OpenApiParameter(
    "markets", str, required=False, description="Comma-separated market identifiers; default `dk`."
)
IDS = OpenApiParameter(
    "ids", str, required=False, description="Comma-separated ids to delete (or send them in the body)."
)

ORDER: dict[str, Any] = {
    "order_identifier": "web-10042",
    "basket": {
        "currency": "DKK",
        "line_items": [
            {
                "product_identifier": "1001",
                "variant_identifier": "1001-red-m",
                "barcode": "5701234567890",
                "image_url": "https://shop.example.com/img/1001.png",
                "name": "T-shirt, red, M",
                "quantity": 2,
                "price": 149.95,
                "discounts": [{"name": "Summer sale", "type": "percentage", "amount": 0.1}],
            }
        ],
        "discounts": [{"name": "Loyalty", "type": "amount", "amount": 20}],
    },
    "customer": {
        "customer_identifier": "c-77",
        "name": "Jane Jensen",
        "phone_number": "+4512345678",
        "email": "jane@example.com",
    },
    "payment": {"reference": "psp-8f3a2"},
    "shipping": {
        "address": {"street": "Nørregade 1", "city": "København", "postal_code": "1165"},
        "method_id": "gls-parcelshop",
        "method_title": {"da": "GLS pakkeshop", "en": "GLS parcel shop"},
        "method_subtitle": "1-2 days",
    },
}
EXTERNAL_ORDER: dict[str, Any] = {
    "order_identifier": "erp-5531",
    "basket": {
        "currency": "DKK",
        "line_items": [{"product_identifier": "2002", "name": "Mug", "quantity": 1, "price": 79.0}],
    },
    "customer": {"customer_identifier": "c-77", "name": "Jane Jensen"},
}
STATE_CHANGE = {
    "stock_location": "shop-1",
    "order_identifier": "out-2291",
    "state": "processing",
    "comment": "Picking started",
    "cashier": {"display_name": "AB", "full_name": "Anne Berg", "identifier": "cashier-7"},
}
CAMPAIGN = {
    "id": "summer-tees",
    "type": "percentage_discount-count_or_more-single_product",
    "name": "Summer tees 3+",
    "display_name": "3 for less",
    "priority": 10,
    "product_id": "1001",
    "percentage": 0.15,
    "count": 3,
}
STAIR_CAMPAIGN = {
    "id": "mugs-stair",
    "type": "new_price_discount-stair-single_product",
    "name": "Mug stair",
    "display_name": "Buy more, pay less",
    "priority": 5,
    "continue_evaluation": True,
    "product_id": "2002",
    "steps": [
        {"count": 2, "new_price_per_item": {"dk": 69, "se": 99}},
        {"count": 4, "new_price_per_item_if_cheaper": {"dk": 59, "se": 85}},
    ],
}

STOCK_RESET = {
    "type": "external_reset",
    "product_id": "1001",
    "variant_id": "1001-red-m",
    "stock_location_id": "shop-1",
    "new_stock_value": 42,
    "timestamp": "2025-01-15T06:00:00Z",
}


def _ok(message: str) -> OpenApiExample:
    return OpenApiExample(
        "All queued", value={"status": "OK", "message": message}, response_only=True, status_codes=["200"]
    )


@dataclass(frozen=True)
class Refusal:
    """An item an endpoint refuses and the errors it answers for it: the endpoint's examples of a partial import
    (the request's example items, then this one) and of a refused one (this one alone). The item's identifier
    is echoed as the failed item's `id`."""

    item: Any
    id: str | None
    errors: list[dict[str, str]]

    def requests(self, items: list[Any]) -> dict[str, list[Any]]:
        """The items posted for each example, by its name."""
        return {PARTIAL: [*items, self.item], REFUSED: [self.item]}

    def examples(self, noun: str, verb: str, items: list[Any], extra: dict[str, Any]) -> list[OpenApiExample]:
        """The two answers; ``extra`` what the endpoint adds to each (the markets of a definitions import)."""
        failed = [{"index": len(items), "id": self.id, "errors": self.errors}]
        partial = {
            "status": "PARTIAL",
            "message": f"Import of {len(items)} {noun}(s) {verb}; 1 failed (see 'failed')",
            **extra,
        }
        refused = {"status": "ERROR", "message": f"No {noun} was accepted: every item failed (see 'failed')", **extra}
        return [
            OpenApiExample(PARTIAL, value={**partial, "failed": failed}, response_only=True, status_codes=["207"]),
            OpenApiExample(
                REFUSED,
                value={**refused, "failed": [{**failed[0], "index": 0}]},
                response_only=True,
                status_codes=["400"],
            ),
        ]


PARTIAL, REFUSED = "Some items refused", "Nothing accepted"


def _error(field: str, message: str, code: str) -> dict[str, str]:
    return {"field": field, "message": message, "code": code}


def _error_answer(name: str, status: int, message: str, *, field: str = "", code: str = "") -> OpenApiExample:
    """An error answer: its status and message, and when `field` is given the one field error behind it."""
    value: dict[str, Any] = {"status": "ERROR", "message": message}
    if field:
        value["errors"] = [_error(field, message, code)]
    return OpenApiExample(name, value=value, response_only=True, status_codes=[str(status)])


_BAD_JSON = "The body is not valid JSON: Expecting ',' delimiter: line 1 column 42 (char 41)"
UNREADABLE = _error_answer("Unreadable request", 400, _BAD_JSON, field="body", code="invalid_json")
NOT_JSON = _error_answer(
    "Not JSON", 415, "Content-Type must be application/json", field="Content-Type", code="unsupported_media_type"
)
UNAUTHORIZED = _error_answer("Bad credentials", 401, INVALID_CREDENTIALS)
FORBIDDEN = _error_answer("Missing scope", 403, "This API key lacks the 'imports' scope.")


class FailedItemSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="The item's position in the posted list, from 0.")
    id = serializers.CharField(
        allow_null=True, help_text="The item's identifier (`order_identifier`, `id`, `product_id`), when it has one."
    )
    errors = ImportErrorSerializer(many=True, help_text="Every fault of the item.")  # type: ignore[assignment]

    class Meta:
        ref_name = "ImportFailedItem"


class ItemWarningSerializer(ImportErrorSerializer):
    index = serializers.IntegerField(help_text="The item's position in the posted list, from 0.")

    class Meta:
        ref_name = "ImportItemWarning"


class ImportResultSerializer(serializers.Serializer):
    """The answer of an import (``imports.services.ImportResult``), or of a request that could not be read."""

    status = serializers.ChoiceField(
        choices=["OK", "PARTIAL", "ERROR"],
        help_text="`OK`: every item accepted; `PARTIAL`: some (207); `ERROR`: none, or the request was refused.",
    )
    message = serializers.CharField(help_text="What happened, for a person, e.g. `Import of 2 order(s) initiated`.")
    failed = FailedItemSerializer(many=True, required=False, help_text="The items refused, each with its faults.")
    warnings = ItemWarningSerializer(
        many=True, required=False, help_text="What was accepted but ignored (an unknown field), by item."
    )
    markets = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Campaigns and product rules: the markets written."
    )
    errors = ImportErrorSerializer(  # type: ignore[assignment]
        many=True, required=False, help_text="A request that could not be read: the fault (`field` `body`)."
    )

    class Meta:
        ref_name = "ImportResult"


class DeletionResultSerializer(serializers.Serializer):
    """The answer of a DELETE of campaigns or product rules (``imports.services.delete_definitions``)."""

    status = serializers.CharField(help_text="Always `OK`: unknown ids are listed, not an error.")
    message = serializers.CharField(help_text="What happened, for a person, e.g. `Deleted 1 campaign(s) from ...`.")
    markets = serializers.ListField(child=serializers.CharField(), help_text="The markets deleted from.")
    deleted = serializers.ListField(child=serializers.CharField(), help_text="The ids deleted, in the order given.")
    not_found = serializers.ListField(
        child=serializers.CharField(), help_text="The ids none of the markets had, in the order given."
    )

    class Meta:
        ref_name = "ImportDeletionResult"


RESULT_RESPONSES = {
    200: OpenApiResponse(ImportResultSerializer, description="All items accepted."),
    207: OpenApiResponse(ImportResultSerializer, description="Some items accepted; the others are listed in `failed`."),
    400: OpenApiResponse(ImportResultSerializer, description="No item accepted, or the request could not be read."),
    401: OpenApiResponse(ErrorOutputSerializer, description="Invalid credentials."),
    403: OpenApiResponse(ErrorOutputSerializer, description="The key lacks the `imports` scope."),
    413: OpenApiResponse(ErrorOutputSerializer, description="Body or item count over the limit."),
    415: OpenApiResponse(ErrorOutputSerializer, description="Not application/json."),
}
COMMON_EXAMPLES = [UNREADABLE, NOT_JSON, UNAUTHORIZED, FORBIDDEN]


def _post(
    summary: str,
    request: Any,
    body: Any,
    ok: str,
    *,
    refusal: Refusal,
    params: Sequence[OpenApiParameter] = (),
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The schema of an import's POST: ``request`` its declared body (``body`` an example), ``ok`` the message of
    an answer that took every item, ``refusal`` an item it refuses, ``params`` the query parameters naming where
    the items go; the description is the view's docstring."""
    noun, verb = ok.removeprefix("Import of ").split("(s) ")[0].split(" ", 1)[1], ok.rsplit(" ", 1)[1]
    items = body if isinstance(body, list) else next(iter(body.values()))
    return {
        "summary": summary,
        "tags": ["imports"],
        "parameters": [*params, *AUTH_PARAMETERS],
        "request": {"application/json": request},
        "responses": RESULT_RESPONSES,
        "examples": [
            OpenApiExample("Request", value=body, request_only=True),
            _ok(ok),
            *refusal.examples(noun, verb, items, extra or {}),
            *COMMON_EXAMPLES,
        ],
    }


def _orders(summary: str, request: Any, body: Any, ok: str, *, refusal: Refusal) -> dict[str, Any]:
    """An import of orders for the stock location the query names."""
    return _post(summary, request, body, ok, refusal=refusal, params=[STOCK_LOCATION])


def _definitions(summary: str, request: Any, body: Any, ok: str, *, refusal: Refusal) -> dict[str, Any]:
    """An import of definitions (campaigns, product rules) into the markets the query names."""
    return _post(summary, request, body, ok, refusal=refusal, params=[MARKETS], extra={"markets": ["dk"]})


def _delete(noun: str, ids: list[str]) -> dict[str, Any]:
    return {
        "summary": f"Delete {noun}s",
        "description": (
            f"Deletes the listed {noun} ids from the listed markets. Ids come from `?ids=a,b` and/or the body, "
            'a bare JSON array of ids or `{"ids": [...]}`. Unknown ids are reported in `not_found`; the rest '
            "are deleted."
        ),
        "tags": ["imports"],
        "parameters": [MARKETS, IDS, *AUTH_PARAMETERS],
        "request": {"application/json": bodies.DeletionRequest},
        "responses": {
            200: OpenApiResponse(DeletionResultSerializer, description="The listed ids deleted, or not found."),
            400: OpenApiResponse(ErrorOutputSerializer, description="No id given, or an unknown market."),
            **{status: RESULT_RESPONSES[status] for status in (401, 403, 413, 415)},
        },
        "examples": [
            OpenApiExample("Request", value=ids, request_only=True),
            OpenApiExample(
                "Deleted",
                value={
                    "status": "OK",
                    "message": f"Deleted 1 {noun}(s) from market(s) dk; 1 not found",
                    "markets": ["dk"],
                    "deleted": ids[:1],
                    "not_found": ids[1:],
                },
                response_only=True,
                status_codes=["200"],
            ),
        ],
    }


BAD_ORDER = {**ORDER, "order_identifier": "web-10043"}
BAD_ORDER["basket"] = {**ORDER["basket"], "line_items": [{**ORDER["basket"]["line_items"][0], "price": -149.95}]}
BAD_EXTERNAL_ORDER = {**EXTERNAL_ORDER, "order_identifier": "erp-5532"}
BAD_EXTERNAL_ORDER["basket"] = {
    **EXTERNAL_ORDER["basket"],
    "line_items": [{**EXTERNAL_ORDER["basket"]["line_items"][0], "quantity": 0}],
}
ORDER_REFUSED = Refusal(
    BAD_ORDER, "web-10043", [_error("basket.line_items[0].price", "must be positive", "out_of_range")]
)
EXTERNAL_ORDER_REFUSED = Refusal(
    BAD_EXTERNAL_ORDER, "erp-5532", [_error("basket.line_items[0].quantity", "must be positive", "out_of_range")]
)
STATE_CHANGE_REFUSED = Refusal(
    {**STATE_CHANGE, "order_identifier": "out-2292", "state": "shipped"},
    "out-2292",
    [
        _error(
            "state",
            "'shipped' is not one of: created, processing, ready, completed, rejected, cancelled",
            "invalid_choice",
        )
    ],
)
CAMPAIGN_REFUSED = Refusal(
    {**CAMPAIGN, "id": "autumn-tees", "percentage": 15},
    "autumn-tees",
    [_error("percentage", "must be at most 1", "out_of_range")],
)
RULE_REFUSED = Refusal(
    {**PRODUCT_RULE_DEFINITION, "id": "pant-b", "tag": ""}, "pant-b", [_error("tag", "must not be blank", "blank")]
)
STOCK_REFUSED = Refusal(
    {**STOCK_RESET, "type": "sale"},
    "1001",
    [_error("type", "only external_reset events can be imported", "not_allowed")],
)
REFUSALS = {
    "/imports/incoming_orders": ORDER_REFUSED,
    "/imports/external_orders": EXTERNAL_ORDER_REFUSED,
    "/imports/outgoing_order_state_changes": STATE_CHANGE_REFUSED,
    "/imports/discount_campaigns": CAMPAIGN_REFUSED,
    "/imports/product_rules": RULE_REFUSED,
    "/imports/stock_events": STOCK_REFUSED,
}

INCOMING_ORDERS = _orders(
    "Import incoming orders",
    bodies.IncomingOrdersRequest,
    {"orders": [ORDER]},
    "Import of 1 order(s) initiated",
    refusal=ORDER_REFUSED,
)
EXTERNAL_ORDERS = _orders(
    "Import external orders",
    bodies.ExternalOrdersRequest,
    {"external_orders": [EXTERNAL_ORDER]},
    "Import of 1 external order(s) initiated",
    refusal=EXTERNAL_ORDER_REFUSED,
)
STATE_CHANGES = _post(
    "Import outgoing order state changes",
    bodies.OutgoingOrderStateChangesRequest,
    [STATE_CHANGE],
    "Import of 1 outgoing order state change(s) initiated",
    refusal=STATE_CHANGE_REFUSED,
)
CAMPAIGNS_POST = _definitions(
    "Import discount campaigns",
    bodies.CampaignsRequest,
    {"campaigns": [CAMPAIGN, STAIR_CAMPAIGN]},
    "Import of 2 campaign(s) completed",
    refusal=CAMPAIGN_REFUSED,
)
CAMPAIGNS_DELETE = _delete("campaign", ["summer-tees", "no-such-campaign"])
RULES_POST = _definitions(
    "Import product rules",
    bodies.ProductRulesRequest,
    {"product_rules": [PRODUCT_RULE_DEFINITION]},
    "Import of 1 product rule(s) completed",
    refusal=RULE_REFUSED,
)
RULES_DELETE = _delete("product rule", ["pant-a", "no-such-rule"])
STOCK_EVENTS = _post(
    "Import stock resets",
    bodies.StockEventsRequest,
    {"stock_events": [STOCK_RESET, {"product_id": "2002", "stock_location_id": "shop-1", "adjustment": -3}]},
    "Import of 2 stock event(s) completed",
    refusal=STOCK_REFUSED,
)


class ImportSchema(AutoSchema):
    """The import endpoints' schema class: a DELETE of campaigns or product rules takes the ids in its body
    (spec: Endpoints A), which drf-spectacular leaves out of a DELETE unless told."""

    def _get_request_body(self, direction: str = "request") -> Any:
        if self.method != "DELETE":
            return super()._get_request_body(direction)
        self.method = "POST"  # the one check that skips a DELETE's body; nothing else reads it there
        try:
            return super()._get_request_body(direction)
        finally:
            self.method = "DELETE"


def hide_trailing_slash_twins(endpoints: list[tuple[Any, ...]], **kwargs: Any) -> list[tuple[Any, ...]]:
    """drf-spectacular preprocessing hook: list ``/imports/x``, not its accepted twin ``/imports/x/``."""
    return [e for e in endpoints if not (e[0].startswith("/imports/") and e[0].endswith("/"))]
