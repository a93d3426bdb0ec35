"""Back-office admin of the gift card record and customer-account payments: visible, never edited by hand.

They record what an integrator confirmed; changing them here would make the record disagree with the
integrator that holds the money, so the admin only shows them (like orders/admin.py).
"""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import AccountOwnedAdmin, ReadOnlyAdminMixin, pretty_json_field
from giftcards.models import CustomerAccountPayment, GiftCard, GiftCardMove

MOVE_FIELDS = (
    "created_at",
    "action",
    "ok",
    "identifier",
    "requested_amount",
    "amount_before",
    "amount_after",
    "status_before",
    "status_after",
    "integrator_status",
    "sale_id",
    "error",
)


class GiftCardMoveInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = GiftCardMove
    fields = MOVE_FIELDS
    readonly_fields = MOVE_FIELDS
    extra = 0
    can_delete = False
    ordering = ["id"]
    verbose_name_plural = "moves"


@admin.register(GiftCard)
class GiftCardAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["code", "account", "status", "amount", "currency_code", "expiry_date", "sale_id", "updated_at"]
    list_filter = ["status", "currency_code", "account"]
    search_fields = ["code", "card_id", "sale_id"]
    readonly_fields = ["external_giftcard_pretty"]
    exclude = ["external_giftcard"]
    inlines = [GiftCardMoveInline]

    external_giftcard_pretty = pretty_json_field("external_giftcard", "external giftcard")


@admin.register(GiftCardMove)
class GiftCardMoveAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["created_at", "code", "account", "action", "ok", "requested_amount", "amount_after", "status_after"]
    list_filter = ["action", "ok", "account"]
    search_fields = ["code", "identifier", "sale_id"]
    exclude = ["answer"]
    readonly_fields = ["answer_pretty"]

    answer_pretty = pretty_json_field("answer", "integrator's answer")


@admin.register(CustomerAccountPayment)
class CustomerAccountPaymentAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = [
        "created_at",
        "customer_id",
        "account",
        "payment_type",
        "requested_amount",
        "used_amount",
        "currency_code",
        "ok",
    ]
    list_filter = ["ok", "payment_type", "account"]
    search_fields = ["customer_id", "identifier"]
    exclude = ["answer"]
    readonly_fields = ["answer_pretty"]

    answer_pretty = pretty_json_field("answer", "integrator's answer")
