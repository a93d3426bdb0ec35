"""The answer of each runtime integration kind checked against its spec model (spec: Endpoints B, Runtime
integrations; E-commerce product, Product, Customer, Customer-specific discount, Shipping option, Gift card
entity, Customer account payment entity).

``validate(kind, data)`` is the one entry point: it answers ``(cleaned, problems)`` where ``problems`` are
``{"field", "message", "code"}`` with the exact path inside the answer (``[0].retail_price``, ``amount``).
``cleaned`` has unknown fields dropped and numbers as ``Decimal``:

* for an array kind (``product_search``, ``customer_lookup``, ``customer_discounts``, ``shipping_options``) it
  is the list of the *valid* elements only, so a caller that can live with a partial answer (pricing with
  customer discounts) uses it, and a caller that cannot (the POS endpoints) refuses the answer on any problem;
  it is ``None`` when the answer is not an array at all;
* for an object kind it is the object, or ``None`` when there is any problem.

Why not the integrator's own words: the shapes arrive over HTTP from a system we do not control, so every
field is checked here before a cashier sees it or it reaches pricing, payments or the catalog.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from campaigns.pricing.registry import CAMPAIGN, check_campaign
from core.decimals import floats_as_decimals
from core.declare import Body, BodyMeta, Field, optional
from core.nodes import (
    INVALID,
    AnyObject,
    Arr,
    Bool,
    Components,
    Currency,
    L10nString,
    Node,
    Num,
    Report,
    Schema,
    Str,
    join,
    nullable,
)
from integrations.errors import BadAnswer
from ledger.bodies.catalog import PRODUCT, TAXES

# Far above any useful result list; bounds the work of validating an integrator's answer.
MAX_ELEMENTS = 1000

Problems = list[dict[str, str]]

# What a blank text is to ``Blankable`` (``str.strip()`` leaves nothing), as a schema pattern.
BLANK = r"^\s*$"


class Blankable(Node):
    """An optional text an integrator may send empty (``"barcode": ""``): kept as ``""`` rather than failing the
    whole answer; anything else is checked by ``inner``."""

    def __init__(self, inner: Node) -> None:
        self.inner = inner

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, str) and not value.strip():
            return value
        return self.inner.check(value, path, report)

    def json_schema(self, components: Components) -> Schema:
        return {"anyOf": [self.inner.json_schema(components), {"type": "string", "pattern": BLANK}]}


class OneOf(Node):
    """A value that must be one of a few numbers (gift card ``status``)."""

    def __init__(self, values: tuple[int, ...], meaning: str) -> None:
        self.values = values
        self.meaning = meaning

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return self.wrong_type("a number", value, path, report)
        if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
            value = int(value)
        if value not in self.values:
            return report.error(path, f"must be one of {self.meaning}", "invalid_choice")
        return value

    def json_schema(self, components: Components) -> Schema:
        return {"type": "integer", "enum": list(self.values), "description": f"One of {self.meaning}."}


class DeprecatedBalance(Body, schema_name="IntegratorCustomerBalance"):
    """Spec: Customer ``balance``, the deprecated object form."""

    identifier = Field(Str(), description="The account's id (required in this form).")
    balance = Field(Num(), description="The balance, in the currency's major unit (required in this form).")


class Balance(Node):
    """Spec: Customer ``balance``: a number, or the deprecated object ``{identifier, balance}`` (both required).
    Kept in the form it came in; ``integrations.customers.normalise_balance`` flattens it."""

    deprecated = DeprecatedBalance
    number = Num()

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, dict):
            return self.deprecated.check(value, path, report)
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return self.wrong_type("a number or an object {identifier, balance}", value, path, report)
        return self.number.check(value, path, report)

    def json_schema(self, components: Components) -> Schema:
        return {"oneOf": [self.number.json_schema(components), self.deprecated.json_schema(components)]}


TEXT = Blankable(Str(max_length=1000))
NAME = Blankable(L10nString())
MONEY = Num(minimum=0)


class EcommerceProduct(Body, schema_name="IntegratorEcommerceProduct"):
    """Spec: E-commerce product. No variants: each element is a concrete product or variant; only the price is
    required (a POS cannot sell what it cannot price)."""

    id = optional(TEXT, description="The product's id (blank allowed, at most 1000 characters).")
    variant_id = optional(TEXT, description="The variant's id (blank allowed).")
    name = optional(NAME, description="The product's name (L10nString; blank allowed).")
    variant_name = optional(NAME, description="The variant's name (L10nString; blank allowed).")
    description = optional(
        Blankable(L10nString(max_length=10_000)),
        description="The description (L10nString, at most 10000 characters; blank allowed).",
    )
    barcode = optional(TEXT, description="EAN, SKU, ISBN or similar (blank allowed).")
    image_url = optional(
        Blankable(Str(max_length=2048)),
        description="The image's URL (at most 2048 characters; blank allowed).",
    )
    product_group = optional(TEXT, description="The product group (blank allowed).")
    retail_price = Field(MONEY, description="The unit price, in the currency's major unit, VAT included; 0 or more.")
    sale_price = optional(
        MONEY,
        description="The unit price on sale, in the currency's major unit, VAT included; 0 or more.",
    )
    cost_price = optional(MONEY, description="The unit cost, in the currency's major unit, for margins; 0 or more.")
    taxes = optional(TAXES, description="The product's taxes; when absent, the market's default tax applies.")


class Customer(Body, schema_name="IntegratorCustomer"):
    """Spec: Customer (lookup and general model). Only ``identifier`` is required."""

    identifier = Field(Str(), description="The customer's id in the integrated system (1-255 characters).")
    name = optional(TEXT, description="The name (blank allowed, at most 1000 characters).")
    street = optional(TEXT, description="The street (blank allowed, at most 1000 characters).")
    city = optional(TEXT, description="The city (blank allowed, at most 1000 characters).")
    postal_code = optional(
        Blankable(Str(max_length=32)),
        description="The postal code (blank allowed, at most 32 characters).",
    )
    country = optional(TEXT, description="The country's name (blank allowed, at most 1000 characters).")
    country_code = optional(
        Blankable(Str(max_length=2)),
        description="ISO 3166-1 alpha-2 (blank allowed, at most 2 characters).",
    )
    phone = optional(
        Blankable(Str(max_length=64)),
        description="The phone number (blank allowed, at most 64 characters).",
    )
    email = optional(
        Blankable(Str(max_length=320)),
        description="The e-mail address (blank allowed, at most 320 characters).",
    )
    additional_info = optional(
        Blankable(Str(max_length=10_000)),
        description="Free text shown to the cashier (blank allowed, at most 10000 characters).",
    )
    organization_number = optional(
        Blankable(Str(max_length=64)),
        description="Its presence marks a B2B customer (blank allowed, at most 64 characters).",
    )
    balance = optional(
        Balance(),
        description=(
            "The customer account's balance, in the currency's major unit: a number, or the deprecated object."
        ),
    )
    balance_overdue = optional(
        Num(),
        description="The overdue amount, in the currency's major unit; the cashier is prompted to ask for a deposit.",
    )
    credit_limit = optional(
        Num(minimum=0),
        description=(
            "In the currency's major unit, 0 or more: a purchase on account beyond balance plus this is blocked."
        ),
    )
    block_sales = optional(Bool(), description="True: sales to the customer are refused.")


class ShippingOption(Body, schema_name="IntegratorShippingOption"):
    """Spec: Shipping option. All four fields are required; the subtitle may be empty. Titles are shown as they
    come and copied into the sale's shipping behavior, whose ``method_title`` is an L10nString: accepted too."""

    id = Field(Str(), description="The option's id, the integrator's choice (1-255 characters).")
    price = Field(MONEY, description="The shipping price, in the currency's major unit, VAT included; 0 or more.")
    title = Field(L10nString(), description="The option's title, shown to the cashier (L10nString).")
    subtitle = Field(Blankable(L10nString()), description="More about the option (L10nString; may be blank).")


class GiftCard(Body, schema_name="IntegratorGiftCard"):
    """Spec: Gift card entity, returned in full by all four gift card actions."""

    amount = Field(MONEY, description="The amount available now, in the card currency's major unit; 0 or more.")
    code = Field(Str(), description="The customer-displayed code, used for bar codes (1-255 characters).")
    create_date = Field(Num(minimum=0), description="Unix seconds (with decimals) when the card was created.")
    currency_code = Field(Currency(), description="ISO 4217: the card is refused in another currency.")
    expiry_date = Field(Num(minimum=0), description="Unix seconds (with decimals) when the card expires.")
    id = Field(Str(), description="The integrator's own id of the card.")
    status = Field(
        OneOf((1, 2, 3), "1 (created), 2 (active), 3 (used)"),
        description="1 (created), 2 (active) or 3 (used).",
    )
    external_giftcard = optional(AnyObject(), description="The integrator's private data; passed back as it came.")


class CustomerAccount(Body, schema_name="IntegratorCustomerAccount"):
    """Spec: Customer account payment entity: the balance (read) or the amount actually used (pay). A balance
    may be negative (the customer owes), so no minimum here; the payment service checks what it asked for."""

    amount = Field(
        Num(),
        description=(
            "In the currency's major unit: for a read, the balance (may be negative); for a pay, the amount "
            "actually used."
        ),
    )


# Campaign price fields that the spec's customer-specific discount gives as plain numbers (one market, one
# currency per request), at the top level and in stair steps.
PRICE_FIELDS = ("new_price_per_item", "new_price_per_item_if_cheaper", "amount_per_item", "amount_condition")


class CustomerDiscount(Node):
    """Spec: Customer-specific discount: the shape of a discount campaign (checked by the import's campaign
    schema of its type), prices plain numbers."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        before = len(report.errors)
        cleaned = check_campaign(value, path, report)
        if cleaned is INVALID:
            return INVALID
        places = [(cleaned, path)]
        places += [(step, join(path, f"steps[{i}]")) for i, step in enumerate(cleaned.get("steps", ()))]
        for obj, at in places:
            for name in PRICE_FIELDS:
                if isinstance(obj.get(name), dict):
                    report.error(
                        join(at, name),
                        "must be a plain number: customer discounts are asked for one market and currency",
                        "invalid_type",
                    )
        return cleaned if len(report.errors) == before else INVALID

    def json_schema(self, components: Components) -> Schema:
        """A campaign (``CAMPAIGN``, by its ``type``) whose prices, at the top and in its steps, are numbers."""
        plain = "A plain number here, in the major unit of the currency asked for (one market, one currency)."
        numbers = {name: {**nullable({"type": "number"}), "description": f"`{name}`: {plain}"} for name in PRICE_FIELDS}
        steps = {
            **nullable({"type": "array", "items": {"type": "object", "properties": numbers}}),
            "description": "A stair's steps, as the campaign type declares them, their prices plain numbers.",
        }
        return {
            "allOf": [CAMPAIGN.json_schema(components), {"properties": {**numbers, "steps": steps}}],
            "description": "A discount campaign (as imported) whose prices are plain numbers: customer discounts "
            "are asked for one market and currency.",
        }


# The spec model of each kind: an element node for the array kinds, an object node for the others.
ARRAY_KINDS: dict[str, Node] = {
    "product_search": EcommerceProduct,
    "customer_lookup": Customer,
    "customer_discounts": CustomerDiscount(),
    "shipping_options": ShippingOption,
}
OBJECT_KINDS: dict[str, Node] = {
    "product_lookup": PRODUCT,
    "giftcard_create": GiftCard,
    "giftcard_activate": GiftCard,
    "giftcard_read": GiftCard,
    "giftcard_pay": GiftCard,
    "customer_account_read": CustomerAccount,
    "customer_account_pay": CustomerAccount,
}


def _array(node: Node, data: Any, report: Report) -> list[Any] | None:
    if not isinstance(data, list):
        Arr(node).check(data, "", report)  # names the wrong type at the root
        return None
    if len(data) > MAX_ELEMENTS:
        report.error("", f"must have at most {MAX_ELEMENTS} elements", "too_long")
        return None
    out = []
    for i, element in enumerate(data):
        cleaned = node.check(element, f"[{i}]", report)
        if cleaned is not INVALID:
            out.append(cleaned)
    return out


def validate(kind: str, data: Any) -> tuple[Any, Problems]:
    """The answer of a ``kind`` integration checked against its spec model: ``(cleaned, problems)`` (see the
    module docstring). An unknown kind is a programming error (KeyError)."""
    report = Report()
    value = floats_as_decimals(data)
    if kind in ARRAY_KINDS:
        return _array(ARRAY_KINDS[kind], value, report), report.errors
    node = OBJECT_KINDS[kind]
    cleaned = node.check(value, "", report)
    return (None if cleaned is INVALID or report.errors else cleaned), report.errors


def describe(problems: Problems, *, limit: int = 3) -> str:
    """The problems as one line a person can act on: ``[0].retail_price is required; ...``."""
    parts = [f"{p['field'] or 'the answer'} {p['message']}" for p in problems[:limit]]
    more = len(problems) - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def require_valid(kind: str, data: Any) -> Any:
    """The cleaned answer, or ``BadAnswer`` (502) naming the first bad field and describing the problems: for
    callers that cannot act on a partial answer."""
    cleaned, problems = validate(kind, data)
    if problems or cleaned is None:
        field = problems[0]["field"] if problems else ""
        raise BadAnswer(
            f"The integrator's {kind} answer does not match the spec: {describe(problems)}",
            field=field or "answer",
        )
    return cleaned


def declaration(kind: str) -> Node:
    """The node that declares the answer of ``kind``: its spec model (an array of at most ``MAX_ELEMENTS`` of
    it for an array kind). ``validate`` checks with the same model; this node is what the OpenAPI document
    publishes as the answer of the kind's callback (``integrations.callbacks``)."""
    if kind in ARRAY_KINDS:
        return Arr(ARRAY_KINDS[kind], max_items=MAX_ELEMENTS)
    return OBJECT_KINDS[kind]


def answer_schema(kind: str, components: Components) -> Schema:
    """The answer of ``kind`` as an OpenAPI 3.1 schema, the components it refers to added to ``components``."""
    return declaration(kind).json_schema(components)


def published(body: BodyMeta) -> Schema:
    """A reference to the component of ``body``, an object kind's spec model, for a POS answer that is that model
    as it stands (the gift card operations answer the Gift card entity). Only ``integrations.callbacks.publish``
    adds the component: given to drf-spectacular as a body, it would go through drf-spectacular's enum hook,
    which runs before the callbacks' hook and makes a component of an enum (the card's ``status``), so that the
    one model would be published in two shapes."""
    if body not in OBJECT_KINDS.values() or not isinstance(body, BodyMeta):
        raise ValueError(f"{body!r} is not the model of an object kind's answer")
    return {"$ref": f"#/components/schemas/{body.schema_name}"}
