"""Outgoing orders (spec: Events; Order, general model).

Exported when a shop places an order that is not sent internally to another shop (destination external).
The basket is the full sale.summary shape. Element key: ``"<order_identifier>:<order id>"``.
"""

from __future__ import annotations

from typing import Any

from core.outbox import EntityType
from exports.entities.base import model_entity
from orders.models import OutgoingOrder, order_parts
from orders.outbox import outgoing_order_key as element_key


def to_json(order: Any) -> dict[str, Any]:
    """An order in the spec's general model: identifier and basket, and the customer, payment and shipping it
    has (an outgoing order, or the incoming order of a state change)."""
    parts = order_parts(order)
    return {"order_identifier": order.order_identifier, **{k: v for k, v in parts.items() if v is not None}}


ENTITY = model_entity(
    code=EntityType.OUTGOING_ORDERS,
    model_label="orders.OutgoingOrder",
    element_key="<order_identifier>:<order id>",
    rows=OutgoingOrder.objects.all,
    to_json=to_json,
    key_of=element_key,
)
