"""Product edit events (spec: Events; payload "not shown", decided in the README).

Element key: ``"<product id>:<event id>"``: one product has many events, each its own element.
"""

from __future__ import annotations

from core.outbox import EntityType
from exports.entities.documents import document_entity
from ledger.outbox import product_event_key as element_key

ENTITY = document_entity(
    code=EntityType.PRODUCT_EDIT_EVENTS,
    model_label="ledger.ProductEditEvent",
    element_key="<product id>:<event id>",
    key_of=element_key,
)
