"""Incoming order state change events (spec: Events; Order state; Order, general model).

One element per state change of an incoming order: ``{"order": Order, "state": Order state}``. The order
is the lean shape it was imported with. Element key: ``"<order_identifier>:<state change id>"``, unique
within the account and stable across re-sends.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.jsonenc import epoch
from exports.entities.base import EntityDefinition
from orders.models import OrderStateChange
from orders.outbox import state_change_key as element_key


def to_json(change: OrderStateChange) -> dict[str, Any]:
    order = change.incoming_order
    assert order is not None
    body: dict[str, Any] = {"order_identifier": order.order_identifier, "basket": order.basket}
    for name in ("customer", "payment", "shipping"):
        value = getattr(order, name)
        if value is not None:
            body[name] = value
    state: dict[str, Any] = {
        "created": epoch(order.created_at),
        "last_change": epoch(change.created_at),
        "order_state": change.state,
    }
    if change.cashier:
        state["last_change_by"] = change.cashier
    if change.comment:
        state["last_change_comment"] = change.comment
    return {"order": body, "state": state}


def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    rows = OrderStateChange.objects.select_related("incoming_order").filter(
        pk__in=list(object_ids), incoming_order__isnull=False
    )
    return {row.pk: to_json(row) for row in rows}


def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
    rows = OrderStateChange.objects.select_related("incoming_order").filter(
        account_id=account_id, incoming_order__isnull=False
    )
    if object_id is not None:
        rows = rows.filter(pk=object_id)
    row = rows.order_by("-pk").first()
    if row is None or row.incoming_order is None:
        return None
    return row.pk, element_key(row, row.incoming_order.order_identifier)


ENTITY = EntityDefinition(
    code="incoming_order_state_changes",
    model_label="orders.OrderStateChange",
    element_key="<order_identifier>:<state change id>",
    load=load,
    find=find,
)
