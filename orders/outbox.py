"""What the orders app offers to exports (``core.outbox``): each entity's element key (spec: Events, unique and
stable across re-sends). The orders app never imports exports; the exports app reads these."""

from __future__ import annotations

from orders.models import OrderStateChange, OutgoingOrder


def state_change_key(change: OrderStateChange, order_identifier: str) -> str:
    return f"{order_identifier}:{change.pk}"


def outgoing_order_key(order: OutgoingOrder) -> str:
    return f"{order.order_identifier}:{order.pk}"
