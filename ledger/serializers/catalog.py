"""The catalog's serializers: products, expenses, newsletter signups.

The bodies are declared in ``ledger.bodies.catalog``: ``PRODUCT`` and ``EXPENSE`` validate the REST bodies, and
the DRF ``*RequestSerializer`` classes below only document them in the OpenAPI schema (their components,
``ProductRequest`` and ``ExpenseRequest``, differ from what the declarations would publish). The newsletter
signup the POS posts is a declared body, ``ledger.bodies.catalog.PosNewsletterSignup``: it validates and is its
own request schema.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.serializers import TaxSerializer
from core.api import by_identifier
from core.serializers import JSONField, L10nStringField, MarketPriceField, read_only_meta
from ledger.bodies.catalog import product_help
from ledger.models import Expense, NewsletterSignup, Product
from ledger.selectors.catalog import product_document

# --- OpenAPI descriptions of the bodies (documentation only) -----------------------------------------------


class ProductRequestSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=255, help_text=product_help("id"))
    name = L10nStringField(help_text=product_help("name"))
    description = L10nStringField(required=False, help_text=product_help("description"))
    barcode = serializers.CharField(max_length=255, required=False, help_text=product_help("barcode"))
    image_url = serializers.URLField(max_length=2048, required=False, help_text=product_help("image_url"))
    product_group = serializers.CharField(max_length=255, required=False, help_text=product_help("product_group"))
    retail_price = MarketPriceField(required=False, help_text=product_help("retail_price") + " Null: the same.")
    cost_price = serializers.DecimalField(
        max_digits=20, decimal_places=6, required=False, coerce_to_string=False, help_text=product_help("cost_price")
    )
    taxes = TaxSerializer(many=True, required=False, help_text=product_help("taxes") + " Null: the same.")

    class Meta:
        ref_name = "ProductRequest"


@extend_schema_field(
    {
        "oneOf": [
            {"type": "array", "items": {"$ref": "#/components/schemas/Tax"}},
            {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"$ref": "#/components/schemas/Tax"}},
            },
        ],
        "description": "A list of taxes, or an object of market identifier to a list of taxes.",
    }
)
class ExpenseTaxesField(JSONField):
    pass


class ExpenseRequestSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=255, help_text="The expense's id (spec: Expense), unique in the account.")
    name = L10nStringField()
    taxes = ExpenseTaxesField(required=False)

    class Meta:
        ref_name = "ExpenseRequest"


# --- Filters -------------------------------------------------------------------------------------------
# An empty parameter (``?barcode=``) means no filter, as if it were left out.


class ProductFilterSerializer(serializers.Serializer):
    search = serializers.CharField(max_length=255, required=False, allow_blank=True)
    barcode = serializers.CharField(max_length=255, required=False, allow_blank=True)
    product_group = serializers.CharField(max_length=255, required=False, allow_blank=True)


class NewsletterSignupFilterSerializer(serializers.Serializer):
    email = serializers.CharField(max_length=320, required=False, allow_blank=True)
    stock_location = serializers.CharField(max_length=64, required=False, allow_blank=True)


# --- Output ----------------------------------------------------------------------------------------------


class ProductOutputSerializer(serializers.Serializer):
    """The spec's Product JSON (absent optional fields left out, as in product edit events) and timestamps."""

    id = serializers.CharField(help_text=product_help("id"))
    name = L10nStringField(help_text=product_help("name"))
    description = L10nStringField(required=False, help_text=product_help("description"))
    barcode = serializers.CharField(required=False, help_text=product_help("barcode"))
    image_url = serializers.CharField(required=False, help_text=product_help("image_url"))
    product_group = serializers.CharField(required=False, help_text=product_help("product_group"))
    retail_price = MarketPriceField(required=False, help_text=product_help("retail_price"))
    cost_price = serializers.DecimalField(
        max_digits=20, decimal_places=6, required=False, coerce_to_string=False, help_text=product_help("cost_price")
    )
    taxes = TaxSerializer(many=True, required=False, help_text=product_help("taxes"))
    created_at = serializers.DateTimeField(help_text="When the product was first stored.")
    updated_at = serializers.DateTimeField(help_text="When the product was last changed.")

    class Meta:
        ref_name = "Product"

    def to_representation(self, instance: Product) -> dict[str, Any]:
        stamps = serializers.DateTimeField()
        return {
            **product_document(instance),
            "created_at": stamps.to_representation(instance.created_at),
            "updated_at": stamps.to_representation(instance.updated_at),
        }


class ExpenseOutputSerializer(serializers.ModelSerializer):
    id = serializers.CharField(
        source="expense_id", read_only=True, help_text="The expense's id, unique in the account (spec: Expense)."
    )
    name = L10nStringField(read_only=True, help_text="The expense's name: a text, or language code to text.")
    taxes = ExpenseTaxesField(read_only=True, allow_null=True, help_text="Null: the market's default taxes.")

    Meta = read_only_meta(Expense, ["id", "name", "taxes", "created_at"])


@extend_schema_field(
    {
        "type": "object",
        "description": "The exported newsletter signup event: email, first_name?, last_name?, name?, "
        "source? {market_id, shop_id, shop_name, register_id, register_name}, timestamp.",
    }
)
class SignupDocumentField(JSONField):
    pass


class NewsletterSignupOutputSerializer(serializers.ModelSerializer):
    # Null for a signup from a second-screen app that named no shop or register.
    stock_location = by_identifier(allow_null=True, help_text="The shop's identifier, or null.")
    register = by_identifier(allow_null=True, help_text="The register's identifier, or null.")
    document = SignupDocumentField(
        read_only=True, help_text="The signup as exported: `ExportNewsletterSignupsElement`."
    )

    Meta = read_only_meta(
        NewsletterSignup,
        ["id", "email", "stock_location", "register", "document", "created_at"],
        extra_kwargs={
            "id": {"help_text": "The signup's id."},
            "email": {"help_text": "The address, trimmed, its domain lower-cased."},
            "created_at": {"help_text": "When the service stored it."},
        },
    )
