"""Admin of the ledger's checkouts and sales: visible and searchable, never edited by hand.

A checkout and its sales are records of money taken at a register (and exported as such); the rows beside
a sale are what its register close statement summed. Changing any of them would falsify both.
"""

from __future__ import annotations

from django.contrib import admin
from django.utils.safestring import SafeString

from accounts.admin import AccountOwnedAdmin, AccountScopedRelatedFilter, ReadOnlyAdminMixin, pretty_json
from ledger.models import Checkout, Sale, SaleLine, SalePayment, SaleTax


class SaleInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Sale
    fields = ("identifier", "sequence_number", "kind", "voided", "total")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


class SaleLineInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = SaleLine
    fields = (
        "product_group",
        "quantity",
        "base_price",
        "sub_total",
        "total_discounts",
        "vat_amount",
        "sales_tax_amount",
        "total",
        "margin_total",
        "margin",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False


class SalePaymentInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = SalePayment
    fields = ("payment_type", "amount", "foreign_currency", "foreign_currency_amount")
    readonly_fields = fields
    extra = 0
    can_delete = False


class SaleTaxInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = SaleTax
    fields = ("product_group", "name", "rate", "type", "amount")
    readonly_fields = fields
    extra = 0
    can_delete = False


class DocumentAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    search_fields = ["identifier"]
    # These tables grow without bound; skip the unfiltered COUNT(*) on every search.
    show_full_result_count = False
    date_hierarchy = "timestamp"

    @admin.display(description="document")
    def document_pretty(self, obj: Checkout | Sale) -> SafeString | None:
        return pretty_json(obj.document)


@admin.register(Checkout)
class CheckoutAdmin(DocumentAdmin):
    list_display = ["identifier", "voided", "register", "stock_location", "account", "timestamp", "created_at"]
    list_filter = ["account", "voided", ("stock_location", AccountScopedRelatedFilter)]
    list_select_related = ["account", "register", "stock_location"]
    fields = [
        "account",
        "identifier",
        "register",
        "stock_location",
        "period",
        "voided",
        "timestamp",
        "created_at",
        "body_hash",
        "document_pretty",
    ]
    readonly_fields = ["document_pretty"]
    inlines = [SaleInline]


@admin.register(Sale)
class SaleAdmin(DocumentAdmin):
    list_display = [
        "identifier",
        "kind",
        "voided",
        "total",
        "base_currency_code",
        "register",
        "stock_location",
        "account",
        "timestamp",
    ]
    list_filter = ["account", "kind", "voided", ("stock_location", AccountScopedRelatedFilter)]
    list_select_related = ["account", "register", "stock_location"]
    search_fields = ["identifier", "checkout__identifier"]
    fields = [
        "account",
        "identifier",
        "checkout",
        "sequence_number",
        "kind",
        "voided",
        "base_currency_code",
        "total",
        "register",
        "stock_location",
        "period",
        "timestamp",
        "created_at",
        "document_pretty",
    ]
    readonly_fields = ["document_pretty"]
    inlines = [SaleLineInline, SalePaymentInline, SaleTaxInline]
