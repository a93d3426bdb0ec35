"""Serializers of the back-office REST API for orders. Field names follow the spec (Order, Order states)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.serializers import JSONField, read_only_meta
from orders.models import ExternalOrder, HandlingType, IncomingOrder, OrderState, OrderStateChange, OutgoingOrder

# --- Filters (query parameters of the lists) ------------------------------------------------------------


# An empty parameter (``?state=``) means no filter, as if it were left out.
class ExternalOrderFilterSerializer(serializers.Serializer):
    stock_location = serializers.CharField(max_length=64, required=False, allow_blank=True)
    order_identifier = serializers.CharField(max_length=255, required=False, allow_blank=True)


class OrderFilterSerializer(ExternalOrderFilterSerializer):
    state = serializers.ChoiceField(choices=OrderState.choices, required=False, allow_blank=True)


# --- Output ---------------------------------------------------------------------------------------------


@extend_schema_field(OpenApiTypes.OBJECT)
class JsonObjectField(JSONField):
    """A stored JSON object, returned as it was imported (numbers stay numbers)."""


class CashierRefSerializer(serializers.Serializer):
    """The spec's Cashier as recorded on a state change."""

    identifier = serializers.CharField(help_text="The cashier's id.")
    display_name = serializers.CharField(help_text="Usually initials.")
    full_name = serializers.CharField(required=False, help_text="The full name.")
    image_url = serializers.URLField(required=False, help_text="An image of the store associate (https).")

    class Meta:
        ref_name = "StateChangeCashier"


class OrderStateChangeOutputSerializer(serializers.ModelSerializer):
    previous_state = serializers.SerializerMethodField()
    cashier = CashierRefSerializer(read_only=True, allow_null=True, help_text="Who moved the order, when known.")

    Meta = read_only_meta(
        OrderStateChange,
        ["state", "previous_state", "comment", "cashier", "source", "created_at"],
        extra_kwargs={
            "state": {"help_text": "The state the order moved to."},
            "comment": {"help_text": "The comment sent with the state (blank: none)."},
            "source": {"help_text": "Who moved it: an import by the integrator, or a shop through the POS API."},
            "created_at": {"help_text": "When it moved."},
        },
    )

    @extend_schema_field(
        {
            "type": ["string", "null"],
            "enum": [*OrderState.values, None],
            "description": "The state it left; null on the first change.",
        }
    )
    def get_previous_state(self, change: OrderStateChange) -> str | None:
        return change.previous_state or None


# The fields an incoming and an outgoing order both answer, after their identity, in this order.
ORDER_HELP = {
    "id": {"help_text": "The order's id in the API."},
    "order_identifier": {"help_text": "The order's identifier, unique on its stock location."},
    "state": {"help_text": "The order's state now."},
    "created_at": {"help_text": "When the service stored the order."},
    "last_change_at": {"help_text": "When the state last changed."},
}
ORDER_CONTENT_FIELDS = [
    "basket",
    "customer",
    "payment",
    "shipping",
    "handling_type",
    "state",
    "created_at",
    "last_change_at",
    "history",
]


class IncomingOrderOutputSerializer(serializers.ModelSerializer):
    stock_location = by_identifier(help_text="The identifier of the shop that handles the order.")
    basket = JsonObjectField(read_only=True, help_text="As imported (spec: Basket), or the full sale.summary shape.")
    customer = JsonObjectField(read_only=True, allow_null=True, help_text="As imported; null when none.")
    payment = JsonObjectField(read_only=True, allow_null=True, help_text="As imported; null: not pre-paid.")
    shipping = JsonObjectField(read_only=True, allow_null=True, help_text="As imported; null when none.")
    history = OrderStateChangeOutputSerializer(
        source="state_changes", many=True, read_only=True, help_text="Every state change, oldest first."
    )

    Meta = read_only_meta(
        IncomingOrder,
        ["id", "order_identifier", "stock_location", *ORDER_CONTENT_FIELDS],
        extra_kwargs={
            **ORDER_HELP,
            "handling_type": {
                "help_text": "From payment and shipping: Reserve & Collect, Click & Collect, Ship from Store."
            },
        },
    )


class ExternalOrderOutputSerializer(serializers.ModelSerializer):
    stock_location = by_identifier(help_text="The identifier of the stock location the order was imported for.")
    basket = JsonObjectField(read_only=True, help_text="As imported (spec: Basket).")
    customer = JsonObjectField(read_only=True, allow_null=True, help_text="As imported; null when none.")

    Meta = read_only_meta(
        ExternalOrder,
        ["id", "order_identifier", "stock_location", "basket", "customer", "created_at"],
        extra_kwargs={key: ORDER_HELP[key] for key in ("id", "order_identifier", "created_at")},
    )


class ReceivingOrderSerializer(serializers.Serializer):
    """The incoming order an internal outgoing order became on its destination."""

    id = serializers.IntegerField(help_text="The incoming order's id.")
    stock_location = serializers.CharField(source="stock_location.identifier", help_text="The receiving shop.")
    order_identifier = serializers.CharField(help_text="Its identifier there (the outgoing order's).")

    class Meta:
        ref_name = "ReceivingIncomingOrder"


class OutgoingOrderOutputSerializer(serializers.ModelSerializer):
    stock_location = by_identifier(help_text="The identifier of the shop that placed the order.")
    destination = by_identifier(
        allow_null=True,
        help_text="The receiving stock location of the account, or null for an external system.",
    )
    basket = JsonObjectField(read_only=True, help_text="The full sale.summary shape.")
    customer = JsonObjectField(read_only=True, allow_null=True, help_text="As posted; null when none.")
    payment = JsonObjectField(read_only=True, allow_null=True, help_text="As posted; null: not pre-paid.")
    shipping = JsonObjectField(read_only=True, allow_null=True, help_text="As posted; null when none.")
    handling_type = serializers.ChoiceField(
        choices=HandlingType.choices,
        read_only=True,
        help_text="From payment and shipping: none = Reserve & Collect, payment = Click & Collect, both = Ship "
        "from Store.",
    )
    incoming_order = serializers.SerializerMethodField(
        help_text="For an order placed with another shop: the incoming order it became there; null when external."
    )
    history = OrderStateChangeOutputSerializer(
        source="state_changes", many=True, read_only=True, help_text="Every state change, oldest first."
    )

    Meta = read_only_meta(
        OutgoingOrder,
        ["id", "order_identifier", "stock_location", "destination", "incoming_order", *ORDER_CONTENT_FIELDS],
        extra_kwargs=ORDER_HELP,
    )

    @extend_schema_field(ReceivingOrderSerializer(allow_null=True))
    def get_incoming_order(self, order: OutgoingOrder) -> dict[str, object] | None:
        try:
            incoming = order.incoming_order
        except IncomingOrder.DoesNotExist:
            return None
        return dict(ReceivingOrderSerializer(incoming).data)
