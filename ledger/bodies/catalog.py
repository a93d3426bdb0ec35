"""The catalog's bodies, declared once: products, expenses and newsletter signups (spec: Product, Expense).

Bodies are validated with the nodes of ``core.nodes`` and the declared bodies of ``core.declare`` (not DRF input
serializers) so that every error names its exact path (``retail_price.se``, ``taxes[1].rate``) and numbers stay
``Decimal`` as ``read_json_body`` parsed them. ``PRODUCT`` and ``EXPENSE`` validate the REST bodies, whose OpenAPI
request schemas are the DRF ``*RequestSerializer`` classes of ``ledger.serializers.catalog``; the newsletter
signup the POS posts, ``PosNewsletterSignup``, validates and is its own request schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email

from accounts.validation import TAX_DESCRIPTIONS, TAX_TYPES
from core.declare import Body, Field, optional
from core.nodes import (
    INVALID,
    Arr,
    Components,
    Enum,
    L10nString,
    MarketPrice,
    Node,
    Num,
    Obj,
    Report,
    Schema,
    Str,
    Url,
)

# --- Products and expenses --------------------------------------------------------------------

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


# --- Newsletter signup -----------------------------------------------------------------------------------


class Email(Str):
    """An e-mail address (RFC 5321 length), trimmed; the domain is lower-cased, the local part kept."""

    def __init__(self) -> None:
        super().__init__(max_length=320)

    def check(self, value: Any, path: str, report: Report) -> Any:
        value = super().check(value.strip() if isinstance(value, str) else value, path, report)
        if value is INVALID:
            return value
        try:
            validate_email(value)
        except DjangoValidationError:
            return report.error(path, "is not a valid e-mail address", "invalid_email")
        local, _, domain = value.rpartition("@")
        return f"{local}@{domain.lower()}"

    def json_schema(self, components: Components) -> Schema:
        return {**super().json_schema(components), "format": "email"}


NAME_PART = Str(max_length=255, allow_blank=True)  # a blank name is left out of the event


class PosNewsletterSignup(Body):
    """A newsletter signup from the POS or a second-screen app (declared once: it validates and is the
    request schema)."""

    email = Field(
        Email(),
        description="The address signed up (at most 320 characters, checked); trimmed, its domain lower-cased.",
    )
    first_name = optional(
        NAME_PART,
        description="The first name (blank allowed, at most 255 characters; a blank is left out).",
    )
    last_name = optional(
        NAME_PART,
        description="The last name (blank allowed, at most 255 characters; a blank is left out).",
    )
    name = optional(
        NAME_PART,
        description="The full name (blank allowed, at most 255 characters; a blank is left out).",
    )
    register_id = optional(Str(max_length=64), description="A register of the account.")
    shop_id = optional(Str(max_length=64), description="A stock location identifier.")
    timestamp = optional(Num(minimum=0), description="Unix seconds; now if absent.")
    identifier = optional(
        Str(max_length=255),
        description="The app's own id of this signup: posting it again records nothing and answers the stored one.",
    )
