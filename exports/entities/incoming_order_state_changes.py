"""Incoming order state change events (spec: Events; Order state; Order, general model).

One element per state change of an incoming order: ``{"order": Order, "state": Order state}``. The order
is the lean shape it was imported with. Element key: ``"<order_identifier>:<state change id>"``, unique
within the account and stable across re-sends.
"""

from __future__ import annotations

from typing import Any

from core.jsonenc import epoch
from core.outbox import EntityType
from exports.entities.base import model_entity
from exports.entities.outgoing_orders import to_json as order_json
from orders.models import OrderStateChange
from orders.outbox import state_change_key as element_key


def to_json(change: OrderStateChange) -> dict[str, Any]:
    order = change.incoming_order
    assert order is not None
    state: dict[str, Any] = {
        "created": epoch(order.created_at),
        "last_change": epoch(change.created_at),
        "order_state": change.state,
    }
    if change.cashier:
        state["last_change_by"] = change.cashier
    if change.comment:
        state["last_change_comment"] = change.comment
    return {"order": order_json(order), "state": state}


def key_of(change: OrderStateChange) -> str | None:
    return element_key(change, change.incoming_order.order_identifier) if change.incoming_order else None


ENTITY = model_entity(
    code=EntityType.INCOMING_ORDER_STATE_CHANGES,
    model_label="orders.OrderStateChange",
    element_key="<order_identifier>:<state change id>",
    rows=lambda: OrderStateChange.objects.select_related("incoming_order").filter(incoming_order__isnull=False),
    to_json=to_json,
    key_of=key_of,
)
