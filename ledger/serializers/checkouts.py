"""Serializers of the REST API for checkouts and sales. Field names follow the spec (Checkout, Sale)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.serializers import JSONField, read_only_meta
from ledger.checks import ecommerce_groups
from ledger.models import CHECKOUT_SHOWN, Checkout, Sale, SaleKind

# --- Filters (query parameters of the lists) ------------------------------------------------------------


class OptionalBooleanField(serializers.BooleanField):
    """``true``/``false``; left out (or empty) means no filter. DRF would read a missing boolean of a
    query string as false."""

    default_empty_html = serializers.empty

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, allow_null=True, **kwargs)


# An empty parameter (``?voided=``) means no filter, as if it were left out.
class CheckoutFilterSerializer(serializers.Serializer):
    register = serializers.CharField(max_length=64, required=False, allow_blank=True)
    stock_location = serializers.CharField(max_length=64, required=False, allow_blank=True)
    identifier = serializers.CharField(max_length=255, required=False, allow_blank=True)
    voided = OptionalBooleanField()
    # ``from`` is a Python keyword: declared as ``since`` and renamed in get_fields().
    since = serializers.DateTimeField(required=False, allow_null=True, help_text="Timestamp at or after.")
    until = serializers.DateTimeField(required=False, allow_null=True, help_text="Timestamp before.")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = fields.pop("since")
        fields["to"] = fields.pop("until")
        return fields

    @staticmethod
    def as_selector_filters(data: dict[str, Any]) -> dict[str, Any]:
        """The validated query parameters as selector keyword arguments (``from`` -> ``since``)."""
        filters = dict(data)
        filters["since"] = filters.pop("from", None)
        filters["until"] = filters.pop("to", None)
        return filters


class SaleFilterSerializer(CheckoutFilterSerializer):
    checkout_identifier = serializers.CharField(max_length=255, required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=SaleKind.choices, required=False, allow_blank=True)
    is_return = OptionalBooleanField()
    has_warnings = OptionalBooleanField()


# --- Output ---------------------------------------------------------------------------------------------


@extend_schema_field(OpenApiTypes.OBJECT)
class DocumentField(JSONField):
    """The stored JSON document, exactly as exported (numbers stay numbers)."""


def amount_field(**kwargs: Any) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=20, decimal_places=6, coerce_to_string=False, **kwargs)


class WarningSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="Path in the posted checkout body, e.g. `sales[0].basket.total_discounts`.")
    message = serializers.CharField(help_text="What looked odd, for a person.")
    code = serializers.CharField(help_text="e.g. `total_discounts_mismatch`; the list is in docs/amounts.md.")

    class Meta:
        ref_name = "CheckoutWarning"


WARNINGS_HELP = "What the spec does not state but looked odd; the checkout was stored and exported exactly as sent."


class CheckoutSaleOutputSerializer(serializers.ModelSerializer):
    total = amount_field(read_only=True, help_text="What the customer paid, in the base currency's major unit.")

    Meta = read_only_meta(
        Sale,
        ["id", "identifier", "sequence_number", "kind", "total"],
        ref_name="CheckoutSale",
        extra_kwargs={
            "id": {"help_text": "The sale's id in /api/v1/sales/."},
            "identifier": {"help_text": "The sale's identifier, as posted."},
            "sequence_number": {"help_text": "The register's number of the sale, as posted."},
            "kind": {"help_text": "`sale`, `return` or `expense`, from the sale's lines."},
        },
    )


class CheckoutOutputSerializer(serializers.ModelSerializer):
    register = by_identifier(help_text="The register's identifier (`source.register_id`).")
    stock_location = by_identifier(help_text="The identifier of the register's shop.")
    period = serializers.IntegerField(
        source="period.sequence_number", read_only=True, help_text="Sequence number of the register period."
    )
    sales = serializers.SerializerMethodField(help_text="The sales of the checkout, in the order posted.")
    warnings = WarningSerializer(many=True, read_only=True, help_text=WARNINGS_HELP)
    document = DocumentField(read_only=True, help_text="The exported JSON form (spec: Checkout).")

    Meta = read_only_meta(
        Checkout,
        ["id", *CHECKOUT_SHOWN, "sales", "warnings", "document"],
        extra_kwargs={
            "id": {"help_text": "The checkout's id in /api/v1/checkouts/."},
            "identifier": {"help_text": "The checkout's identifier, as posted."},
            "voided": {"help_text": "As posted (false when left out)."},
            "timestamp": {"help_text": "`timing.timestamp`, in UTC."},
            "created_at": {"help_text": "When the service stored it."},
        },
    )

    @extend_schema_field(CheckoutSaleOutputSerializer(many=True))
    def get_sales(self, checkout: Checkout) -> Any:
        # Sorted here, not by the query: a just-created checkout's sales are not prefetched in order.
        sales = sorted(checkout.sales.all(), key=lambda sale: sale.pk)
        return CheckoutSaleOutputSerializer(sales, many=True).data


class PosCheckoutOutputSerializer(CheckoutOutputSerializer):
    created = serializers.SerializerMethodField(help_text="False when the same checkout was posted before.")

    Meta = read_only_meta(
        Checkout,
        [*CheckoutOutputSerializer.Meta.fields, "created"],
        ref_name="PosCheckout",
        extra_kwargs=CheckoutOutputSerializer.Meta.extra_kwargs,
    )

    def get_created(self, checkout: Checkout) -> bool:
        return bool(self.context.get("created"))


class EcommerceGroupSerializer(serializers.Serializer):
    ecom_id = serializers.CharField(help_text="The lines' `ecom_id`: the e-commerce order they are shipped as.")
    line_item_ids = serializers.ListField(
        child=serializers.CharField(), help_text="The `line_item_id`s of the group's lines, in the order posted."
    )
    shipping = DocumentField(allow_null=True, help_text="The group's shipping behavior.")

    class Meta:
        ref_name = "EcommerceGroup"


class SaleOutputSerializer(serializers.ModelSerializer):
    checkout_identifier = serializers.CharField(
        source="checkout.identifier", read_only=True, help_text="The identifier of the checkout that yielded it."
    )
    register = by_identifier(help_text="The register's identifier (`source.register_id`).")
    stock_location = by_identifier(help_text="The identifier of the register's shop.")
    is_return = serializers.SerializerMethodField(help_text="True for a return (`kind` `return`).")
    total = amount_field(read_only=True, help_text="What the customer paid, in the base currency's major unit.")
    ecommerce_groups = serializers.SerializerMethodField(
        help_text="Spec: behavior.shipping: the lines with an `ecom_id`, grouped, each group with its shipping."
    )
    warnings = WarningSerializer(
        many=True, read_only=True, help_text="The checkout's warnings about this sale (paths in the checkout body)."
    )
    document = DocumentField(read_only=True, help_text="The exported JSON form (spec: Sale).")

    Meta = read_only_meta(
        Sale,
        [
            "id",
            "identifier",
            "checkout_identifier",
            "sequence_number",
            "register",
            "stock_location",
            "kind",
            "is_return",
            "voided",
            "base_currency_code",
            "total",
            "timestamp",
            "created_at",
            "ecommerce_groups",
            "warnings",
            "document",
        ],
        descriptions={
            "id": "The sale's id in /api/v1/sales/.",
            "identifier": "The sale's identifier, as posted.",
            "sequence_number": "The register's number of the sale, as posted.",
            "kind": "`sale`, `return` or `expense`, from the sale's lines.",
            "voided": "The checkout's `voided`: true if it was voided during payment.",
            "base_currency_code": "ISO 4217 code of the sale's amounts.",
            "timestamp": "The checkout's `timing.timestamp`, in UTC.",
        },
    )

    def get_is_return(self, sale: Sale) -> bool:
        return sale.kind == SaleKind.RETURN

    @extend_schema_field(EcommerceGroupSerializer(many=True))
    def get_ecommerce_groups(self, sale: Sale) -> list[dict[str, Any]]:
        """Spec: behavior.shipping: the items with an ``ecom_id``, grouped, each group with its shipping."""
        lines = sale.document["summary"]["line_items"]
        groups = []
        for ecom_id, indexes in ecommerce_groups(lines).items():
            shipping = next(
                (lines[i]["behavior"]["shipping"] for i in indexes if "shipping" in (lines[i].get("behavior") or {})),
                None,
            )
            groups.append(
                {"ecom_id": ecom_id, "line_item_ids": [lines[i]["line_item_id"] for i in indexes], "shipping": shipping}
            )
        return groups
