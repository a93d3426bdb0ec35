"""Admin of the ledger's checkouts and sales: visible and searchable, never edited by hand.

A checkout and its sales are records of money taken at a register (and exported as such); the rows beside
a sale are what its register close statement summed. Changing any of them would falsify both.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from accounts.admin import (
    AccountOwnedAdmin,
    ReadOnlyAdminMixin,
    RecordInline,
    pretty_json_field,
    scoped_filters,
)
from ledger.models import CHECKOUT_SHOWN, Checkout, Sale, SaleLine, SalePayment, SaleTax


class SaleInline(RecordInline):
    model = Sale
    fields = ("identifier", "sequence_number", "kind", "voided", "total")
    show_change_link = True


class SaleLineInline(RecordInline):
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


class SalePaymentInline(RecordInline):
    model = SalePayment
    fields = ("product_group", "payment_type", "amount", "foreign_currency", "foreign_currency_amount")


class SaleTaxInline(RecordInline):
    model = SaleTax
    fields = ("product_group", "name", "rate", "type", "amount")


class HasWarningsFilter(admin.SimpleListFilter):
    """Checkouts and sales stored with warnings (what the spec does not state but looked odd)."""

    title = "warnings"
    parameter_name = "has_warnings"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:  # type: ignore[type-arg]
        return [("yes", "With warnings"), ("no", "Without warnings")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:  # type: ignore[type-arg]
        if self.value() == "yes":
            return queryset.exclude(warnings=[])
        if self.value() == "no":
            return queryset.filter(warnings=[])
        return queryset


class DocumentAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    search_fields = ["identifier"]

    document_pretty = pretty_json_field("document", "document")

    @admin.display(description="warnings")
    def warnings_list(self, obj: Checkout | Sale) -> SafeString | str:
        """Each warning as ``field: message (code)``; stored as sent all the same."""
        if not obj.warnings:
            return "-"
        return format_html_join(
            "", "<div><code>{}</code>: {} ({})</div>", ((w["field"], w["message"], w["code"]) for w in obj.warnings)
        )

    @admin.display(description="warnings", boolean=False)
    def warning_count(self, obj: Checkout | Sale) -> int:
        return len(obj.warnings or ())


@admin.register(Checkout)
class CheckoutAdmin(DocumentAdmin):
    list_display = [
        "identifier",
        "voided",
        "warning_count",
        "register",
        "stock_location",
        "account",
        "timestamp",
        "created_at",
    ]
    list_filter = scoped_filters("voided", HasWarningsFilter, "timestamp")
    list_select_related = ["account", "register", "stock_location"]
    fields = ["account", *CHECKOUT_SHOWN, "body_hash", "warnings_list", "document_pretty"]
    readonly_fields = ["warnings_list", "document_pretty"]
    inlines = [SaleInline]


@admin.register(Sale)
class SaleAdmin(DocumentAdmin):
    list_display = [
        "identifier",
        "kind",
        "voided",
        "total",
        "warning_count",
        "base_currency_code",
        "register",
        "stock_location",
        "account",
        "timestamp",
    ]
    list_filter = scoped_filters("kind", "voided", HasWarningsFilter, "timestamp")
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
        "warnings_list",
        "document_pretty",
    ]
    readonly_fields = ["warnings_list", "document_pretty"]
    inlines = [SaleLineInline, SalePaymentInline, SaleTaxInline]
