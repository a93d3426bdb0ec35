"""The spec's POS bodies declared once (``core.declare``): Checkout, Sale, Discount Summary, Tax Summary, Payment,
the register's cashier, a newsletter signup (spec: Sale, Discount Summary, Tax Summary, Checkout).

Each class validates (field names, types, required fields, the exact path of every error) and is the request
schema ``/api/schema/`` publishes. The rules across fields that concern the body's shape (a tax is named; an item
range is an index or a start and an end; one return per checkout) are ``@rule``s here; the accounting checks (a
sale or a return, totals that add up, shipping per ``ecom_id``, payments that cover the total) are the functions
of ``ledger.checks``, attached to the bodies they read. ``SaleSummary`` is the one declaration of the spec's
``sale.summary``, used for a checkout's sale parts and for the basket of orders a shop places.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email

from accounts.money import is_currency_code
from accounts.validation import TAX_TYPES
from core.declare import Body, Field, optional, rule
from core.nodes import (
    INVALID,
    AnyArray,
    AnyObject,
    AnyValue,
    Arr,
    Bool,
    Components,
    Currency,
    Enum,
    Int,
    L10nString,
    Node,
    Num,
    Report,
    Schema,
    Str,
    Url,
    join,
    nullable,
)
from ledger import checks
from ledger.checks import SaleReport

MAX_LINE_ITEMS = 1000
MAX_PAYMENTS = 100
MAX_SALES_PER_CHECKOUT = 10
MAX_SEQUENCE_NUMBER = 2**53 - 1  # the largest integer a JSON client holds exactly
# Unix seconds; the upper bound refuses milliseconds sent by mistake (and dates no clock should show).
MAX_TIMESTAMP = 4_102_444_800  # 2100-01-01T00:00:00Z

ID = Str()
TEXT = Str(max_length=10_000, allow_blank=True)
OPTIONAL_TEXT = Str(allow_blank=True)
AMOUNT = Num()  # amounts may be negative: returns, expenses, cashback, cash rounding


class MapOf(Node):
    """An object with free keys (identifiers), each value checked by ``value``."""

    def __init__(self, value: Node, *, max_items: int = 1000) -> None:
        self.value = value
        self.max_items = max_items

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        if len(value) > self.max_items:
            return report.error(path, f"must have at most {self.max_items} keys", "too_long")
        out = {}
        ok = True
        for key, element in value.items():
            cleaned = self.value.check(element, join(path, str(key)[:100]), report)
            ok = ok and cleaned is not INVALID
            out[key] = cleaned
        return out if ok else INVALID

    def json_schema(self, components: Components) -> Schema:
        return {
            "type": "object",
            "additionalProperties": self.value.json_schema(components),
            "maxProperties": self.max_items,
        }


class OneKeyOf(Node):
    """An object with exactly one key out of ``fields`` (spec: ``application``, ``mode``, ``type``)."""

    def __init__(self, fields: dict[str, Node]) -> None:
        self.fields = fields

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        keys = [k for k in value if value[k] is not None]
        if len(keys) != 1:
            return report.error(path, f"must have exactly one of: {', '.join(self.fields)}", "exactly_one")
        key = keys[0]
        node = self.fields.get(key)
        if node is None:
            return report.error(
                join(path, str(key)[:100]), f"must be one of: {', '.join(self.fields)}", "invalid_choice"
            )
        cleaned = node.check(value[key], join(path, key), report)
        return INVALID if cleaned is INVALID else {key: cleaned}

    def json_schema(self, components: Components) -> Schema:
        return {
            "oneOf": [
                {"type": "object", "properties": {key: node.json_schema(components)}, "required": [key]}
                for key, node in self.fields.items()
            ],
            "description": f"Exactly one of: {', '.join(f'`{key}`' for key in self.fields)}.",
        }


class NumberOrObject(Node):
    """A discount's value: a number, or an object the spec does not detail (kept as it came)."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, dict):
            return value
        return AMOUNT.check(value, path, report)

    def json_schema(self, components: Components) -> Schema:
        return {"oneOf": [AMOUNT.json_schema(components), {"type": "object"}]}


class Literal(Node):
    def __init__(self, expected: Any) -> None:
        self.expected = expected

    def check(self, value: Any, path: str, report: Report) -> Any:
        if value != self.expected or type(value) is not type(self.expected):
            return report.error(path, f"must be {str(self.expected).lower()}", "invalid")
        return value

    def json_schema(self, components: Components) -> Schema:
        kind = "boolean" if isinstance(self.expected, bool) else "string"
        return {"type": kind, "enum": [self.expected]}


# --- Shared pieces -----------------------------------------------------------------------------------

TAX_TYPE = Enum(TAX_TYPES)
# One choice each; named in the schema by ``ENUM_NAME_OVERRIDES`` (config/settings.py).
GIFTCARD_PAYMENT_TYPES = ("giftcard.integration",)
VOUCHER_PAYMENT_TYPES = ("voucher.integration",)


class TaxSummary(Body, schema_name="SaleTaxSummary"):
    """Spec: Tax Summary."""

    amount = AMOUNT
    rate = Num(minimum=0, maximum=100)
    tax_name = optional(ID)
    name = optional(ID)
    type = TAX_TYPE

    @rule
    def tax_name_required(obj: dict[str, Any], path: str, report: Report) -> None:
        """`tax_name` or `name` is required (the spec's Tax Summary says `tax_name`, its sale example `name`)."""
        if "tax_name" not in obj and "name" not in obj:
            report.error(join(path, "tax_name"), "is required (tax_name, or name)", "required")


INDEX = Int(minimum=0, maximum=1_000_000)


class ItemRange(Body, schema_name="SaleDiscountItemRange"):
    """The line items a discount applies to: one `index`, or `start_index` to `end_index`."""

    index = optional(INDEX)
    start_index = optional(INDEX)
    end_index = optional(INDEX)

    @rule
    def index_or_range(obj: dict[str, Any], path: str, report: Report) -> None:
        """Either `index`, or `start_index` and `end_index` (not less than `start_index`)."""
        if "index" in obj:
            if "start_index" in obj or "end_index" in obj:
                report.error(path, "has either index or start_index and end_index, not both", "exactly_one")
        elif "start_index" not in obj or "end_index" not in obj:
            report.error(path, "needs index, or start_index and end_index", "required")
        elif obj["start_index"] > obj["end_index"]:
            report.error(join(path, "end_index"), "must not be less than start_index", "out_of_range")


DISCOUNT_TYPES = ("amount", "amount_per_item", "percentage", "percentage_with_max", "new_price", "new_price_per_item")


class AutomaticMode(Body, schema_name="SaleDiscountAutomaticMode"):
    domain = Enum(("KX_SALE_PRICE_DOMAIN", "KX_PROMOTION_DOMAIN"))
    identifier = ID


class DiscountTrigger(Body, schema_name="SaleDiscountTrigger"):
    items = Enum(("basket", "line_item", "items"))
    count = optional(Num(minimum=0))


class Discount(Body, schema_name="SaleDiscount"):
    """Spec: Discount Summary, `discount`."""

    id = ID
    name = optional(L10nString())
    application = OneKeyOf({"basket": Literal(True), "line_item": ID, "line_items": MapOf(ItemRange)})
    mode = OneKeyOf({"manual": Literal(True), "automatic": AutomaticMode})
    type = OneKeyOf({name: NumberOrObject() for name in DISCOUNT_TYPES})
    trigger = optional(DiscountTrigger)


class DiscountSummary(Body, schema_name="SaleDiscountSummary"):
    """Spec: Discount Summary."""

    amount = AMOUNT
    discount = Discount


class Address(Body, schema_name="SaleShippingAddress"):
    city = optional(OPTIONAL_TEXT)
    country = optional(OPTIONAL_TEXT)
    country_code = optional(Str(max_length=2, allow_blank=True))
    name = optional(OPTIONAL_TEXT)
    postal_code = optional(OPTIONAL_TEXT)
    street = optional(Str(max_length=1000, allow_blank=True))


class CustomerInfo(Body, schema_name="SaleShippingCustomerInfo"):
    email = optional(OPTIONAL_TEXT)
    phone = optional(OPTIONAL_TEXT)


class ShippingBehavior(Body, schema_name="SaleShippingBehavior"):
    """A shipping line: the items with its `ecom_id` are shipped to `address`."""

    address = optional(Address)
    customer_info = optional(CustomerInfo)
    method_id = optional(ID)


class GiftcardBehavior(Body, schema_name="SaleGiftcardBehavior"):
    """A gift card sold."""

    code = ID
    integration_id = ID
    payment_type_id = optional(Enum(GIFTCARD_PAYMENT_TYPES))
    report = optional(AnyObject())


class VoucherBehavior(Body, schema_name="SaleVoucherBehavior"):
    """A voucher sold."""

    code = ID
    integration_id = ID
    payment_type_id = optional(Enum(VOUCHER_PAYMENT_TYPES))
    report = optional(AnyObject())


class GiftcardUseBehavior(Body, schema_name="SaleGiftcardUseBehavior"):
    """A gift card used."""

    code = ID
    integration_id = ID
    payment_type_id = optional(Enum(GIFTCARD_PAYMENT_TYPES))


class VoucherUseBehavior(Body, schema_name="SaleVoucherUseBehavior"):
    """A voucher used."""

    code = ID
    integration_id = ID
    payment_type_id = optional(Enum(VOUCHER_PAYMENT_TYPES))


class ExpenseBehavior(Body, schema_name="SaleExpenseBehavior"):
    """An expense paid out of the drawer."""

    identifier = ID
    image_urls = Arr(Url(), max_items=100)


class CustomerAccountDepositBehavior(Body, schema_name="SaleCustomerAccountDepositBehavior"):
    customer_id = ID
    payment_type_id = ID


class ContainerDepositBehavior(Body, schema_name="SaleContainerDepositBehavior"):
    product_id = ID
    tag = ID
    rule_id = ID
    parent_line_item_id = ID


BEHAVIORS: dict[str, Node] = {
    "shipping": ShippingBehavior,
    "giftcard": GiftcardBehavior,
    "voucher": VoucherBehavior,
    "giftcard_use": GiftcardUseBehavior,
    "voucher_use": VoucherUseBehavior,
    "expense": ExpenseBehavior,
    "customer_account_deposit": CustomerAccountDepositBehavior,
    "container_deposit": ContainerDepositBehavior,
}


class Behavior(Node):
    """Spec: line item ``behavior``, at most one of the 8 keys."""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        keys = [k for k in value if value[k] is not None]
        unknown = [k for k in keys if k not in BEHAVIORS]
        if unknown:
            return report.error(
                join(path, str(unknown[0])[:100]), f"must be one of: {', '.join(BEHAVIORS)}", "invalid_choice"
            )
        if len(keys) > 1:
            return report.error(path, f"has at most one behavior, not {len(keys)} ({', '.join(keys)})", "one_behavior")
        if not keys:
            return {}
        key = keys[0]
        cleaned = BEHAVIORS[key].check(value[key], join(path, key), report)
        return INVALID if cleaned is INVALID else {key: cleaned}

    def json_schema(self, components: Components) -> Schema:
        return {
            "type": "object",
            "properties": {key: nullable(body.json_schema(components)) for key, body in BEHAVIORS.items()},
            "description": "At most one behavior (a key given as null counts as absent).",
        }


class DimensionValue(Body, schema_name="SaleDimensionValue"):
    id = ID
    name = L10nString()
    color = optional(Str(max_length=7))


class Dimension(Body, schema_name="SaleDimension"):
    """A variant's dimension (size, colour) and its value."""

    id = ID
    name = optional(L10nString())
    value = optional(DimensionValue)


class LineItem(Body, schema_name="SaleLineItem"):
    """Spec: Sale, line item. Amounts are the line's (docs/amounts.md)."""

    # The line's amounts, all required (a chain declares them in this order).
    base_price = retail_price = sales_tax_amount = sub_total = total = total_tax_amount = vat_amount = AMOUNT
    quantity = AMOUNT
    line_item_id = ID
    barcode = optional(ID)
    cost_price = optional(AMOUNT)
    ecom_id = optional(ID)
    id = optional(ID)
    image_url = optional(Url())
    product_group = optional(ID)
    variant_id = optional(ID)
    comment = optional(TEXT)
    margin = optional(AMOUNT)
    margin_total = optional(AMOUNT)
    name = optional(L10nString())
    behavior = optional(Behavior())
    dimensions = optional(Arr(Dimension, max_items=50))
    discounts = optional(Arr(DiscountSummary, max_items=100))
    tags = optional(Arr(ID, max_items=100))
    taxes = optional(Arr(TaxSummary, max_items=20))


class SaleCustomer(Body):
    """Spec: Sale, customer."""

    identifier = ID
    name = optional(Str(max_length=1000, allow_blank=True))
    street = optional(Str(max_length=1000, allow_blank=True))
    city = optional(OPTIONAL_TEXT)
    postal_code = optional(OPTIONAL_TEXT)
    country = optional(OPTIONAL_TEXT)
    country_code = optional(Str(max_length=2, allow_blank=True))
    email = optional(Str(max_length=320, allow_blank=True))
    phone = optional(Str(max_length=64, allow_blank=True))
    organization_number = optional(OPTIONAL_TEXT)


class PurchaseType(Body, schema_name="SalePurchaseType"):
    name = ID
    identifier = ID


class SaleSummary(Body):
    """Spec: Sale, summary: the sale's amounts and its line items."""

    # The sale's amounts, all required (a chain declares them in this order).
    base_price = sales_tax_amount = sub_total = total = total_discounts = total_tax_amount = vat_amount = AMOUNT
    comment = optional(TEXT)
    return_reference = optional(ID)
    customer = optional(SaleCustomer)
    is_return = Bool()
    line_items = Arr(LineItem, max_items=MAX_LINE_ITEMS)
    margin = optional(AMOUNT)
    margin_total = optional(AMOUNT)
    purchase_type = optional(PurchaseType)
    taxes = Arr(TaxSummary, max_items=100)

    sale_or_return = rule(checks.sale_or_return)
    expense = rule(checks.expense)
    line_totals = rule(checks.line_totals)
    summary_totals = rule(checks.summary_totals)
    shipping_per_ecom_group = rule(checks.shipping_per_ecom_group)


class Payment(Body, schema_name="SalePayment"):
    """Spec: Sale, payment: a successful entry counts towards the total (cash rounding and cashback are signed
    entries)."""

    amount = AMOUNT
    foreign_currency = optional(Currency())
    foreign_currency_amount = optional(AMOUNT)
    identifier = ID
    payment_type = ID
    success = Bool()
    error = optional(TEXT)
    metadata = optional(AnyObject())
    receipts = optional(AnyArray())


class ShopAddress(Body, schema_name="ReceiptShopAddress"):
    city = optional(OPTIONAL_TEXT)
    name = optional(OPTIONAL_TEXT)
    street = optional(OPTIONAL_TEXT)
    zip = optional(OPTIONAL_TEXT)


class ReceiptMetadata(Body):
    footer = optional(TEXT)
    header = optional(TEXT)
    shop_address = optional(ShopAddress)
    vat_number = optional(OPTIONAL_TEXT)


SOURCE_TEXT = Str(max_length=255)


class Source(Body, schema_name="SaleSource"):
    """Where the sale was made: the register (required) and, as the app knows them, its market, shop and
    cashier."""

    market_id = market_name = shop_id = shop_name = optional(SOURCE_TEXT)
    register_id = SOURCE_TEXT
    register_name = cashier_id = cashier_name = optional(SOURCE_TEXT)


class Timing(Body, schema_name="SaleTiming"):
    timestamp = Field(Num(minimum=0, maximum=MAX_TIMESTAMP), description="Unix seconds.")
    timestamp_string = optional(Str(max_length=64))
    timezone = optional(Str(max_length=64))
    timestamp_date_string = optional(Str(max_length=32))
    timestamp_week_string = optional(Str(max_length=16))


class Cashier(Body, schema_name="RegisterCashier"):
    """The cashier, as the register shows them."""

    display_name = Str(max_length=64)
    full_name = optional(Str(max_length=1000))
    identifier = ID
    image_url = optional(Url(https_only=True))


# --- Checkout (spec: Checkout) -------------------------------------------------------------------------

PAYMENTS = Arr(Payment, max_items=MAX_PAYMENTS)


class SalePart(Body, schema_name="CheckoutSale"):
    """One sale of a checkout."""

    identifier = ID
    sequence_number = Int(minimum=0, maximum=MAX_SEQUENCE_NUMBER)
    basket = SaleSummary
    fiscal_rules_data = optional(AnyValue())
    # Extension (decided): in a checkout of several sales each part carries its own payments.
    payments = optional(PAYMENTS, description="In a checkout of several sales, this sale's own payments.")


class Checkout(Body):
    """Spec: Checkout. Its amounts compare at the minor unit of `base_currency_code`."""

    identifier = ID
    voided = optional(Bool())
    timing = Timing
    source = Source
    base_currency_code = Currency()
    payments = PAYMENTS
    receipt_metadata = optional(ReceiptMetadata)
    sales = Arr(SalePart, min_items=1, max_items=MAX_SALES_PER_CHECKOUT)

    @rule
    def one_return_at_most(checkout: dict[str, Any], path: str, report: Report) -> None:
        """At most one of the sales is a return."""
        returns = [i for i, part in enumerate(checkout["sales"]) if part["basket"]["is_return"]]
        for i in returns[1:]:
            report.error(join(path, f"sales[{i}].basket.is_return"), "a checkout has at most one return", "one_return")

    @rule
    def unique_sale_identifiers(checkout: dict[str, Any], path: str, report: Report) -> None:
        """Each sale of the checkout has its own `identifier`."""
        seen: set[str] = set()
        for i, part in enumerate(checkout["sales"]):
            if part["identifier"] in seen:
                report.error(
                    join(path, f"sales[{i}].identifier"), "is used by another sale of this checkout", "duplicate"
                )
            seen.add(part["identifier"])

    payments_cover_totals = rule(checks.payments_cover_totals)


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

    email = Email()
    first_name = optional(NAME_PART)
    last_name = optional(NAME_PART)
    name = optional(NAME_PART)
    register_id = optional(Str(max_length=64), description="A register of the account.")
    shop_id = optional(Str(max_length=64), description="A stock location identifier.")
    timestamp = optional(Num(minimum=0), description="Unix seconds; now if absent.")
    identifier = optional(
        Str(max_length=255),
        description="The app's own id of this signup: posting it again records nothing and answers the stored one.",
    )


# The names other apps and the benches read (``orders.definitions``, ``bench/validation.py``).
CASHIER = Cashier
SALE_SUMMARY = SaleSummary
CHECKOUT = Checkout


def check_checkout(body: Any) -> tuple[Any, SaleReport]:
    """The posted checkout, cleaned, or ``INVALID`` with the errors in the report. The amounts of its sales
    compare at the minor unit of its ``base_currency_code``."""
    currency = body.get("base_currency_code") if isinstance(body, dict) else None
    report = SaleReport(currency=currency if is_currency_code(currency) else None)
    return Checkout.check(body, "", report), report
