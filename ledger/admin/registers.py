"""Admin of register periods and close statements: visible, never edited by hand.

A statement is the record of a close and is exported as it was made; a period is opened and closed by the
POS only. Both are read-only here, like orders.
"""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import AccountOwnedAdmin, ReadOnlyAdminMixin, pretty_json_field
from ledger.models import RegisterCloseStatement, RegisterPeriod


@admin.register(RegisterPeriod)
class RegisterPeriodAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["__str__", "register", "account", "sequence_number", "opened_at", "closed_at", "cash_total_at_open"]
    list_filter = ["account"]
    list_select_related = ["account", "register"]
    search_fields = ["register__identifier", "account__identifier"]
    fields = ["account", "register", "sequence_number", "opened_at", "cash_total_at_open", "closed_at"]


@admin.register(RegisterCloseStatement)
class RegisterCloseStatementAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["__str__", "register", "account", "sequence_number", "reconciliation_time", "created_at"]
    list_filter = ["account", "reconciliation_time"]
    list_select_related = ["account", "register"]
    search_fields = ["register__identifier", "account__identifier"]
    fields = [
        "account",
        "register",
        "period",
        "sequence_number",
        "reconciliation_time",
        "created_at",
        "document_pretty",
    ]
    readonly_fields = ["document_pretty", "created_at"]

    document_pretty = pretty_json_field("document", "document")
