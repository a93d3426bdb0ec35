"""Input schemas and output serializers of the catalog: products, expenses, newsletter signups.

Bodies are validated with the schema nodes of ``core.nodes`` (not DRF input serializers) so that every
error names its exact path (``retail_price.se``, ``taxes[1].rate``) and numbers stay ``Decimal`` as
``read_json_body`` parsed them. The DRF ``*RequestSerializer`` classes below only document those bodies in
the OpenAPI schema; ``PRODUCT`` and ``EXPENSE`` are what validates. The newsletter signup the POS posts is a
declared body, ``ledger.definitions.PosNewsletterSignup``: it validates and is its own request schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.serializers import TaxSerializer
from accounts.validation import TAX_DESCRIPTIONS, TAX_TYPES
from core.api import by_identifier
from core.declare import Body, Field, optional
from core.nodes import (
    INVALID,
    Arr,
    Enum,
    L10nString,
    MarketPrice,
    Node,
    Num,
    Obj,
    Report,
    Str,
    Url,
)
from core.serializers import JSONField, L10nStringField, MarketPriceField, read_only_meta
from ledger.models import Expense, NewsletterSignup, Product
from ledger.selectors.catalog import product_document

# --- Schema nodes (what validates) --------------------------------------------------------------------

# Cost prices are stored with 6 decimals; a finer value would be silently rounded by the column.
MONEY_DECIMALS = 6
MAX_MARKETS = 100


class Identifier(Str):
    """A product or expense id: any text but ``/``, because it is a path segment of its REST URL."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        value = super().check(value, path, report)
        if value is not INVALID and ("/" in value or value != value.strip()):
            return report.error(path, "must not contain '/' nor start or end with spaces", "invalid")
        return value


class Money(Num):
    """A non-negative amount with at most ``MONEY_DECIMALS`` decimals."""

    def __init__(self) -> None:
        super().__init__(minimum=0)

    def check(self, value: Any, path: str, report: Report) -> Any:
        value = super().check(value, path, report)
        if isinstance(value, Decimal) and value != value.quantize(Decimal(1).scaleb(-MONEY_DECIMALS)):
            return report.error(path, f"must have at most {MONEY_DECIMALS} decimals", "too_precise")
        return value


class Price(MarketPrice):
    """Spec: MarketPrice with non-negative amounts of at most 6 decimals; an object names a market at least."""

    def __init__(self) -> None:
        self.number = Money()

    def check(self, value: Any, path: str, report: Report) -> Any:
        if value == {}:
            return report.error(path, "must price at least one market (leave it out for a variable price)", "blank")
        if isinstance(value, dict) and len(value) > MAX_MARKETS:
            return report.error(path, f"must have at most {MAX_MARKETS} markets", "too_long")
        return super().check(value, path, report)


class ExpenseTaxes(Node):
    """Spec: Expense ``taxes``: a flat list of taxes, or an object of market identifier to such a list."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, list):
            return TAXES.check(value, path, report)
        if not isinstance(value, dict):
            return self.wrong_type("an array of taxes or an object of market to taxes", value, path, report)
        if len(value) > MAX_MARKETS:
            return report.error(path, f"must have at most {MAX_MARKETS} markets", "too_long")
        out = {}
        ok = True
        for market, taxes in value.items():
            cleaned = TAXES.check(taxes, f"{path}.{str(market)[:100]}", report)
            ok = ok and cleaned is not INVALID
            out[market] = cleaned
        return out if ok else INVALID


class Tax(Body, schema_name="ProductTax"):
    """Spec: a tax of a product `{name, rate, type}`; the rate is a fraction, as markets store it."""

    name = Field(Str(max_length=255), description=TAX_DESCRIPTIONS["name"] + " At most 255 characters.")
    rate = Field(Num(minimum=0, maximum=1), description=TAX_DESCRIPTIONS["rate"])
    type = Field(Enum(TAX_TYPES), description=TAX_DESCRIPTIONS["type"])


TAXES = Arr(Tax, max_items=20)


@dataclass(frozen=True)
class Bodies:
    """The bodies of one kind of catalog row: ``create`` (POST), ``replace`` (PUT) and ``patch`` (PATCH)."""

    create: Obj
    replace: Obj
    patch: Obj


class ProductDocument(Body, schema_name="ProductDocument"):
    """Spec: Product, as the service stores and sends it (absent optional fields left out). Amounts in the major
    unit of the market's currency."""

    id = Field(
        Identifier(),
        description="The product's id, unique in the account: 1 to 255 characters, no `/` (it is a segment of the "
        "product's URL) and no leading or trailing space.",
    )
    name = Field(L10nString(), description="The product's name: a text, or language code to text (1-1000 each).")
    description = optional(
        L10nString(max_length=10_000), description="A text, or language code to text (1-10000 characters each)."
    )
    barcode = optional(Str(), description="EAN, SKU, ISBN or similar (1-255 characters).")
    image_url = optional(Url(), description="An absolute http(s) URL of the product's image (at most 2048 characters).")
    product_group = optional(
        Str(), description="The group the register statements sum its sales by (1-255 characters)."
    )
    retail_price = optional(
        Price(),
        description="The unit price, VAT included: one number for every market, or market identifier to number; "
        "0 or more, at most 6 decimals. Absent: a variable-price product, priced at sale time.",
    )
    cost_price = optional(Money(), description="The unit cost, for margins: 0 or more, at most 6 decimals.")
    taxes = optional(TAXES, description="The product's taxes (at most 20); absent: the market's default taxes.")


PRODUCT_FIELDS: dict[str, Node] = {name: field.node for name, field in ProductDocument.fields.items()}
PRODUCT_OPTIONAL = tuple(name for name in PRODUCT_FIELDS if name not in ("id", "name"))
# Spec: Product. ``id`` is required on create; on PUT and PATCH the URL names the product.
PRODUCT = ProductDocument
PRODUCT_BODIES = Bodies(PRODUCT.node, replace=Obj(PRODUCT_FIELDS, required=("name",)), patch=Obj(PRODUCT_FIELDS))


def product_help(name: str) -> str:
    """The description of the product's field ``name`` (``ProductDocument``), for the serializers that show it."""
    return ProductDocument.fields[name].description


EXPENSE_FIELDS: dict[str, Node] = {"id": Identifier(), "name": L10nString(), "taxes": ExpenseTaxes()}
EXPENSE_OPTIONAL = ("taxes",)
EXPENSE = Obj(EXPENSE_FIELDS, required=("id", "name"))
EXPENSE_BODIES = Bodies(EXPENSE, replace=Obj(EXPENSE_FIELDS, required=("name",)), patch=Obj(EXPENSE_FIELDS))


def validated(node: Obj, body: Any, *, partial: bool = False) -> tuple[dict[str, Any], Report]:
    """The body checked by ``node``: ``(cleaned, report)``; ``cleaned`` is empty when there are errors.

    On a PATCH an explicit ``null`` clears an optional field (``retail_price: null``: variable price), so
    the nulls are kept as ``None`` in ``cleaned``; a null for a field that cannot be absent is an error.
    """
    report = Report()
    cleaned = node.check(body, "", report)
    if cleaned is INVALID:
        return {}, report
    if partial:
        for key, value in body.items():
            if value is None and key in node.fields:
                if key in ("id", "name"):
                    report.error(key, "must not be null", "required")
                else:
                    cleaned[key] = None
    return (cleaned if not report.errors else {}), report


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
