"""Stock events (spec: Events; Stock event). Element key: ``"stock-event-<id>"``.

The JSON form is built from the row's columns: exactly the spec's Stock event, with optional fields
(``variant_id``, ``sale_id``, the ``stock_count_*`` of a stock count) present only when they apply, the
stock location as its identifier and the timestamp as an ISO 8601 string in UTC.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from exports.entities.base import EntityDefinition
from ledger.models import StockEvent
from ledger.outbox import stock_event_json as to_json
from ledger.outbox import stock_event_key as element_key


def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    rows = StockEvent.objects.select_related("stock_location").filter(pk__in=list(object_ids))
    return {row.pk: to_json(row) for row in rows}


def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
    rows = StockEvent.objects.filter(account_id=account_id)
    if object_id is not None:
        rows = rows.filter(pk=object_id)
    row = rows.order_by("-pk").first()
    return (row.pk, element_key(row)) if row else None


ENTITY = EntityDefinition(
    code="stock_events", model_label="ledger.StockEvent", element_key="stock-event-<id>", load=load, find=find
)
