"""The POS ledger: what the registers produce and what the back-office computes from it.

Spec sections: Product, Sale, Checkout, Register close statement, Expense, Stock event, Events.

Documents (a checkout, a sale, a statement) are stored as the exact JSON form the spec gives them and are
never changed afterwards; exports send that JSON. Beside each sale, its line items, payments and taxes are
kept as rows (``SaleLine``, ``SalePayment``, ``SaleTax``) so that a register close statement is a handful
of SQL aggregates instead of a walk over every document. Money columns are ``Decimal`` with 6 places.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts.models import AccountOwned, Identified, Register, StockLocation
from core.constraints import exactly_one_not_null
from core.jsonenc import DecimalJSONField


def money(**kwargs: object) -> models.DecimalField:
    return models.DecimalField(max_digits=20, decimal_places=6, **kwargs)  # type: ignore[arg-type]


# --- Catalogue (spec: Product, Expense) -----------------------------------------------------------------


class Product(AccountOwned):
    """A product of the account (spec: Product). ``product_id`` is the spec's ``id``."""

    product_id = models.CharField(max_length=255)
    name = DecimalJSONField(help_text="L10nString: a string or {language: string}.")
    description = DecimalJSONField(null=True, blank=True)
    barcode = models.CharField(max_length=255, blank=True)
    image_url = models.CharField(max_length=2048, blank=True)
    product_group = models.CharField(max_length=255, blank=True)
    retail_price = DecimalJSONField(
        null=True, blank=True, help_text="MarketPrice: a number or {market: number}; empty for a variable price."
    )
    cost_price = money(null=True, blank=True)
    taxes = DecimalJSONField(null=True, blank=True, help_text='[{"name", "rate", "type"}]; empty: market default.')
    search_text = models.TextField(blank=True, editable=False, help_text="Every name, lower case, for search.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["product_id"]
        constraints = [models.UniqueConstraint(fields=["account", "product_id"], name="product_unique_per_account")]
        indexes = [models.Index(fields=["account", "barcode"])]

    def __str__(self) -> str:
        return self.product_id


class ProductEditEvent(AccountOwned):
    """A product was created, changed or deleted (spec: Events, product edit events). Never changed."""

    class Event(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"

    event = models.CharField(max_length=8, choices=Event.choices)
    product_id = models.CharField(max_length=255)
    document = DecimalJSONField(help_text="The exported JSON form of the event.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.event} {self.product_id}"


class Expense(AccountOwned):
    """An expense a register can book (spec: Expense), e.g. coffee paid from the cash drawer."""

    expense_id = models.CharField(max_length=255)
    name = DecimalJSONField(help_text="L10nString.")
    taxes = DecimalJSONField(
        null=True, blank=True, help_text='A list of {"name", "rate", "type"}, or {market: [...]} per market.'
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["expense_id"]
        constraints = [models.UniqueConstraint(fields=["account", "expense_id"], name="expense_unique_per_account")]

    def __str__(self) -> str:
        return self.expense_id


# --- Newsletter signups (spec: Events, newsletter signup events) -----------------------------------------


class NewsletterSignup(AccountOwned):
    identifier = models.CharField(
        max_length=255, blank=True, help_text="Optional, from the app: a repeated post with it records nothing."
    )
    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    register = models.ForeignKey(Register, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    email = models.CharField(max_length=320)
    document = DecimalJSONField(help_text="The exported JSON form of the signup event.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "identifier"], condition=~Q(identifier=""), name="signup_identifier_unique"
            )
        ]

    def __str__(self) -> str:
        return self.email


# --- Register periods, checkouts and sales (spec: Checkout, Sale) ---------------------------------------


class RegisterPeriod(AccountOwned):
    """A register from its opening to its close. Sales are booked into the open period of their register."""

    register = models.ForeignKey(Register, on_delete=models.PROTECT, related_name="periods")
    sequence_number = models.PositiveIntegerField()
    opened_at = models.DateTimeField()
    cash_total_at_open = money(default=0)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["register_id", "-sequence_number"]
        constraints = [
            models.UniqueConstraint(fields=["register", "sequence_number"], name="register_period_sequence_unique"),
            models.UniqueConstraint(
                fields=["register"], condition=Q(closed_at__isnull=True), name="one_open_period_per_register"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.register_id}#{self.sequence_number}"


# What a stored checkout shows, in this order, in the admin and the API (beside their own fields).
CHECKOUT_SHOWN = ("identifier", "register", "stock_location", "period", "voided", "timestamp", "created_at")


class RegisterDocument(Identified):
    """What a register posted at one moment (a checkout, each of its sales), under the register's own
    ``identifier``: in a period of the register, voided or not. Never changed."""

    register = models.ForeignKey(Register, on_delete=models.PROTECT, related_name="+")
    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, related_name="+")
    identifier = models.CharField(max_length=255)
    voided = models.BooleanField(default=False)
    timestamp = models.DateTimeField()

    class Meta(Identified.Meta):
        abstract = True
        ordering = ["-id"]


class Checkout(RegisterDocument):
    """One payment at a register, yielding one or more sales (spec: Checkout)."""

    period = models.ForeignKey(RegisterPeriod, on_delete=models.PROTECT, related_name="checkouts")
    body_hash = models.CharField(max_length=64, help_text="SHA-256 of the posted body, to tell replays apart.")
    document = DecimalJSONField(help_text="The exported JSON form (spec: Checkout).")
    warnings = models.JSONField(
        default=list, blank=True, help_text='What looked odd but was stored as sent: [{"field", "message", "code"}].'
    )

    class Meta(RegisterDocument.Meta):
        indexes = [
            models.Index(fields=["account", "timestamp"]),
            # /metrics counts the warnings of every account's recent checkouts (docs/notes/history.md).
            models.Index(fields=["created_at"], name="checkout_created"),
        ]


class SaleKind(models.TextChoices):
    SALE = "sale", _("Sale")
    RETURN = "return", _("Return")
    EXPENSE = "expense", _("Expense")


class Sale(RegisterDocument):
    """A completed sale or return (spec: Sale): ``document`` is its exported JSON form. Made at its checkout's
    register, in its period, at its time, and voided with it."""

    checkout = models.ForeignKey(Checkout, on_delete=models.PROTECT, related_name="sales")
    period = models.ForeignKey(RegisterPeriod, on_delete=models.PROTECT, related_name="sales")
    sequence_number = models.BigIntegerField()
    kind = models.CharField(max_length=8, choices=SaleKind.choices)
    base_currency_code = models.CharField(max_length=3)
    total = money()
    document = DecimalJSONField(help_text="The exported JSON form (spec: Sale).")
    warnings = models.JSONField(
        default=list, blank=True, help_text="The checkout's warnings about this sale (paths from the checkout body)."
    )

    class Meta(RegisterDocument.Meta):
        indexes = [models.Index(fields=["account", "timestamp"]), models.Index(fields=["period", "kind"])]


class SaleFigures(AccountOwned):
    """A row of figures of a sale that a register close statement sums. ``period`` and ``kind`` repeat the
    sale's so that the statement's aggregates need no join. Voided sales have no rows."""

    period = models.ForeignKey(RegisterPeriod, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=8, choices=SaleKind.choices)

    class Meta:
        abstract = True


class SaleLine(SaleFigures):
    """One line item of a sale. ``product_group`` is blank for an item without a group (``__none__`` in the
    statement)."""

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="lines")
    product_group = models.CharField(max_length=255, blank=True)
    quantity = money()
    base_price = money()
    sub_total = money()
    total = money()
    total_discounts = money(help_text="base_price - sub_total.")
    total_tax_amount = money()
    vat_amount = money()
    sales_tax_amount = money()
    margin_total = money(default=0, help_text="The amount the margin is measured on: sub_total - vat_amount.")
    margin = money(default=0, help_text="The profit amount: margin_total - the line's cost, where a cost is known.")

    class Meta:
        indexes = [models.Index(fields=["period", "kind", "product_group"])]


class SalePayment(SaleFigures):
    """One successful payment entry of a sale (spec: sale.payments), for the statement's payment totals
    (``product_group`` null), or the part of one attributed to a product group of the sale, for the summaries by
    product group (``ledger.statements.split_payment``)."""

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="payment_rows")
    product_group = models.CharField(
        max_length=255, null=True, blank=True, help_text="Null: the sale's payment; else its part in that group."
    )
    payment_type = models.CharField(max_length=255)
    amount = money(help_text="In the base currency.")
    foreign_currency = models.CharField(max_length=3, blank=True)
    foreign_currency_amount = money(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["period", "kind", "payment_type"])]


class SaleTax(SaleFigures):
    """One tax amount of a sale: from ``summary.taxes`` (``product_group`` null) or a line's ``taxes``."""

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="tax_rows")
    product_group = models.CharField(max_length=255, null=True, blank=True, help_text="Null: from summary.taxes.")
    name = models.CharField(max_length=255)
    rate = models.DecimalField(max_digits=12, decimal_places=6)
    type = models.CharField(max_length=16)
    amount = money()

    class Meta:
        indexes = [models.Index(fields=["period", "kind"])]


class RegisterCloseStatement(AccountOwned):
    """The statement computed when a register closes (spec: Register close statement). Never changed."""

    register = models.ForeignKey(Register, on_delete=models.PROTECT, related_name="+")
    period = models.OneToOneField(RegisterPeriod, on_delete=models.PROTECT, related_name="statement")
    identifier = models.CharField(
        max_length=255, blank=True, help_text="Optional, from the app: a repeated close with it answers this statement."
    )
    sequence_number = models.PositiveIntegerField()
    reconciliation_time = models.DateTimeField()
    document = DecimalJSONField(help_text="The exported JSON form (spec: Register close statement).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["register", "sequence_number"], name="statement_sequence_unique"),
            models.UniqueConstraint(
                fields=["account", "identifier"], condition=~Q(identifier=""), name="statement_identifier_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.register_id}#{self.sequence_number}"


# --- Stock (spec: Stock event) ------------------------------------------------------------------------


class StockEventType(models.TextChoices):
    SALE = "sale"
    RETURN = "return"
    RECEIVED = "received"
    STOCK_COUNT_RESET = "stock_count_reset"
    EXTERNAL_RESET = "external_reset"


class StockLevel(AccountOwned):
    """Current stock of a product (and variant; blank for none) on a stock location."""

    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, related_name="+")
    product_id = models.CharField(max_length=255)
    variant_id = models.CharField(max_length=255, blank=True)
    quantity = money(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["stock_location_id", "product_id", "variant_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["stock_location", "product_id", "variant_id"], name="stock_level_unique_per_item"
            )
        ]
        indexes = [models.Index(fields=["account", "product_id"])]

    def __str__(self) -> str:
        return f"{self.product_id}/{self.variant_id or '-'}: {self.quantity}"


class StockEvent(AccountOwned):
    """A move of stock (spec: Stock event). Exactly one of ``adjustment`` and ``new_stock_value``."""

    identifier = models.CharField(
        max_length=255, blank=True, help_text="Optional, from the sender: a repeated post with it records nothing."
    )
    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, related_name="+")
    product_id = models.CharField(max_length=255)
    variant_id = models.CharField(max_length=255, blank=True)
    type = models.CharField(max_length=24, choices=StockEventType.choices)
    adjustment = money(null=True, blank=True)
    new_stock_value = money(null=True, blank=True)
    sale_id = models.CharField(max_length=255, blank=True)
    stock_count_id = models.CharField(max_length=255, blank=True)
    stock_count_expected = money(null=True, blank=True)
    stock_count_diff = money(null=True, blank=True)
    timestamp = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            exactly_one_not_null("adjustment", "new_stock_value", name="stock_event_adjustment_xor_new_value"),
            models.UniqueConstraint(
                fields=["account", "identifier"], condition=~Q(identifier=""), name="stock_event_identifier_unique"
            ),
        ]
        indexes = [models.Index(fields=["account", "stock_location", "product_id"])]

    def __str__(self) -> str:
        return f"{self.type} {self.product_id}"
