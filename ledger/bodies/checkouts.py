"""The spec's checkout declared once (``core.declare``): Checkout, Sale, Discount Summary, Tax Summary, Payment
(spec: Sale, Discount Summary, Tax Summary, Checkout).

Each class validates (field names, types, required fields, the exact path of every error) and is the request
schema ``/api/schema/`` publishes. The rules across fields that concern the body's shape (a tax is named; an item
range is an index or a start and an end; one return per checkout) are ``@rule``s here; the accounting checks (a
sale or a return, totals that add up, shipping per ``ecom_id``, payments that cover the total) are the functions
of ``ledger.checks``, attached to the bodies they read. ``SaleSummary`` is the one declaration of the spec's
``sale.summary``, used for a checkout's sale parts and for the basket of orders a shop places.
"""

from __future__ import annotations

from typing import Any

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
    with_description,
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

    def __init__(self, fields: dict[str, Node], descriptions: dict[str, str]) -> None:
        self.fields = fields
        self.descriptions = descriptions

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
                {
                    "type": "object",
                    "properties": {key: with_description(node.json_schema(components), self.descriptions[key])},
                    "required": [key],
                }
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

    amount = Field(
        AMOUNT,
        description="The tax at this rate, in the currency's major unit (e.g. 12.50); negative in a return.",
    )
    rate = Field(
        Num(minimum=0, maximum=100),
        description="A fraction as in the examples (0.25 for 25%), as the register sends it; 0 to 100 accepted.",
    )
    tax_name = optional(ID, description="The tax's name (1-255 characters). This or `name` is required.")
    name = optional(
        ID,
        description="The tax's name as the spec's sale example spells it; accepted in place of `tax_name`.",
    )
    type = Field(TAX_TYPE, description="`vat` (included in the amounts) or `sales_tax` (added on top).")

    @rule
    def tax_name_required(obj: dict[str, Any], path: str, report: Report) -> None:
        """`tax_name` or `name` is required (the spec's Tax Summary says `tax_name`, its sale example `name`)."""
        if "tax_name" not in obj and "name" not in obj:
            report.error(join(path, "tax_name"), "is required (tax_name, or name)", "required")


INDEX = Int(minimum=0, maximum=1_000_000)


class ItemRange(Body, schema_name="SaleDiscountItemRange"):
    """The line items a discount applies to: one `index`, or `start_index` to `end_index`."""

    index = optional(INDEX, description="The index of one unit within the line item (0 or more).")
    start_index = optional(INDEX, description="The first unit's index of a range (0 or more); needs `end_index`.")
    end_index = optional(INDEX, description="The last unit's index of a range, not less than `start_index`.")

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
DISCOUNT_TYPE_VALUES = {
    "amount": "The amount off all units, in the currency's major unit, VAT included.",
    "amount_per_item": "The amount off each unit, in the currency's major unit, VAT included.",
    "percentage": "The percentage off, as the register sends it.",
    "percentage_with_max": "A percentage with a maximum amount, as the register sends it (kept as sent).",
    "new_price": "The new price of all units, in the currency's major unit, VAT included.",
    "new_price_per_item": "The new price of each unit, in the currency's major unit, VAT included.",
}


class AutomaticMode(Body, schema_name="SaleDiscountAutomaticMode"):
    domain = Field(
        Enum(("KX_SALE_PRICE_DOMAIN", "KX_PROMOTION_DOMAIN")),
        description=(
            "`KX_SALE_PRICE_DOMAIN` (a product's sale price) or `KX_PROMOTION_DOMAIN` (a promotion campaign)."
        ),
    )
    identifier = Field(
        ID,
        description="The id of the sale price or campaign that gave the discount (1-255 characters).",
    )


class DiscountTrigger(Body, schema_name="SaleDiscountTrigger"):
    items = Field(
        Enum(("basket", "line_item", "items")),
        description="What triggered the promotion: `basket`, `line_item` or `items`.",
    )
    count = optional(Num(minimum=0), description="How many items triggered it (0 or more).")


class Discount(Body, schema_name="SaleDiscount"):
    """Spec: Discount Summary, `discount`."""

    id = Field(ID, description="The discount's id (1-255 characters).")
    name = optional(L10nString(), description="The name shown on the receipt (L10nString).")
    application = Field(
        OneKeyOf(
            {"basket": Literal(True), "line_item": ID, "line_items": MapOf(ItemRange)},
            {
                "basket": "Always true: the discount is on the whole basket.",
                "line_item": "The `line_item_id` of the line discounted.",
                "line_items": "A `line_item_id` to the range of its units discounted (at most 1000 lines).",
            },
        ),
        description=(
            "What it applies to: exactly one of `basket` (true), `line_item` (a line item id) or `line_items` "
            "(line item id to an item range)."
        ),
    )
    mode = Field(
        OneKeyOf(
            {"manual": Literal(True), "automatic": AutomaticMode},
            {"manual": "Always true: added by the cashier.", "automatic": "Given by a sale price or a campaign."},
        ),
        description="How it was given: exactly one of `manual` (true: added by the cashier) or `automatic`.",
    )
    type = Field(
        OneKeyOf({name: NumberOrObject() for name in DISCOUNT_TYPES}, DISCOUNT_TYPE_VALUES),
        description=(
            "The kind and its value: exactly one key of `amount`, `amount_per_item`, `percentage`, "
            "`percentage_with_max`, `new_price`, `new_price_per_item`; the value a number (amounts in the major "
            "unit) or an object, kept as sent."
        ),
    )
    trigger = optional(DiscountTrigger, description="Present when a promotion campaign triggered the discount.")


class DiscountSummary(Body, schema_name="SaleDiscountSummary"):
    """Spec: Discount Summary."""

    amount = Field(
        AMOUNT,
        description="What the discount took off, in the currency's major unit, VAT included (all units of the line).",
    )
    discount = Field(Discount, description="The discount given.")


class Address(Body, schema_name="SaleShippingAddress"):
    city = optional(OPTIONAL_TEXT, description="The city (blank allowed, at most 255 characters).")
    country = optional(OPTIONAL_TEXT, description="The country's name (blank allowed, at most 255 characters).")
    country_code = optional(
        Str(max_length=2, allow_blank=True),
        description="ISO 3166-1 alpha-2 code (at most 2 characters, blank allowed).",
    )
    name = optional(OPTIONAL_TEXT, description="The recipient's name (blank allowed, at most 255 characters).")
    postal_code = optional(OPTIONAL_TEXT, description="The postal code (blank allowed, at most 255 characters).")
    street = optional(
        Str(max_length=1000, allow_blank=True),
        description="The street address (blank allowed, at most 1000 characters).",
    )


class CustomerInfo(Body, schema_name="SaleShippingCustomerInfo"):
    email = optional(
        OPTIONAL_TEXT,
        description="The customer's e-mail address for the delivery (not checked as an address; blank allowed).",
    )
    phone = optional(OPTIONAL_TEXT, description="The customer's phone number for the delivery (blank allowed).")


class ShippingBehavior(Body, schema_name="SaleShippingBehavior"):
    """A shipping line: the items with its `ecom_id` are shipped to `address`."""

    address = optional(Address, description="Where the items of this `ecom_id` are shipped.")
    customer_info = optional(CustomerInfo, description="How to reach the customer about the delivery.")
    method_id = optional(ID, description="The shipping option's `id` (from the shipping options integration).")


class GiftcardBehavior(Body, schema_name="SaleGiftcardBehavior"):
    """A gift card sold."""

    code = Field(ID, description="The code of the gift card sold (printed as a bar code).")
    integration_id = Field(ID, description="The runtime integration that issued the card.")
    payment_type_id = optional(Enum(GIFTCARD_PAYMENT_TYPES), description="Always `giftcard.integration`.")
    report = optional(AnyObject(), description="The integration's own data about the card; not read, kept as sent.")


class VoucherBehavior(Body, schema_name="SaleVoucherBehavior"):
    """A voucher sold."""

    code = Field(ID, description="The code of the voucher sold.")
    integration_id = Field(ID, description="The runtime integration that issued the voucher.")
    payment_type_id = optional(Enum(VOUCHER_PAYMENT_TYPES), description="Always `voucher.integration`.")
    report = optional(
        AnyObject(),
        description="The integration's own data about the voucher; not read, kept as sent.",
    )


class GiftcardUseBehavior(Body, schema_name="SaleGiftcardUseBehavior"):
    """A gift card used."""

    code = Field(ID, description="The code of the gift card used.")
    integration_id = Field(ID, description="The runtime integration that holds the card.")
    payment_type_id = optional(Enum(GIFTCARD_PAYMENT_TYPES), description="Always `giftcard.integration`.")


class VoucherUseBehavior(Body, schema_name="SaleVoucherUseBehavior"):
    """A voucher used."""

    code = Field(ID, description="The code of the voucher used.")
    integration_id = Field(ID, description="The runtime integration that holds the voucher.")
    payment_type_id = optional(Enum(VOUCHER_PAYMENT_TYPES), description="Always `voucher.integration`.")


class ExpenseBehavior(Body, schema_name="SaleExpenseBehavior"):
    """An expense paid out of the drawer."""

    identifier = Field(ID, description="The expense type's id.")
    image_urls = Field(
        Arr(Url(), max_items=100),
        description="Photos of the receipt (http or https URLs, at most 100).",
    )


class CustomerAccountDepositBehavior(Body, schema_name="SaleCustomerAccountDepositBehavior"):
    customer_id = Field(ID, description="The customer whose account receives the deposit.")
    payment_type_id = Field(ID, description="The customer account payment type.")


class ContainerDepositBehavior(Body, schema_name="SaleContainerDepositBehavior"):
    product_id = Field(ID, description="The deposit's product id.")
    tag = Field(ID, description="The tag that made the product rule apply.")
    rule_id = Field(ID, description="The product rule's `id`.")
    parent_line_item_id = Field(ID, description="The `line_item_id` of the line the deposit belongs to.")


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


BEHAVIOR_DESCRIPTIONS = {
    "shipping": "A shipping line: the lines with its `ecom_id` are shipped as it says.",
    "giftcard": "A gift card sold.",
    "voucher": "A voucher sold.",
    "giftcard_use": "A gift card used as payment.",
    "voucher_use": "A voucher used as payment.",
    "expense": "An expense paid out of the drawer.",
    "customer_account_deposit": "A deposit to a customer's account.",
    "container_deposit": "A container deposit added by a product rule.",
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
            "properties": {
                key: with_description(nullable(body.json_schema(components)), BEHAVIOR_DESCRIPTIONS[key])
                for key, body in BEHAVIORS.items()
            },
            "description": "At most one behavior (a key given as null counts as absent).",
        }


class DimensionValue(Body, schema_name="SaleDimensionValue"):
    id = Field(ID, description="The value's id.")
    name = Field(L10nString(), description="The value shown (L10nString), e.g. `XL`.")
    color = optional(Str(max_length=7), description="A colour as hex `#AABBCC` (at most 7 characters).")


class Dimension(Body, schema_name="SaleDimension"):
    """A variant's dimension (size, colour) and its value."""

    id = Field(ID, description="The dimension's id, e.g. `size`.")
    name = optional(L10nString(), description="The dimension shown (L10nString), e.g. `Size`.")
    value = optional(DimensionValue, description="The variant's value of the dimension.")


class LineItem(Body, schema_name="SaleLineItem"):
    """Spec: Sale, line item. Amounts are the line's (docs/amounts.md)."""

    # The line's amounts (docs/amounts.md), all required.
    base_price = Field(
        AMOUNT,
        description=(
            "The line's price before discounts (quantity x unit price), in the currency's major unit, VAT "
            "included; equal to `retail_price`."
        ),
    )
    retail_price = Field(
        AMOUNT,
        description=(
            "The line's price before discounts: quantity x unit price, in the currency's major unit, VAT included."
        ),
    )
    sales_tax_amount = Field(
        AMOUNT,
        description="The sales tax added on top of `sub_total`, in the currency's major unit.",
    )
    sub_total = Field(
        AMOUNT,
        description="The line after discounts, VAT included, sales tax excluded, in the currency's major unit.",
    )
    total = Field(
        AMOUNT,
        description=(
            "What the customer pays for the line: `sub_total + sales_tax_amount`, in the currency's major unit."
        ),
    )
    total_tax_amount = Field(
        AMOUNT,
        description="`vat_amount + sales_tax_amount` (refused otherwise), in the currency's major unit.",
    )
    vat_amount = Field(AMOUNT, description="The VAT included in `sub_total`, in the currency's major unit.")
    quantity = Field(AMOUNT, description="Units; negative in a return. A number (may have decimals, e.g. weight).")
    line_item_id = Field(ID, description="The line's id, unique within the sale.")
    barcode = optional(ID, description="EAN, SKU, ISBN or similar.")
    cost_price = optional(
        AMOUNT,
        description="The line's cost (quantity x unit cost), in the currency's major unit, VAT excluded.",
    )
    ecom_id = optional(
        ID,
        description=(
            "Groups the line with others shipped together; each group has one line with a `shipping` behavior."
        ),
    )
    id = optional(ID, description="The product id.")
    image_url = optional(Url(), description="The product's image (an http or https URL, at most 2048 characters).")
    product_group = optional(
        ID,
        description="The product group, for statistics; lines without one fall in `__none__`.",
    )
    variant_id = optional(ID, description="The variant id, for a variant product.")
    comment = optional(
        TEXT,
        description="The cashier's comment on the line (blank allowed, at most 10000 characters).",
    )
    margin = optional(
        AMOUNT,
        description="The profit amount: `margin_total - cost_price` where a cost is known, in the major unit.",
    )
    margin_total = optional(
        AMOUNT,
        description="The net amount the margin is measured on: `sub_total - vat_amount`, in the major unit.",
    )
    name = optional(L10nString(), description="The product name shown (L10nString).")
    behavior = optional(
        Behavior(),
        description="What the line does besides selling goods: at most one of the 8 behaviors.",
    )
    dimensions = optional(Arr(Dimension, max_items=50), description="The variant's dimensions (at most 50).")
    discounts = optional(Arr(DiscountSummary, max_items=100), description="The discounts on the line (at most 100).")
    tags = optional(
        Arr(ID, max_items=100),
        description="The product's tags (at most 100), as campaigns and product rules read them.",
    )
    taxes = optional(Arr(TaxSummary, max_items=20), description="The taxes on the line, one per rate (at most 20).")


class SaleCustomer(Body):
    """Spec: Sale, customer."""

    identifier = Field(ID, description="The customer's identifier in the integrated system.")
    name = optional(
        Str(max_length=1000, allow_blank=True),
        description=(
            "The name; stored only for a customer with an organization number (blank allowed, at most 1000 characters)."
        ),
    )
    street = optional(
        Str(max_length=1000, allow_blank=True),
        description="The street; stored only for a customer with an organization number (at most 1000 characters).",
    )
    city = optional(OPTIONAL_TEXT, description="The city; stored only for a customer with an organization number.")
    postal_code = optional(
        OPTIONAL_TEXT,
        description="The postal code; stored only for a customer with an organization number.",
    )
    country = optional(
        OPTIONAL_TEXT,
        description="The country; stored only for a customer with an organization number.",
    )
    country_code = optional(
        Str(max_length=2, allow_blank=True),
        description="ISO 3166-1 alpha-2 (at most 2 characters).",
    )
    email = optional(
        Str(max_length=320, allow_blank=True),
        description="The e-mail address (at most 320 characters; not checked as an address).",
    )
    phone = optional(Str(max_length=64, allow_blank=True), description="The phone number (at most 64 characters).")
    organization_number = optional(OPTIONAL_TEXT, description="Its presence marks a B2B customer.")


class PurchaseType(Body, schema_name="SalePurchaseType"):
    name = Field(ID, description="The purchase type's name, e.g. `Staff`.")
    identifier = Field(ID, description="The purchase type's id: a special price across all products.")


class SaleSummary(Body):
    """Spec: Sale, summary: the sale's amounts and its line items."""

    # The sale's amounts (docs/amounts.md), all required.
    base_price = Field(
        AMOUNT,
        description="The sum of the lines' `base_price`, in the currency's major unit, VAT included.",
    )
    sales_tax_amount = Field(AMOUNT, description="The sum of the lines' sales tax, in the currency's major unit.")
    sub_total = Field(
        AMOUNT,
        description="The sum of the lines' `sub_total`: after discounts, VAT included, sales tax excluded.",
    )
    total = Field(
        AMOUNT,
        description="What the customer pays: the sum of the lines' `total`, in the currency's major unit.",
    )
    total_discounts = Field(
        AMOUNT,
        description="`base_price - sub_total`, in the currency's major unit (a warning when not).",
    )
    total_tax_amount = Field(
        AMOUNT,
        description="`vat_amount + sales_tax_amount`; the `taxes` amounts sum to it (refused otherwise).",
    )
    vat_amount = Field(AMOUNT, description="The VAT included in `sub_total`, in the currency's major unit.")
    comment = optional(
        TEXT,
        description="The cashier's comment on the sale (blank allowed, at most 10000 characters).",
    )
    return_reference = optional(ID, description="In a return: the identifier of the sale returned.")
    customer = optional(SaleCustomer, description="The customer attached to the sale.")
    is_return = Field(
        Bool(),
        description="True for a return of goods (negative quantities and amounts); a sale is never both.",
    )
    line_items = Field(Arr(LineItem, max_items=MAX_LINE_ITEMS), description="The lines (at most 1000).")
    margin = optional(AMOUNT, description="The sale's profit amount, in the currency's major unit (stored as sent).")
    margin_total = optional(
        AMOUNT,
        description="The sale's net amount the margin is measured on, in the major unit (stored as sent).",
    )
    purchase_type = optional(PurchaseType, description="A special price across all products, when one was used.")
    taxes = Field(Arr(TaxSummary, max_items=100), description="The tax per rate over all lines (at most 100).")

    sale_or_return = rule(checks.sale_or_return)
    expense = rule(checks.expense)
    line_totals = rule(checks.line_totals)
    summary_totals = rule(checks.summary_totals)
    shipping_per_ecom_group = rule(checks.shipping_per_ecom_group)


class Payment(Body, schema_name="SalePayment"):
    """Spec: Sale, payment: a successful entry counts towards the total (cash rounding and cashback are signed
    entries)."""

    amount = Field(
        AMOUNT,
        description="Paid, in the base currency's major unit; negative for cashback and some cash rounding.",
    )
    foreign_currency = optional(
        Currency(),
        description="ISO 4217 code of the currency handed over, when not the base currency.",
    )
    foreign_currency_amount = optional(AMOUNT, description="The amount in `foreign_currency`, in its major unit.")
    identifier = Field(ID, description="The payment's id.")
    payment_type = Field(ID, description="E.g. `cash`, `card.external`, `cash.rounding`, `giftcard.integration`.")
    success = Field(Bool(), description="Only successful payments count towards the total.")
    error = optional(TEXT, description="Why the payment failed, when `success` is false (at most 10000 characters).")
    metadata = optional(AnyObject(), description="The payment provider's data; not read, kept as sent.")
    receipts = optional(AnyArray(), description="The provider's receipts; not read, kept as sent.")


class ShopAddress(Body, schema_name="ReceiptShopAddress"):
    city = optional(OPTIONAL_TEXT, description="The shop's city.")
    name = optional(OPTIONAL_TEXT, description="The shop's name.")
    street = optional(OPTIONAL_TEXT, description="The shop's street.")
    zip = optional(OPTIONAL_TEXT, description="The shop's postal code.")


class ReceiptMetadata(Body):
    footer = optional(TEXT, description="Text printed at the receipt's foot (at most 10000 characters).")
    header = optional(TEXT, description="Text printed at the receipt's head (at most 10000 characters).")
    shop_address = optional(ShopAddress, description="The shop's address as printed.")
    vat_number = optional(OPTIONAL_TEXT, description="The shop's VAT number as printed.")


SOURCE_TEXT = Str(max_length=255)


class Source(Body, schema_name="SaleSource"):
    """Where the sale was made: the register (required) and, as the app knows them, its market, shop and
    cashier."""

    market_id = optional(SOURCE_TEXT, description="The market's identifier, e.g. `dk` (at most 255 characters).")
    market_name = optional(SOURCE_TEXT, description="The market's name.")
    shop_id = optional(SOURCE_TEXT, description="The shop's stock location identifier.")
    shop_name = optional(SOURCE_TEXT, description="The shop's name.")
    register_id = Field(
        SOURCE_TEXT,
        description="The register's identifier: a register of the account (at most 255 characters).",
    )
    register_name = optional(SOURCE_TEXT, description="The register's name.")
    cashier_id = optional(SOURCE_TEXT, description="The cashier's identifier.")
    cashier_name = optional(SOURCE_TEXT, description="The cashier's name.")


class Timing(Body, schema_name="SaleTiming"):
    timestamp = Field(Num(minimum=0, maximum=MAX_TIMESTAMP), description="Unix seconds.")
    timestamp_string = optional(
        Str(max_length=64),
        description="ISO 8601 with time zone, as the register shows it (at most 64 characters).",
    )
    timezone = optional(Str(max_length=64), description="The tz database name, e.g. `Europe/Copenhagen`.")
    timestamp_date_string = optional(
        Str(max_length=32),
        description="Year-month-day-hour-minute in the local time zone.",
    )
    timestamp_week_string = optional(
        Str(max_length=16),
        description="Weekyear-week in the local time zone (the weekyear is not always the year).",
    )


# --- Checkout (spec: Checkout) -------------------------------------------------------------------------

PAYMENTS = Arr(Payment, max_items=MAX_PAYMENTS)


class SalePart(Body, schema_name="CheckoutSale"):
    """One sale of a checkout."""

    identifier = Field(ID, description="The sale's id, unique in the account and within the checkout.")
    sequence_number = Field(
        Int(minimum=0, maximum=MAX_SEQUENCE_NUMBER),
        description="The register's running number of the sale, 0 to 2^53-1.",
    )
    basket = Field(SaleSummary, description="The sale's amounts and lines (the sale.summary shape).")
    fiscal_rules_data = optional(AnyValue(), description="Data for fiscal rules; not read, kept as sent.")
    # Extension (decided): in a checkout of several sales each part carries its own payments.
    payments = optional(PAYMENTS, description="In a checkout of several sales, this sale's own payments.")


class Checkout(Body):
    """Spec: Checkout. Its amounts compare at the minor unit of `base_currency_code`."""

    identifier = Field(
        ID,
        description="The checkout's id, unique in the account: posting it again with another body is refused (409).",
    )
    voided = optional(Bool(), description="True if the checkout was voided during payment.")
    timing = Field(Timing, description="When the checkout was made.")
    source = Field(Source, description="Where it was made: the register is required and must be one of the account.")
    base_currency_code = Field(
        Currency(),
        description="ISO 4217 code of every amount; amounts compare at its minor unit.",
    )
    payments = Field(
        PAYMENTS,
        description="The payments of the whole checkout (at most 100); the successful ones cover the total.",
    )
    receipt_metadata = optional(ReceiptMetadata, description="What the receipt printed.")
    sales = Field(
        Arr(SalePart, min_items=1, max_items=MAX_SALES_PER_CHECKOUT),
        description="The sales the checkout yields (1 to 10, at most one a return).",
    )

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


# The names other apps and the benches read (``orders.bodies``, ``bench/pricing.py``).
SALE_SUMMARY = SaleSummary
CHECKOUT = Checkout


def check_checkout(body: Any) -> tuple[Any, SaleReport]:
    """The posted checkout, cleaned, or ``INVALID`` with the errors in the report. The amounts of its sales
    compare at the minor unit of its ``base_currency_code``."""
    currency = body.get("base_currency_code") if isinstance(body, dict) else None
    report = SaleReport(currency=currency if is_currency_code(currency) else None)
    return Checkout.check(body, "", report), report
