"""Order writes: create incoming, external and outgoing orders; move states (spec: Order, Order states)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.errors import Conflict, NotFound
from accounts.models import Account, StockLocation
from orders.models import (
    ExternalOrder,
    IncomingOrder,
    OrderState,
    OrderStateChange,
    OutgoingOrder,
    handling_type_for,
)


@dataclass(frozen=True)
class NewOrder:
    """One order to create: ``key`` is the caller's handle for the outcome (e.g. an import item id)."""

    key: Hashable
    stock_location_id: int
    order: dict[str, Any]


def duplicate_message(order_identifier: str) -> str:
    return f"duplicate: order_identifier '{order_identifier}' is already used on this stock location"


def _build_incoming(account: Account, new: NewOrder) -> IncomingOrder:
    order = new.order
    return IncomingOrder(
        account=account,
        stock_location_id=new.stock_location_id,
        order_identifier=order["order_identifier"],
        currency=order["basket"]["currency"],
        basket=order["basket"],
        customer=order.get("customer"),
        payment=order.get("payment"),
        shipping=order.get("shipping"),
        handling_type=handling_type_for(has_payment="payment" in order, has_shipping="shipping" in order),
        state=OrderState.CREATED,
    )


def _build_external(account: Account, new: NewOrder) -> ExternalOrder:
    order = new.order
    return ExternalOrder(
        account=account,
        stock_location_id=new.stock_location_id,
        order_identifier=order["order_identifier"],
        currency=order["basket"]["currency"],
        basket=order["basket"],
        customer=order.get("customer"),
    )


def _initial_history(account: Account, orders: Sequence[IncomingOrder]) -> None:
    OrderStateChange.objects.bulk_create(
        [
            OrderStateChange(
                account=account,
                incoming_order=order,
                state=OrderState.CREATED,
                source=OrderStateChange.Source.IMPORT,
            )
            for order in orders
        ]
    )


def _create_orders(
    *, account: Account, model: type[IncomingOrder] | type[ExternalOrder], orders: Sequence[NewOrder]
) -> dict[Hashable, str | None]:
    """Create what is new, in bulk; an identifier already used on the stock location is a duplicate.

    Returns each key's outcome: None when created, else the failure message. Must run inside a
    transaction. A concurrent writer of the same identifier (an IntegrityError on the bulk insert)
    sends the batch down the one-by-one path, where each order has its own savepoint.
    """
    build = _build_incoming if model is IncomingOrder else _build_external
    wanted = {(n.stock_location_id, n.order["order_identifier"]) for n in orders}
    taken = set(
        model.objects.filter(
            stock_location_id__in={sl for sl, _ in wanted}, order_identifier__in={oid for _, oid in wanted}
        ).values_list("stock_location_id", "order_identifier")
    )
    outcome: dict[Hashable, str | None] = {}
    fresh: list[NewOrder] = []
    for new in orders:
        key = (new.stock_location_id, new.order["order_identifier"])
        if key in taken:
            outcome[new.key] = duplicate_message(new.order["order_identifier"])
        else:
            taken.add(key)
            fresh.append(new)
    try:
        with transaction.atomic():
            rows: list[Any] = [build(account, n) for n in fresh]
            created = model.objects.bulk_create(rows)
            if model is IncomingOrder:
                _initial_history(account, created)  # type: ignore[arg-type]
        outcome.update((n.key, None) for n in fresh)
    except IntegrityError:
        for new in fresh:
            try:
                with transaction.atomic():
                    row = build(account, new)
                    row.save()
                    if model is IncomingOrder:
                        _initial_history(account, [row])  # type: ignore[list-item]
                outcome[new.key] = None
            except IntegrityError:
                outcome[new.key] = duplicate_message(new.order["order_identifier"])
    return outcome


def create_incoming_orders(*, account: Account, orders: Sequence[NewOrder]) -> dict[Hashable, str | None]:
    """Spec: Incoming order. Each new order starts in state ``created`` with its first history entry."""
    return _create_orders(account=account, model=IncomingOrder, orders=orders)


def create_external_orders(*, account: Account, orders: Sequence[NewOrder]) -> dict[Hashable, str | None]:
    """Spec: External order. External orders have no payment, shipping or state."""
    return _create_orders(account=account, model=ExternalOrder, orders=orders)


def create_outgoing_order(
    *,
    account: Account,
    stock_location: StockLocation,
    order: dict[str, Any],
    destination: StockLocation | None = None,
) -> OutgoingOrder:
    """An order placed by a shop (to another stock location, or external when ``destination`` is None)."""
    with transaction.atomic():
        outgoing = OutgoingOrder.objects.create(
            account=account,
            stock_location=stock_location,
            destination=destination,
            order_identifier=order["order_identifier"],
            basket=order["basket"],
            customer=order.get("customer"),
            payment=order.get("payment"),
            shipping=order.get("shipping"),
        )
        OrderStateChange.objects.create(
            account=account, outgoing_order=outgoing, state=OrderState.CREATED, source=OrderStateChange.Source.POS
        )
    return outgoing


def change_outgoing_order_state(
    *,
    account: Account,
    stock_location_id: int,
    order_identifier: str,
    state: str,
    comment: str = "",
    cashier: dict[str, Any] | None = None,
    source: str = OrderStateChange.Source.IMPORT,
) -> OrderStateChange:
    """Spec: Outgoing order state change. Event-like: appended to the history, never undone.

    Raises NotFound for an unknown order and Conflict for a move the transition rules refuse.
    """
    with transaction.atomic():
        order = (
            OutgoingOrder.objects.select_for_update()
            .filter(account=account, stock_location_id=stock_location_id, order_identifier=order_identifier)
            .first()
        )
        if order is None:
            raise NotFound(f"no outgoing order '{order_identifier}' on this stock location", field="order_identifier")
        if not order.can_move_to(state):
            raise Conflict(f"an order in state '{order.state}' cannot move to '{state}'", field="state")
        change = OrderStateChange.objects.create(
            account=account,
            outgoing_order=order,
            state=state,
            previous_state=order.state,
            comment=comment,
            cashier=cashier,
            source=source,
        )
        order.state = state
        order.last_change_at = timezone.now()
        order.save(update_fields=["state", "last_change_at"])
    return change
