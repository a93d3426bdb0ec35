"""Outgoing orders (spec: Events; Order, general model).

Exported when a shop places an order that is not sent internally to another shop (destination external).
The basket is the full sale.summary shape. Element key: ``"<order_identifier>:<order id>"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from exports.entities.base import EntityDefinition
from orders.models import OutgoingOrder
from orders.outbox import outgoing_order_key as element_key


def to_json(order: OutgoingOrder) -> dict[str, Any]:
    body: dict[str, Any] = {"order_identifier": order.order_identifier, "basket": order.basket}
    for name in ("customer", "payment", "shipping"):
        value = getattr(order, name)
        if value is not None:
            body[name] = value
    return body


def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    return {row.pk: to_json(row) for row in OutgoingOrder.objects.filter(pk__in=list(object_ids))}


def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
    rows = OutgoingOrder.objects.filter(account_id=account_id)
    if object_id is not None:
        rows = rows.filter(pk=object_id)
    row = rows.order_by("-pk").first()
    return (row.pk, element_key(row)) if row else None


ENTITY = EntityDefinition(
    code="outgoing_orders",
    model_label="orders.OutgoingOrder",
    element_key="<order_identifier>:<order id>",
    load=load,
    find=find,
)
