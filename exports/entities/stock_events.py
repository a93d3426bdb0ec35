"""Stock events (spec: Events; Stock event). Element key: ``"stock-event-<id>"``.

The JSON form is built from the row's columns: exactly the spec's Stock event, with optional fields
(``variant_id``, ``sale_id``, the ``stock_count_*`` of a stock count) present only when they apply, the
stock location as its identifier and the timestamp as an ISO 8601 string in UTC.
"""

from __future__ import annotations

from core.outbox import EntityType
from exports.entities.base import model_entity
from ledger.models import StockEvent
from ledger.outbox import stock_event_json as to_json
from ledger.outbox import stock_event_key as element_key

ENTITY = model_entity(
    code=EntityType.STOCK_EVENTS,
    model_label="ledger.StockEvent",
    element_key="stock-event-<id>",
    rows=lambda: StockEvent.objects.select_related("stock_location"),
    to_json=to_json,
    key_of=element_key,
)
