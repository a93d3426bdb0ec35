"""Back-office REST API (``/api/v1/``): the import log, read-only, newest first."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.routers import SimpleRouter

from accounts.scoping import ReadOnlyViewSet
from core.api import Area
from imports import selectors
from imports.models import ImportItem
from imports.serializers import INTEGRATION_FILTER, ImportLogFilterSerializer, ImportLogOutputSerializer

IMPORT_LOG_EXAMPLE = {
    "id": 3120,
    "integration": "webshop",
    "kind": "incoming_order",
    "request_id": "5f0c6e2a-8d7b-4a51-9b0e-2c1f7f1d9a34",
    "index": 0,
    "identifier": "WEB-10001",
    "stock_location": "shop-1",
    "markets": [],
    "status": "success",
    "message": "",
    "errors": [],
    "attempts": 1,
    "payload": {
        "order_identifier": "WEB-10001",
        "basket": {
            "currency": "DKK",
            "line_items": [{"product_identifier": "tshirt-basic", "name": "T-shirt", "quantity": 2, "price": 199.95}],
        },
        "payment": {"reference": "PAY-778899"},
    },
    "created_at": "2025-01-15T09:30:00Z",
    "processed_at": "2025-01-15T09:30:01Z",
}


IMPORT_LOG = Area(
    "import log",
    filters={
        INTEGRATION_FILTER: "Another integration of the account than the one in `integration` (whose log is listed "
        "by default, as `?integration=` names it); `*` lists every integration of the account.",
        "status": "Only items with this outcome.",
        "kind": "Only items of this kind.",
        "identifier": "Only items with this identifier (order_identifier, campaign or rule id).",
        "request_id": "Only the items of this import request.",
    },
)


@IMPORT_LOG.schema(output=ImportLogOutputSerializer, filters=ImportLogFilterSerializer, example=IMPORT_LOG_EXAMPLE)
class ImportLogViewSet(ReadOnlyViewSet):
    """Every posted import item with its payload and outcome: one entry per posted item, newest first."""

    queryset = ImportItem.objects.none()
    filter_serializer_class = ImportLogFilterSerializer
    output_serializer_class = ImportLogOutputSerializer

    def select(self, **filters: Any) -> QuerySet[ImportItem]:
        # The contract's ?integration=: the log of the integration named there, which is also
        # the one the key authenticates. integration_identifier picks another one, "*" all of them.
        chosen = filters.pop("integration", None) or self.request.query_params.get("integration")
        return selectors.import_items(account=self.account, integration=None if chosen == "*" else chosen, **filters)


def register(router: SimpleRouter) -> None:
    """Routes of this app under /api/v1/."""
    router.register("import-logs", ImportLogViewSet, basename="import-log")
