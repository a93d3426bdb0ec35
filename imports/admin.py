"""Back-office admin of the import queue and log: a record, view-only."""

from __future__ import annotations

from django.contrib import admin
from django.utils.text import Truncator

from accounts.admin import AccountOwnedAdmin, AccountScopedRelatedFilter, ReadOnlyAdminMixin, pretty_json
from core.admin_fields import REASON_CHARS, field_display
from imports.models import ImportItem


@admin.register(ImportItem)
class ImportItemAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = [
        "id",
        "created_at",
        "kind",
        "identifier",
        "status",
        "account",
        "integration",
        "stock_location",
        "attempts",
        "reason",
    ]
    list_filter = [
        "status",
        "kind",
        "created_at",
        "account",
        ("integration", AccountScopedRelatedFilter),
        ("stock_location", AccountScopedRelatedFilter),
    ]
    list_select_related = ["account", "integration", "stock_location"]
    search_fields = ["identifier", "request_id"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "account",
                    "integration",
                    "kind",
                    "status",
                    "identifier",
                    "stock_location",
                    "markets",
                    "request_id",
                    "index",
                    "attempts",
                    "created_at",
                    "processed_at",
                    "message",
                ]
            },
        ),
        ("Payload", {"fields": ["payload_pretty"]}),
        ("Errors", {"fields": ["errors_pretty"]}),
    ]
    readonly_fields = ["payload_pretty", "errors_pretty"]

    @admin.display(description="reason")
    def reason(self, obj: ImportItem) -> str:
        """Why an item failed, in the list: its first error with the field it names, else its message."""
        errors = obj.errors if isinstance(obj.errors, list) else []
        first = errors[0] if errors and isinstance(errors[0], dict) else None
        if first is not None:
            text = f"{first.get('field', '')}: {first.get('message', '')}".strip(": ")
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            return Truncator(text + more).chars(REASON_CHARS)
        return Truncator(obj.message).chars(REASON_CHARS)

    payload_pretty = field_display("payload", pretty_json)
    errors_pretty = field_display("errors", pretty_json)
