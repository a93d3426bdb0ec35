"""Back-office admin of orders: visible and searchable, never edited by hand.

The spec: incoming and external orders cannot be updated or deleted, and state changes cannot be undone
by deleting them. Outgoing orders move through their own flow, so the admin only shows them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from accounts.admin import (
    AccountOwnedAdmin,
    ReadOnlyAdminMixin,
    RecordInline,
    pretty_json,
    scoped_filters,
)
from core.admin_fields import field_display
from orders.models import ExternalOrder, IncomingOrder, OrderStateChange, OutgoingOrder

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

STATE_CHANGE_FIELDS = ("created_at", "previous_state", "state", "source", "comment", "cashier")


class StateChangeInline(RecordInline):
    model = OrderStateChange
    fields = STATE_CHANGE_FIELDS
    verbose_name = "state change"
    verbose_name_plural = "state history"


class IncomingStateChangeInline(StateChangeInline):
    fk_name = "incoming_order"


class OutgoingStateChangeInline(StateChangeInline):
    fk_name = "outgoing_order"


class OrderAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    search_fields = ["order_identifier"]

    basket_pretty = field_display("basket", pretty_json)
    customer_pretty = field_display("customer", pretty_json)
    payment_pretty = field_display("payment", pretty_json)
    shipping_pretty = field_display("shipping", pretty_json)


# An incoming and an outgoing order carry the same documents, shown read-only, pretty-printed.
PLACED_ORDER_CONTENT = ("basket_pretty", "customer_pretty", "payment_pretty", "shipping_pretty")


def placed_order_fieldsets(*summary: str) -> _FieldsetSpec:
    """The page of an incoming or outgoing order: its summary fields, then when it was created and last
    changed, then its documents."""
    return [
        (None, {"fields": [*summary, "created_at", "last_change_at"]}),
        ("Content", {"fields": PLACED_ORDER_CONTENT}),
    ]


@admin.register(IncomingOrder)
class IncomingOrderAdmin(OrderAdmin):
    list_display = [
        "order_identifier",
        "state",
        "handling_type",
        "stock_location",
        "account",
        "currency",
        "created_at",
        "last_change_at",
    ]
    list_filter = scoped_filters("state", "handling_type")
    list_select_related = ["account", "stock_location"]
    fieldsets = placed_order_fieldsets(
        "account", "stock_location", "order_identifier", "state", "handling_type", "outgoing_order", "currency"
    )
    readonly_fields = PLACED_ORDER_CONTENT
    inlines = [IncomingStateChangeInline]


@admin.register(ExternalOrder)
class ExternalOrderAdmin(OrderAdmin):
    list_display = ["order_identifier", "stock_location", "account", "currency", "created_at"]
    list_filter = scoped_filters()
    list_select_related = ["account", "stock_location"]
    fieldsets = [
        (None, {"fields": ["account", "stock_location", "order_identifier", "currency", "created_at"]}),
        ("Content", {"fields": ["basket_pretty", "customer_pretty"]}),
    ]
    readonly_fields = ["basket_pretty", "customer_pretty"]


@admin.register(OutgoingOrder)
class OutgoingOrderAdmin(OrderAdmin):
    list_display = [
        "order_identifier",
        "state",
        "stock_location",
        "destination",
        "account",
        "created_at",
        "last_change_at",
    ]
    list_filter = scoped_filters("state", related=("stock_location", "destination"))
    list_select_related = ["account", "stock_location", "destination"]
    fieldsets = placed_order_fieldsets("account", "stock_location", "destination", "order_identifier", "state")
    readonly_fields = PLACED_ORDER_CONTENT
    inlines = [OutgoingStateChangeInline]


@admin.register(OrderStateChange)
class OrderStateChangeAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["id", "order", "previous_state", "state", "source", "account", "created_at"]
    list_filter = ["account", "state", "source"]
    list_select_related = ["account", "incoming_order", "outgoing_order"]
    search_fields = ["incoming_order__order_identifier", "outgoing_order__order_identifier", "comment"]

    @admin.display(description="order")
    def order(self, obj: OrderStateChange) -> str:
        if obj.incoming_order is not None:
            return f"incoming {obj.incoming_order}"
        return f"outgoing {obj.outgoing_order}"
