"""Order writes: create incoming, external and outgoing orders; move states (spec: Order, Order states)."""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.db.models import Case, CharField, DateTimeField, Q, QuerySet, Value, When
from django.utils import timezone

from accounts.errors import Conflict, NotFound
from accounts.models import Account, StockLocation
from exports import services as export_services
from exports.entities import incoming_order_state_changes, outgoing_orders
from exports.models import EntityType
from orders.models import (
    ExternalOrder,
    HandlingType,
    IncomingOrder,
    OrderState,
    OrderStateChange,
    OutgoingOrder,
)

# The columns a source of new orders must provide, in this order (see insert_orders_from).
ORDER_SOURCE_COLUMNS = ("stock_location_id", "order_identifier", "currency", "basket", "customer")
INCOMING_SOURCE_COLUMNS = (*ORDER_SOURCE_COLUMNS, "payment", "shipping", "handling_type")


def duplicate_message(order_identifier: str) -> str:
    return f"duplicate: order_identifier '{order_identifier}' is already used on this stock location"


def handling_type_expression(*, payment: Q, shipping: Q) -> Case:
    """Spec, "Order handling types", as a database expression over a source's payment and shipping."""
    return Case(
        When(payment & shipping, then=Value(HandlingType.SHIP_FROM_STORE)),
        When(payment, then=Value(HandlingType.CLICK_AND_COLLECT)),
        default=Value(HandlingType.RESERVE_AND_COLLECT),
        output_field=CharField(),
    )


def insert_orders_from(
    *, account: Account, model: type[IncomingOrder] | type[ExternalOrder], source: QuerySet[Any]
) -> dict[tuple[int, str], int]:
    """Spec: Incoming order, External order. Create one order per row of ``source`` whose
    ``order_identifier`` is still free on its stock location, in one ``INSERT ... SELECT ... ON CONFLICT
    DO NOTHING`` so that the documents never travel through Python and a concurrent writer of the same
    identifier cannot make it fail. ``source`` is a queryset with the columns ``INCOMING_SOURCE_COLUMNS``
    (or ``ORDER_SOURCE_COLUMNS`` for external orders) as annotations or fields, ordered: of two rows with
    the same identifier the first wins. Incoming orders start in state ``created`` with their first
    history entry. Returns the created orders' ids by (stock location id, order identifier).
    """
    incoming = model is IncomingOrder
    columns = INCOMING_SOURCE_COLUMNS if incoming else ORDER_SOURCE_COLUMNS
    now = timezone.now()
    constants: dict[str, Any] = {
        "new_account_id": Value(account.pk),
        "new_created_at": Value(now, output_field=DateTimeField()),
    }
    if incoming:
        constants["new_last_change_at"] = Value(now, output_field=DateTimeField())
        constants["new_state"] = Value(OrderState.CREATED)
    # The target columns in the order of the SELECT: the constants, then the source's columns.
    target = ["account_id", "created_at", *(["last_change_at", "state"] if incoming else []), *columns]
    select_sql, params = source.annotate(**constants).values_list(*constants, *columns).query.sql_with_params()
    quote = connection.ops.quote_name
    target_columns = [model._meta.get_field(name).column for name in target]  # type: ignore[union-attr]
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} "
        f"({', '.join(quote(str(column)) for column in target_columns)}) "
        f"{select_sql} ON CONFLICT DO NOTHING RETURNING id, stock_location_id, order_identifier"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        created = {(row[1], row[2]): row[0] for row in cursor.fetchall()}
        if incoming and created:
            changes = OrderStateChange.objects.bulk_create(
                [
                    OrderStateChange(
                        account=account,
                        incoming_order_id=order_id,
                        state=OrderState.CREATED,
                        source=OrderStateChange.Source.IMPORT,
                    )
                    for order_id in created.values()
                ]
            )
            where = {order_id: key for key, order_id in created.items()}  # order id -> (location, identifier)
            emitted = []
            for change in changes:
                stock_location_id, order_identifier = where[change.incoming_order_id]  # type: ignore[index]
                emitted.append((change, order_identifier, stock_location_id))
            _emit_incoming_state_changes(account, emitted)
    return created


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
        if destination is None:  # spec: exported when not sent internally to another shop
            export_services.enqueue(
                account=account,
                entity_type=EntityType.OUTGOING_ORDERS,
                entries=[
                    export_services.ExportEntry(
                        object_id=outgoing.pk,
                        element_key=outgoing_orders.element_key(outgoing),
                        stock_location_id=stock_location.pk,
                    )
                ],
            )
    return outgoing


def change_incoming_order_state(
    *,
    account: Account,
    order: IncomingOrder,
    state: str,
    comment: str = "",
    cashier: dict[str, Any] | None = None,
    source: str = OrderStateChange.Source.POS,
) -> OrderStateChange:
    """A shop moves an incoming order on (spec: Order states). Emits an incoming order state change event."""
    change = _change_state(
        account=account,
        model=IncomingOrder,
        order_pk=order.pk,
        state=state,
        comment=comment,
        cashier=cashier,
        source=source,
    )
    _emit_incoming_state_changes(account, [(change, order.order_identifier, order.stock_location_id)])
    return change


def _emit_incoming_state_changes(account: Account, changes: list[tuple[OrderStateChange, str, int]]) -> None:
    """Spec: Events, incoming order state change events; each (change, order identifier, stock location id)."""
    export_services.enqueue(
        account=account,
        entity_type=EntityType.INCOMING_ORDER_STATE_CHANGES,
        entries=[
            export_services.ExportEntry(
                object_id=change.pk,
                element_key=incoming_order_state_changes.element_key(change, order_identifier),
                stock_location_id=stock_location_id,
            )
            for change, order_identifier, stock_location_id in changes
        ],
    )


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
    order_pk = (
        OutgoingOrder.objects.filter(
            account=account, stock_location_id=stock_location_id, order_identifier=order_identifier
        )
        .values_list("pk", flat=True)
        .first()
    )
    if order_pk is None:
        raise NotFound(f"no outgoing order '{order_identifier}' on this stock location", field="order_identifier")
    return _change_state(
        account=account,
        model=OutgoingOrder,
        order_pk=order_pk,
        state=state,
        comment=comment,
        cashier=cashier,
        source=source,
    )


def _change_state(
    *,
    account: Account,
    model: type[IncomingOrder] | type[OutgoingOrder],
    order_pk: int,
    state: str,
    comment: str,
    cashier: dict[str, Any] | None,
    source: str,
) -> OrderStateChange:
    """Move the order (locked) if the transition rules allow it and append the change to its history.
    Must run inside a transaction when the caller emits an event for it; opens one otherwise."""
    with transaction.atomic():
        order = model.objects.select_for_update().get(account=account, pk=order_pk)
        if not order.can_move_to(state):
            raise Conflict(f"an order in state '{order.state}' cannot move to '{state}'", field="state")
        link = {"incoming_order": order} if model is IncomingOrder else {"outgoing_order": order}
        change = OrderStateChange.objects.create(
            account=account,
            state=state,
            previous_state=order.state,
            comment=comment,
            cashier=cashier,
            source=source,
            **link,
        )
        order.state = state
        order.last_change_at = timezone.now()
        order.save(update_fields=["state", "last_change_at"])
    return change
