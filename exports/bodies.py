"""What the identity export of each exportable entity type sends (spec: Events, Exported wrapper), declared once
(``core.declare``): ``ELEMENTS`` names each type's element, and ``exports.openapi`` publishes them in the OpenAPI
document (``/api/schema/``).

The naming convention of the published components: ``Export<Entity>`` is the wrapper an identity export sends, an
object of element key to element (one element in a real-time export, one or more in a cron export);
``Export<Entity>Element`` is one element, the entity's JSON form. ``<Entity>`` is the entity type's code in
CamelCase (``sales``: ``ExportSales``, ``ExportSalesElement``). The parts an element shares with a request body are
that body's declaration (a sale's ``summary`` is the checkout's ``SaleSummary``), published under the body's own
name; docs/events.md lists each type with its fields and an example.
"""

from __future__ import annotations

from core.declare import Body, BodyMeta, Choices, Field, optional
from core.nodes import (
    AnyObject,
    AnyValue,
    Arr,
    Bool,
    Currency,
    Enum,
    Int,
    Num,
    Str,
)
from core.outbox import EntityType
from ledger.bodies import checkouts as sale
from ledger.bodies.catalog import PRODUCT
from orders import bodies as orders
from orders.models import OrderState

TEXT = Str(max_length=10_000, allow_blank=True)
ID = Str()
STOCK_EVENT_TYPES = ("sale", "return", "received", "stock_count_reset", "external_reset")


# --- Checkouts and sales ---------------------------------------------------------------------------------------


class ExportedCheckout(sale.Checkout, schema_name="ExportCheckoutsElement"):
    """Spec: Checkout, as the register posted it, with `voided`, `timing` and `source` completed by the service
    (`voided` false when left out; the market, shop and cashier names it knows)."""


class ExportedSale(Body, schema_name="ExportSalesElement"):
    """Spec: Sale. One sale, return or expense of a checkout, as stored when the checkout was posted; amounts in
    the major unit of `base_currency_code`, VAT included unless the name says otherwise (docs/amounts.md)."""

    base_currency_code = Field(Currency(), description="ISO 4217 code of every amount.")
    identifier = Field(ID, description="The sale's identifier, unique in the account.")
    payments = Field(
        sale.PAYMENTS,
        description="The checkout's payments; in a checkout of several sales, this sale's own when it had them.",
    )
    receipt_metadata = optional(sale.ReceiptMetadata, description="What the receipt printed.")
    sequence_number = Field(Int(minimum=0, maximum=sale.MAX_SEQUENCE_NUMBER), description="The register's number.")
    source = Field(sale.Source, description="Where the sale was made.")
    summary = Field(sale.SaleSummary, description="The sale's amounts and line items.")
    timing = Field(sale.Timing, description="When the checkout was made.")
    voided = Field(Bool(), description="True if the checkout was voided during payment.")
    checkout_identifier = Field(ID, description="The checkout that yielded the sale.")
    fiscal_rules_data = optional(AnyValue(), description="As the register sent it.")


# --- Register close statements ---------------------------------------------------------------------------------

AMOUNT = Num()
COUNT = Num(minimum=0)


class TaxTotal(Body, schema_name="ExportStatementTaxSummary"):
    """The tax of one rate over the period."""

    amount = Field(AMOUNT, description="In the base currency's major unit.")
    rate = Field(Num(minimum=0, maximum=100), description="As the sales gave it (0.25 for 25%).")
    name = Field(TEXT, description="The tax's name.")
    type = Field(sale.TAX_TYPE, description="`vat` (included) or `sales_tax` (added on top).")


class PaymentTotal(Body, schema_name="ExportStatementPaymentTotal"):
    """The totals of one payment type over the period (credit: positive amounts, debit: negative)."""

    type = Field(ID, description="The payment type, e.g. `cash`, `card.external`, `cash.rounding`.")
    totals = Field(
        AnyObject(),
        description="`base_currency_total` and `total` (all currencies in the base currency), their `_credit` "
        "and `_debit` parts and `transaction_count`s, and maps by currency code (`foreign_currencies...`).",
    )


class SalesFigures(Body, schema_name="ExportStatementSalesSummary"):
    """Spec: Register close statement, sales summary: sums over the lines of the period's sales (not voided)."""

    base_price = Field(AMOUNT, description="Before discounts, VAT included, in the base currency's major unit.")
    margin = Field(AMOUNT, description="The profit amount.")
    margin_total = Field(AMOUNT, description="The net amount margins are measured on.")
    sub_total = Field(AMOUNT, description="After discounts, VAT included, sales tax excluded.")
    total = Field(AMOUNT, description="What the customers paid.")
    total_discounts = Field(AMOUNT, description="`base_price - sub_total`.")
    total_tax_amount = Field(AMOUNT, description="`vat_amount + sales_tax_amount`.")
    count = Field(COUNT, description="The number of sales.")
    item_count = Field(AMOUNT, description="The sum of the quantities.")
    vat_amount = optional(AMOUNT, description="The VAT included.")
    sales_tax_amount = optional(AMOUNT, description="The sales tax added on top.")
    payments = optional(
        Arr(PaymentTotal, max_items=10_000),
        description="One entry per payment type used. By product group: the parts of the sales' payments attributed "
        "to the group, by its share of each sale's total, a payment counted once in each group it touches "
        "(absent from statements made before the attribution existed).",
    )
    tax_summaries = optional(Arr(TaxTotal, max_items=10_000), description="One entry per tax of the period.")


BY_GROUP = sale.MapOf(SalesFigures, max_items=100_000)


class RegisterSummary(Body, schema_name="ExportStatementRegisterSummary"):
    """Spec: Register close statement, `register_summary`. Returns and expenses are negative."""

    all = Field(SalesFigures, description="Sales, returns and expenses together.")
    sales = Field(SalesFigures, description="The sales.")
    returns = Field(SalesFigures, description="The returns.")
    expenses = Field(SalesFigures, description="The expenses.")
    all_by_product_group = Field(BY_GROUP, description="`all` by product group (`__none__`: without a group).")
    sales_by_product_group = Field(BY_GROUP, description="`sales` by product group.")
    returns_by_product_group = Field(BY_GROUP, description="`returns` by product group.")
    cash_drawer_open_count = Field(COUNT, description="As in `event_counts`.")
    number_of_aborted_sales = Field(COUNT, description="As in `event_counts`.")
    number_of_initiated_sales = Field(COUNT, description="As in `event_counts`.")
    voided_count = Field(COUNT, description="As in `event_counts`.")
    cash_total_at_open = Field(AMOUNT, description="Cash in the drawer at the opening, in the base currency.")
    id = Field(ID, description="`<register identifier>-<sequence_number>`.")
    opened_at = optional(Num(minimum=0), description="Unix seconds with decimals.")
    event_counts = optional(AnyObject(), description="The register's counts of the period's events, by name.")


class Reconciliation(Body, schema_name="ExportStatementReconciliation"):
    """One per payment type of the register, plus one per foreign currency taken in cash in the period."""

    payment_type_identifier = Field(ID, description="E.g. `cash`, `card.external`.")
    currency_code = Field(Currency(), description="ISO 4217.")
    should_be_reconciled = Field(Bool(), description="False: `counted` equals `total`.")
    depositing = Field(
        Enum(("manual", "automatic", "none")),
        description="`manual` for cash in the base currency, `automatic` for foreign cash, `none` for the rest.",
    )
    total = Field(AMOUNT, description="What the period's sales say, in `currency_code`'s major unit.")
    counted = Field(AMOUNT, description="What was counted, in `currency_code`'s major unit.")
    deposited_amount = optional(AMOUNT, description="Cash taken out of the drawer to deposit.")
    credit = optional(AMOUNT, description="The positive amounts' sum.")
    debit = optional(AMOUNT, description="The negative amounts' sum.")
    transaction_count = Field(COUNT, description="The number of payments.")
    transaction_count_credit = optional(COUNT, description="Of positive amounts.")
    transaction_count_debit = optional(COUNT, description="Of negative amounts.")


class ShopInfo(Body, schema_name="ExportStatementShopInfo"):
    """The shop as its receipts print it."""

    vat_number = optional(TEXT, description="The shop's VAT number.")
    shop_address = optional(sale.ShopAddress, description="The shop's address.")


class StatementTiming(Body, schema_name="ExportStatementTiming"):
    """When the register was closed: the instant in UTC, the date and week in the account's time zone."""

    timestamp = Field(Int(minimum=0, maximum=sale.MAX_SEQUENCE_NUMBER), description="Milliseconds since the epoch.")
    timestamp_string = Field(TEXT, description="ISO 8601 in UTC.")
    timezone = Field(TEXT, description="The account's tz database name (the zone of the two strings below).")
    timestamp_date_string = Field(TEXT, description="Year-month-day-hour-minute, in the account's time zone.")
    timestamp_week_string = Field(TEXT, description="ISO weekyear-week, in the account's time zone.")


class ExportedStatement(Body, schema_name="ExportRegisterCloseStatementsElement"):
    """Spec: Register close statement: the close of one register period; amounts in the major unit of
    `base_currency_code` (docs/amounts.md)."""

    base_currency_code = Field(Currency(), description="ISO 4217 code of the amounts.")
    comment = optional(TEXT, description="The reason for a reconciliation difference.")
    reconciliation_time = Field(Num(minimum=0), description="Unix seconds with decimals.")
    sequence_number = Field(Int(minimum=0, maximum=sale.MAX_SEQUENCE_NUMBER), description="The period's number.")
    shop_info = optional(ShopInfo, description="The shop.")
    source = Field(sale.Source, description="The register (and its market, shop and cashier).")
    register_summary = Field(RegisterSummary, description="The period's figures.")
    reconciliations = Field(Arr(Reconciliation, max_items=10_000), description="Counted against expected.")
    timing = Field(
        StatementTiming,
        description=(
            "When the register was closed: `timestamp` (milliseconds) and `timestamp_string` in UTC; "
            "`timestamp_date_string` and `timestamp_week_string` in the account's time zone, named in `timezone`."
        ),
    )


# --- Product edit events, newsletter signups, stock events -------------------------------------------------------


class ExportedProductEvent(Body, schema_name="ExportProductEditEventsElement"):
    """A product created, changed or deleted (the spec does not show it: the shape is decided by this service)."""

    event = Field(Enum(("create", "update", "delete")), description="What happened to the product.")
    product = Field(PRODUCT, description="The product after the event (before it, for a delete): spec Product.")
    account = Field(ID, description="The account's identifier.")
    timestamp = Field(Num(minimum=0), description="Unix seconds with decimals.")
    changed = optional(Arr(ID, max_items=1000), description="For an update: the names of the fields changed.")


class SignupSource(Body, schema_name="ExportNewsletterSignupSource"):
    """Where the signup was made, as far as the service knows it."""

    market_id = optional(ID, description="The market's identifier.")
    shop_id = optional(ID, description="The shop's stock location identifier.")
    shop_name = optional(TEXT, description="The shop's name.")
    register_id = optional(ID, description="The register's identifier.")
    register_name = optional(TEXT, description="The register's name.")


class ExportedSignup(Body, schema_name="ExportNewsletterSignupsElement"):
    """A newsletter signup (the spec does not show it: the shape is decided by this service). Each signup is an element,
    the same address twice included."""

    email = Field(Str(max_length=320), description="The address signed up; its domain lower-cased.")
    first_name = optional(TEXT, description="As given (left out when blank).")
    last_name = optional(TEXT, description="As given (left out when blank).")
    name = optional(TEXT, description="As given (left out when blank).")
    source = optional(SignupSource, description="Where it was made; left out when not in a shop.")
    timestamp = Field(Num(minimum=0), description="Unix seconds with decimals.")


class ExportedStockEvent(Body, schema_name="ExportStockEventsElement"):
    """Spec: Stock event. Quantities in units (at most 6 decimals)."""

    adjustment = optional(Num(), description="Units added (below 0: removed). Exactly one of this and the next.")
    new_stock_value = optional(Num(), description="The new level, in units.")
    product_id = Field(ID, description="The product's id.")
    variant_id = optional(ID, description="For a variant product.")
    sale_id = optional(ID, description="The sale that caused it, for `sale` and `return`.")
    stock_location_id = Field(ID, description="The stock location's identifier.")
    stock_count_diff = optional(Num(), description="For a stock count: counted minus expected.")
    stock_count_expected = optional(Num(), description="For a stock count: the level before it.")
    stock_count_id = optional(ID, description="For a stock count: its id.")
    timestamp = Field(Str(max_length=64), description="ISO 8601 in UTC.")
    type = Field(Enum(STOCK_EVENT_TYPES), description="What moved the stock.")


# --- Orders -------------------------------------------------------------------------------------------------


class ExportedOrderState(Body, schema_name="ExportOrderState"):
    """Spec: Order state."""

    created = Field(Num(minimum=0), description="When the order was created, Unix seconds.")
    last_change = Field(Num(minimum=0), description="When it took this state, Unix seconds.")
    last_change_by = optional(AnyValue(), description="Who moved it: a Cashier, or the cashier's identifier.")
    last_change_comment = optional(TEXT, description="The comment sent with the state.")
    order_state = Field(Choices(OrderState.choices), description="The state the order is in now.")


class ImportedOrder(Body, schema_name="ExportIncomingOrder"):
    """Spec: Order, general model, in the lean shape it was imported with (spec: Incoming order)."""

    order_identifier = Field(ID, description="As imported, unique on its stock location.")
    basket = Field(orders.Basket, description="As imported (amounts in the basket's `currency`, VAT included).")
    customer = optional(orders.IncomingCustomer, description="As imported.")
    payment = optional(orders.Payment, description="As imported: the order is pre-paid.")
    shipping = optional(orders.Shipping, description="As imported.")


class ExportedStateChange(Body, schema_name="ExportIncomingOrderStateChangesElement"):
    """Spec: Events, incoming order state change: an order imported into a shop changed state there."""

    order = Field(ImportedOrder, description="The order.")
    state = Field(ExportedOrderState, description="Its state after the change.")


class ExportedOutgoingOrder(Body, schema_name="ExportOutgoingOrdersElement"):
    """Spec: Order, general model: an order a shop placed with the external system; the basket is the full
    sale.summary shape (amounts in the account market's currency, VAT included)."""

    order_identifier = Field(ID, description="The order's id; send it back in an outgoing order state change.")
    basket = Field(sale.SaleSummary, description="What is ordered, as a sale summary.")
    customer = optional(orders.IncomingCustomer, description="Who ordered.")
    payment = optional(orders.Payment, description="Its presence: pre-paid.")
    shipping = optional(orders.OrderShipping, description="How to ship.")


# The element of each entity type, by its code (``exports.entities.REGISTRY``).
ELEMENTS: dict[str, BodyMeta] = {
    EntityType.CHECKOUTS: ExportedCheckout,
    EntityType.SALES: ExportedSale,
    EntityType.REGISTER_CLOSE_STATEMENTS: ExportedStatement,
    EntityType.PRODUCT_EDIT_EVENTS: ExportedProductEvent,
    EntityType.NEWSLETTER_SIGNUPS: ExportedSignup,
    EntityType.STOCK_EVENTS: ExportedStockEvent,
    EntityType.INCOMING_ORDER_STATE_CHANGES: ExportedStateChange,
    EntityType.OUTGOING_ORDERS: ExportedOutgoingOrder,
}
