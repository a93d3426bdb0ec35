"""Incoming, external and outgoing orders and their state history (spec: Order, Order states)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import models

from accounts.models import Account, AccountOwned, StockLocation
from core.constraints import exactly_one_not_null
from core.jsonenc import DecimalJSONField


class OrderState(models.TextChoices):
    CREATED = "created"
    PROCESSING = "processing"
    READY = "ready"
    COMPLETED = "completed"
    REJECTED = "rejected"
    CANCELLED = "cancelled"


# Transitions are "not shown" in the spec. Decided: forward moves along this line (skipping allowed),
# rejected/cancelled from any open state, nothing out of a terminal state.
FORWARD_STATES = [OrderState.CREATED, OrderState.PROCESSING, OrderState.READY, OrderState.COMPLETED]
TERMINAL_STATES = frozenset({OrderState.COMPLETED, OrderState.REJECTED, OrderState.CANCELLED})


def transition_allowed(current: str, new: str) -> bool:
    if current in TERMINAL_STATES:
        return False
    if new in (OrderState.REJECTED, OrderState.CANCELLED):
        return True
    if new in FORWARD_STATES and current in FORWARD_STATES:
        return FORWARD_STATES.index(OrderState(new)) > FORWARD_STATES.index(OrderState(current))
    return False


# The spec's general order model beside the order's identifier: its basket, and the customer, payment and shipping
# it may have. An order that holds them keeps each in a JSON column of the same name (an external order has no
# payment or shipping).
ORDER_PARTS = ("basket", "customer", "payment", "shipping")


def order_parts(order: Mapping[str, Any] | models.Model) -> dict[str, Any]:
    """The parts of an order, a body as posted or an order row, by column (a part it lacks is None)."""
    if isinstance(order, models.Model):
        return {name: getattr(order, name) for name in ORDER_PARTS}
    return {name: order.get(name) for name in ORDER_PARTS}


class HandlingType(models.TextChoices):
    RESERVE_AND_COLLECT = "reserve_and_collect", "Reserve & Collect"
    CLICK_AND_COLLECT = "click_and_collect", "Click & Collect"
    SHIP_FROM_STORE = "ship_from_store", "Ship from Store"


def handling_type_of(*, has_payment: bool, has_shipping: bool) -> HandlingType:
    """Spec, "Order handling types". The same rule as ``orders.services.handling_type_expression`` (imports);
    shipping without payment is refused before an order gets here, so it never reads as Reserve & Collect."""
    if has_payment and has_shipping:
        return HandlingType.SHIP_FROM_STORE
    if has_payment:
        return HandlingType.CLICK_AND_COLLECT
    return HandlingType.RESERVE_AND_COLLECT


class StatefulOrder(AccountOwned):
    # No index of its own: the (account, state) index leads with it (one index less to write per order).
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_index=False)
    state = models.CharField(max_length=16, choices=OrderState.choices, default=OrderState.CREATED)
    created_at = models.DateTimeField(auto_now_add=True)
    last_change_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-id"]
        indexes = [models.Index(fields=["account", "state"])]

    def can_move_to(self, new_state: str) -> bool:
        return transition_allowed(self.state, new_state)


def unique_per_location(model_name: str) -> models.UniqueConstraint:
    """An order identifier is unique on its stock location, for every kind of order (one name per table)."""
    return models.UniqueConstraint(
        fields=["stock_location", "order_identifier"], name=f"{model_name}_unique_per_location"
    )


class ReceivedOrder(models.Model):
    """What every order an integrator sends carries: the columns ``orders.services.ORDER_SOURCE_COLUMNS``
    that materialising an import fills."""

    # No index of its own: the unique constraint (stock_location, order_identifier) leads with it, and a second index
    # on the column let the planner read every order of the location for an import's duplicate check.
    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, related_name="+", db_index=False)
    order_identifier = models.CharField(max_length=255)
    currency = models.CharField(max_length=3)
    basket = DecimalJSONField()
    customer = DecimalJSONField(null=True, blank=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.order_identifier


class IncomingOrder(StatefulOrder, ReceivedOrder):
    """An order received on a stock location from an integrator (``/imports/incoming_orders``)."""

    payment = DecimalJSONField(null=True, blank=True)
    shipping = DecimalJSONField(null=True, blank=True)
    handling_type = models.CharField(max_length=24, choices=HandlingType.choices)
    # RESTRICT, not PROTECT: neither order may be deleted on its own, but both go with their account.
    outgoing_order = models.OneToOneField(
        "OutgoingOrder",
        on_delete=models.RESTRICT,
        null=True,
        blank=True,
        related_name="incoming_order",
        help_text="The outgoing order another shop of the account placed with this one; empty when imported.",
    )

    class Meta(StatefulOrder.Meta):
        constraints = [unique_per_location("incoming_order")]


class ExternalOrder(AccountOwned, ReceivedOrder):
    """An order from an external system (``/imports/external_orders``); no payment or shipping."""

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [unique_per_location("external_order")]


class OutgoingOrder(StatefulOrder):
    """An order this service placed from a stock location, to another shop or to an external system."""

    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, related_name="+")
    order_identifier = models.CharField(max_length=255)
    destination = models.ForeignKey(
        StockLocation,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Another stock location of the account, or empty for an external system.",
    )
    basket = DecimalJSONField(help_text="The full sale.summary shape.")
    customer = DecimalJSONField(null=True, blank=True)
    payment = DecimalJSONField(null=True, blank=True)
    shipping = DecimalJSONField(null=True, blank=True)

    class Meta(StatefulOrder.Meta):
        constraints = [unique_per_location("outgoing_order")]

    def __str__(self) -> str:
        return self.order_identifier

    @property
    def handling_type(self) -> HandlingType:
        """Derived, not stored: payment and shipping never change after the order is placed."""
        return handling_type_of(has_payment=self.payment is not None, has_shipping=self.shipping is not None)


class OrderStateChange(AccountOwned):
    """One state change of an incoming or outgoing order. Event-like: never updated or deleted."""

    class Source(models.TextChoices):
        IMPORT = "import"
        POS = "pos"
        SYSTEM = "system"

    incoming_order = models.ForeignKey(
        IncomingOrder, on_delete=models.CASCADE, null=True, blank=True, related_name="state_changes"
    )
    outgoing_order = models.ForeignKey(
        OutgoingOrder, on_delete=models.CASCADE, null=True, blank=True, related_name="state_changes"
    )
    state = models.CharField(max_length=16, choices=OrderState.choices)
    previous_state = models.CharField(max_length=16, choices=OrderState.choices, blank=True)
    comment = models.TextField(blank=True)
    cashier = DecimalJSONField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            exactly_one_not_null("incoming_order", "outgoing_order", name="state_change_has_exactly_one_order")
        ]

    def __str__(self) -> str:
        return f"{self.previous_state or '-'} -> {self.state}"
