"""What the orders app offers to exports (``core.outbox``): each entity's element key (spec: Events, unique and
stable across re-sends). The orders app never imports exports; the exports app reads these."""

from __future__ import annotations

from orders.models import OrderStateChange, OutgoingOrder


def state_change_key(change: OrderStateChange, order_identifier: str) -> str:
    return state_change_key_of(change.pk, order_identifier)


def state_change_key_of(change_id: int, order_identifier: str) -> str:
    """The key of a state change known by its id (the import's, which creates no object per change)."""
    return f"{order_identifier}:{change_id}"


def outgoing_order_key(order: OutgoingOrder) -> str:
    return f"{order.order_identifier}:{order.pk}"
