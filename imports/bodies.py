"""The request envelopes of the ``/imports/`` endpoints: what ``/api/schema/`` publishes for each request.

The items are declared where they belong (the orders in ``orders.bodies``, each campaign and product rule type
in its family's module of ``campaigns/pricing/``, the stock event in ``ledger.bodies.stock``); the view checks a
batch item by item against the item's declaration, so that a bad item refuses only itself (``imports.services``).
The envelopes say the rest: the key the items come under, at least one item, at most ``IMPORT_MAX_ITEMS``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from campaigns.pricing.registry import CAMPAIGN, PRODUCT_RULE
from core.declare import Body, Field, payload
from core.nodes import Arr, Components, Node, Report, Schema, join
from ledger.bodies import stock
from orders.bodies import ExternalOrder, IncomingOrder, OutgoingOrderStateChange

MAX_ITEMS = settings.IMPORT_MAX_ITEMS
ONE_BY_ONE = "Each item is checked on its own: the valid ones are accepted, the others listed in `failed`."


# The imported stock event (an external reset, ``type`` defaulting to it) is declared by the ledger.
IMPORTED_STOCK_EVENT = stock.IMPORTED_STOCK_EVENT


class IncomingOrdersRequest(Body, schema_name="IncomingOrders"):
    """Spec: Endpoints A, incoming orders. Each order is checked on its own: the valid ones are queued, the
    others listed in `failed`."""

    orders = Field(
        Arr(IncomingOrder, min_items=1, max_items=MAX_ITEMS),
        description="The incoming orders (1 to `IMPORT_MAX_ITEMS`).",
    )


class ExternalOrdersRequest(Body, schema_name="ExternalOrders"):
    """Spec: Endpoints A, external orders. Each order is checked on its own: the valid ones are queued, the
    others listed in `failed`."""

    external_orders = Field(
        Arr(ExternalOrder, min_items=1, max_items=MAX_ITEMS),
        description="The external orders (1 to `IMPORT_MAX_ITEMS`).",
    )


OutgoingOrderStateChangesRequest = payload(
    "OutgoingOrderStateChanges",
    Arr(OutgoingOrderStateChange, min_items=1, max_items=MAX_ITEMS),
    "Spec: Endpoints A, a bare array of outgoing order state changes. " + ONE_BY_ONE,
)


class CampaignsRequest(Body, schema_name="DiscountCampaigns"):
    """Spec: Discount campaign. Each campaign has the fields of its `type`; an empty list changes nothing. Each
    campaign is checked on its own: the valid ones are stored, the others listed in `failed`."""

    campaigns = Field(
        Arr(CAMPAIGN, max_items=MAX_ITEMS),
        description="The campaigns to create or overwrite by `id` (at most `IMPORT_MAX_ITEMS`).",
    )


class ProductRulesRequest(Body, schema_name="ProductRules"):
    """Spec: Product rule; an empty list changes nothing. Each rule is checked on its own: the valid ones are
    stored, the others listed in `failed`."""

    product_rules = Field(
        Arr(PRODUCT_RULE, max_items=MAX_ITEMS),
        description="The rules to create or overwrite by `id` (at most `IMPORT_MAX_ITEMS`).",
    )


class StockEventsRequest(Body, schema_name="StockEvents"):
    """Spec: Stock event, `external_reset`, applied in the order posted. Each event is checked on its own: the
    valid ones are applied, the others listed in `failed`."""

    stock_events = Field(
        Arr(IMPORTED_STOCK_EVENT, min_items=1, max_items=MAX_ITEMS),
        description="The events, applied in the order posted (1 to `IMPORT_MAX_ITEMS`).",
    )


class DeletionIds(Node):
    """The ids a DELETE removes: a bare array of id strings (spec), or an object with them under `ids`."""

    message = 'The body must be an array of id strings or {"ids": [...]}'

    def check(self, value: Any, path: str, report: Report) -> Any:
        listed = value.get("ids") if isinstance(value, dict) else value
        if not isinstance(listed, list) or not all(isinstance(i, str) and i.strip() for i in listed):
            return report.error(join(path, "ids"), self.message, "invalid_type")
        return listed

    def json_schema(self, components: Components) -> Schema:
        ids: Schema = {"type": "array", "items": {"type": "string", "minLength": 1, "pattern": r"\S"}}
        ids["maxItems"] = MAX_ITEMS
        described = {**ids, "description": "The ids to delete."}
        return {"oneOf": [ids, {"type": "object", "properties": {"ids": described}, "required": ["ids"]}]}


DELETION_IDS = DeletionIds()
DeletionRequest = payload(
    "ImportDeletion",
    DELETION_IDS,
    "The ids to delete, with those of `?ids=a,b` (at least one id in all, at most `IMPORT_MAX_ITEMS`).",
)
