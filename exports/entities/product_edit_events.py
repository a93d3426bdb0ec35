"""Product edit events (spec: Events; payload "not shown", decided in the README).

Element key: ``"<product id>:<event id>"``: one product has many events, each its own element.
"""

from __future__ import annotations

from exports.entities.documents import document_entity
from ledger.models import ProductEditEvent


def element_key(event: ProductEditEvent) -> str:
    return f"{event.product_id}:{event.pk}"


ENTITY = document_entity(
    code="product_edit_events",
    model_label="ledger.ProductEditEvent",
    element_key="<product id>:<event id>",
    key_of=element_key,
)
