"""Back-office admin of the gift card record and customer-account payments: visible, never edited by hand.

They record what an integrator confirmed; changing them here would make the record disagree with the
integrator that holds the money, so the admin only shows them (like orders/admin.py).
"""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import AccountOwnedAdmin, ReadOnlyAdminMixin, RecordInline, pretty_json_field
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


class GiftCardMoveInline(RecordInline):
    model = GiftCardMove
    fields = MOVE_FIELDS
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


class IntegratorAnswerAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    """A row of something asked of the integrator: its answer shown pretty-printed, not as a JSON text area."""

    exclude = ["answer"]
    readonly_fields = ["answer_pretty"]

    answer_pretty = pretty_json_field("answer", "integrator's answer")


@admin.register(GiftCardMove)
class GiftCardMoveAdmin(IntegratorAnswerAdmin):
    list_display = ["created_at", "code", "account", "action", "ok", "requested_amount", "amount_after", "status_after"]
    list_filter = ["action", "ok", "account"]
    search_fields = ["code", "identifier", "sale_id"]


@admin.register(CustomerAccountPayment)
class CustomerAccountPaymentAdmin(IntegratorAnswerAdmin):
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
