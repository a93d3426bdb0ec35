"""Order writes: create incoming, external and outgoing orders; move states (spec: Order, Order states)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Case, CharField, DateTimeField, Q, QuerySet, Value, When
from django.utils import timezone

from accounts import selectors as account_selectors
from accounts.models import Account, Cashier, StockLocation
from core import outbox
from core.errors import Conflict, NotFound, ServiceError
from orders.models import (
    ExternalOrder,
    HandlingType,
    IncomingOrder,
    OrderState,
    OrderStateChange,
    OutgoingOrder,
    handling_type_of,
    order_parts,
)
from orders.outbox import outgoing_order_key, state_change_key_of

# The columns a source of new orders must provide, in this order (see insert_orders_from).
ORDER_SOURCE_COLUMNS = ("stock_location_id", "order_identifier", "currency", "basket", "customer")
INCOMING_SOURCE_COLUMNS = (*ORDER_SOURCE_COLUMNS, "payment", "shipping", "handling_type")


# The destination of an outgoing order placed with the integrated external system (spec: Outgoing Orders).
EXTERNAL_DESTINATION = "external"


def duplicate_message(order_identifier: str) -> str:
    return f"duplicate: order_identifier '{order_identifier}' is already used on this stock location"


def handling_type_expression(*, payment: Q, shipping: Q) -> Case:
    """Spec, "Order handling types", as a database expression over a source's payment and shipping
    (``orders.models.handling_type_of`` is the same rule in Python)."""
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
    # All or nothing, in the caller's transaction when there is one (no savepoint: two round trips less).
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(sql, params)
        created = {(row[1], row[2]): row[0] for row in cursor.fetchall()}
        if incoming and created:
            cursor.execute(*_first_history_entries(account=account, order_ids=list(created.values()), at=now))
            where = {order_id: key for key, order_id in created.items()}  # order id -> (location, identifier)
            emitted = []
            for change_id, order_id in sorted(cursor.fetchall()):  # in the order they were created
                stock_location_id, order_identifier = where[order_id]
                emitted.append((change_id, order_identifier, stock_location_id))
            _emit_incoming_state_changes(account, emitted)
    return created


def _first_history_entries(*, account: Account, order_ids: list[int], at: datetime) -> tuple[str, list[Any]]:
    """The SQL and parameters of an ``INSERT ... SELECT`` of the first state change (``created``, from the import)
    of each of these incoming orders, in their id order, with the values the ORM would write; it returns each
    change's id and its order's id. No object per change is built in Python."""
    values: dict[str, Any] = {
        "account_id": Value(account.pk),
        "state": Value(OrderState.CREATED),
        "previous_state": Value(""),
        "comment": Value(""),
        "source": Value(OrderStateChange.Source.IMPORT),
        "created_at": Value(at, output_field=DateTimeField()),
    }
    constants = {f"new_{name}": value for name, value in values.items()}
    source = IncomingOrder.objects.filter(pk__in=order_ids).order_by("id").annotate(**constants)
    select_sql, params = source.values_list("id", *constants).query.sql_with_params()
    opts = OrderStateChange._meta
    quote = connection.ops.quote_name
    column_of = {f.attname: quote(str(f.column)) for f in opts.concrete_fields}
    order_column, *columns = (column_of[name] for name in ("incoming_order_id", *values))
    sql = (
        f"INSERT INTO {quote(opts.db_table)} ({order_column}, {', '.join(columns)}) "
        f"{select_sql} RETURNING id, {order_column}"
    )
    return sql, list(params)


def create_outgoing_order(
    *,
    account: Account,
    stock_location: StockLocation,
    order: dict[str, Any],
    destination: StockLocation | None = None,
) -> OutgoingOrder:
    """Spec: Order (general model); Events, Outgoing Orders. A shop places an order.

    External (``destination`` None): the outgoing order is exported. Internal (another stock location of
    the account): in the same transaction the destination receives it as an incoming order with the full
    sale.summary basket, in state ``created`` with its first incoming order state change event, and nothing
    is exported as an outgoing order. Raises ServiceError for shipping without payment or a destination equal
    to the origin, Conflict when ``order_identifier`` is already used on either side.
    """
    order_identifier = order["order_identifier"]
    if order.get("shipping") is not None and order.get("payment") is None:
        raise ServiceError(
            "shipping requires payment (a Ship from Store order is pre-paid)",
            field="order.shipping",
            code="shipping_without_payment",
        )
    if destination is not None and destination.pk == stock_location.pk:
        raise ServiceError(
            "the destination must be another stock location than the one placing the order",
            field="destination",
            code="same_stock_location",
        )
    duplicate = Conflict(
        f"order_identifier '{order_identifier}' is already used by an order on "
        f"{'the destination or ' if destination else ''}this stock location",
        field="order.order_identifier",
        code="duplicate",
    )
    try:
        with transaction.atomic():
            if _order_identifier_used(
                account=account, stock_location=stock_location, destination=destination, identifier=order_identifier
            ):
                raise duplicate
            outgoing = OutgoingOrder.objects.create(
                account=account,
                stock_location=stock_location,
                destination=destination,
                order_identifier=order_identifier,
                **order_parts(order),
            )
            OrderStateChange.objects.create(
                account=account, outgoing_order=outgoing, state=OrderState.CREATED, source=OrderStateChange.Source.POS
            )
            if destination is None:  # spec: exported when not sent internally to another shop
                entry = outbox.Entry(outgoing.pk, outgoing_order_key(outgoing), stock_location.pk)
                outbox.offer(account=account, entity_type=outbox.EntityType.OUTGOING_ORDERS, entries=[entry])
            else:
                _receive_internal_order(account=account, outgoing=outgoing, currency=stock_location.market.currency)
    except IntegrityError:
        # A concurrent request took the identifier between the check and the insert: the unique constraints
        # of both tables decide, and the loser gets the same answer as a sequential duplicate.
        raise duplicate from None
    return outgoing


def place_outgoing_order(
    *, account: Account, stock_location_identifier: str, destination_identifier: str, order: dict[str, Any]
) -> OutgoingOrder:
    """Spec: Order (general model). The POS names the shop placing the order and its destination: a stock
    location identifier of the account, or ``"external"`` (reserved: it always means the external system).
    Raises ServiceError for an unknown stock location, otherwise as create_outgoing_order."""
    origin = _stock_location(account=account, identifier=stock_location_identifier, field="stock_location")
    destination = None
    if destination_identifier != EXTERNAL_DESTINATION:
        destination = _stock_location(account=account, identifier=destination_identifier, field="destination")
    return create_outgoing_order(account=account, stock_location=origin, order=order, destination=destination)


def _stock_location(*, account: Account, identifier: str, field: str) -> StockLocation:
    # In the body, not the path: an unknown identifier is a bad request, as in the imports.
    location = account_selectors.stock_location_by_identifier(account=account, identifier=identifier)
    if location is None:
        raise ServiceError(f"unknown stock location '{identifier[:64]}'", field=field, code="unknown")
    return location


def _order_identifier_used(
    *, account: Account, stock_location: StockLocation, destination: StockLocation | None, identifier: str
) -> bool:
    used = OutgoingOrder.objects.filter(account=account, stock_location=stock_location, order_identifier=identifier)
    if destination is None:
        return used.exists()
    received = IncomingOrder.objects.filter(account=account, stock_location=destination, order_identifier=identifier)
    return used.exists() or received.exists()


def _receive_internal_order(*, account: Account, outgoing: OutgoingOrder, currency: str) -> IncomingOrder:
    """The destination shop's side of an internal order. Runs inside create_outgoing_order's transaction."""
    assert outgoing.destination is not None
    incoming = IncomingOrder.objects.create(
        account=account,
        stock_location=outgoing.destination,
        order_identifier=outgoing.order_identifier,
        currency=currency,
        **order_parts(outgoing),
        handling_type=handling_type_of(
            has_payment=outgoing.payment is not None, has_shipping=outgoing.shipping is not None
        ),
        outgoing_order=outgoing,
    )
    change = OrderStateChange.objects.create(
        account=account, incoming_order=incoming, state=OrderState.CREATED, source=OrderStateChange.Source.SYSTEM
    )
    _emit_incoming_state_changes(account, [(change.pk, incoming.order_identifier, incoming.stock_location_id)])
    return incoming


@dataclass(frozen=True)
class StateMove:
    """One move of an order to a new state, as its history records it (spec: Order states; Cashier): what the
    POS or an import asks for, and what the outgoing side of an internal order follows with."""

    state: str
    comment: str = ""
    cashier: dict[str, Any] | None = None
    source: str = OrderStateChange.Source.POS

    @classmethod
    def posted(cls, body: Mapping[str, Any], *, source: str) -> StateMove:
        """The move a state change body asks for: ``state``, an optional ``comment`` and ``cashier``."""
        return cls(body["state"], body.get("comment", ""), body.get("cashier"), source)


def change_incoming_order_state(*, account: Account, order: IncomingOrder, move: StateMove) -> OrderStateChange:
    """Spec: Order states; Events, incoming order state change events. A shop moves an incoming order on.

    The change, its export and, for an order another shop placed, the same move of that shop's outgoing
    order (source ``system``) are written in one transaction. Raises Conflict for a refused transition.
    """
    with transaction.atomic():
        change = _change_state(account=account, model=IncomingOrder, order_pk=order.pk, move=move)
        _emit_incoming_state_changes(account, [(change.pk, order.order_identifier, order.stock_location_id)])
        if order.outgoing_order_id is not None:
            followed = replace(move, source=OrderStateChange.Source.SYSTEM)
            _change_state(account=account, model=OutgoingOrder, order_pk=order.outgoing_order_id, move=followed)
    order.refresh_from_db(fields=["state", "last_change_at"])
    return change


def change_incoming_order_state_at(
    *,
    account: Account,
    stock_location_identifier: str,
    order_identifier: str,
    state: str,
    comment: str = "",
    cashier: dict[str, Any] | str | None = None,
) -> IncomingOrder:
    """Spec: Order states; Cashier. The POS of a shop moves one of its incoming orders, named by stock
    location and order identifier; ``cashier`` is a Cashier object or the identifier of a cashier of the
    account. Raises NotFound for an unknown stock location or order, ServiceError for an unknown cashier,
    Conflict for a refused transition."""
    location = account_selectors.stock_location_by_identifier(account=account, identifier=stock_location_identifier)
    if location is None:
        raise NotFound(f"unknown stock location '{stock_location_identifier[:64]}'", field="stock_location")
    order = IncomingOrder.objects.filter(
        account=account, stock_location=location, order_identifier=order_identifier
    ).first()
    if order is None:
        raise NotFound(
            f"no incoming order '{order_identifier[:255]}' on stock location '{location.identifier}'",
            field="order_identifier",
        )
    move = StateMove(state, comment, _cashier_object(account=account, cashier=cashier), OrderStateChange.Source.POS)
    change_incoming_order_state(account=account, order=order, move=move)
    return order


def _cashier_object(*, account: Account, cashier: dict[str, Any] | str | None) -> dict[str, Any] | None:
    """The spec's Cashier object, as recorded on the state change and exported in ``last_change_by``."""
    if not isinstance(cashier, str):
        return cashier
    found = account_selectors.cashiers(account=account).filter(identifier=cashier).first()
    if found is None:
        raise ServiceError(f"unknown cashier '{cashier[:64]}'", field="cashier", code="unknown")
    return cashier_reference(found)


def cashier_reference(cashier: Cashier) -> dict[str, Any]:
    """A cashier of the account as the spec's Cashier object (optional fields only when set)."""
    reference: dict[str, Any] = {"identifier": cashier.identifier, "display_name": cashier.display_name}
    if cashier.full_name:
        reference["full_name"] = cashier.full_name
    if cashier.image_url:
        reference["image_url"] = cashier.image_url
    return reference


def _emit_incoming_state_changes(account: Account, changes: list[tuple[int, str, int]]) -> None:
    """Spec: Events, incoming order state change events; each (change id, order identifier, stock location id)."""
    entries = [
        outbox.Entry(change_id, state_change_key_of(change_id, order_identifier), stock_location_id)
        for change_id, order_identifier, stock_location_id in changes
    ]
    outbox.offer(account=account, entity_type=outbox.EntityType.INCOMING_ORDER_STATE_CHANGES, entries=entries)


def change_outgoing_order_state(
    *, account: Account, stock_location_id: int, order_identifier: str, move: StateMove
) -> OrderStateChange:
    """Spec: Outgoing order state change. Event-like: appended to the history, never undone.

    Raises NotFound for an unknown order and Conflict for a move the transition rules refuse, or for an
    order placed with another shop of the account: that shop's incoming order owns the state, and this
    order follows it (see change_incoming_order_state).
    """
    found = (
        OutgoingOrder.objects.filter(
            account=account, stock_location_id=stock_location_id, order_identifier=order_identifier
        )
        .values_list("pk", "incoming_order__stock_location__identifier")
        .first()
    )
    if found is None:
        raise NotFound(f"no outgoing order '{order_identifier}' on this stock location", field="order_identifier")
    order_pk, receiving_shop = found
    if receiving_shop is not None:
        raise Conflict(
            f"outgoing order '{order_identifier}' was placed with stock location '{receiving_shop}', "
            "which owns its state; it cannot be changed by a state change import",
            field="state",
            code="internal_order",
        )
    return _change_state(account=account, model=OutgoingOrder, order_pk=order_pk, move=move)


def _change_state(
    *, account: Account, model: type[IncomingOrder] | type[OutgoingOrder], order_pk: int, move: StateMove
) -> OrderStateChange:
    """Move the order (locked) if the transition rules allow it and append the change to its history.
    Must run inside a transaction when the caller emits an event for it; opens one otherwise."""
    with transaction.atomic():
        order = model.objects.select_for_update().get(account=account, pk=order_pk)
        if not order.can_move_to(move.state):
            raise Conflict(f"an order in state '{order.state}' cannot move to '{move.state}'", field="state")
        link = {"incoming_order": order} if model is IncomingOrder else {"outgoing_order": order}
        change = OrderStateChange.objects.create(account=account, previous_state=order.state, **asdict(move), **link)
        order.state = move.state
        order.last_change_at = timezone.now()
        order.save(update_fields=["state", "last_change_at"])
    return change
