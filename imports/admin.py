"""Back-office admin of the import queue and log: a record, view-only."""

from __future__ import annotations

from django.contrib import admin
from django.utils.safestring import SafeString

from accounts.admin import AccountOwnedAdmin, AccountScopedRelatedFilter, ReadOnlyAdminMixin, pretty_json
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
    ]
    list_filter = [
        "status",
        "kind",
        "account",
        ("integration", AccountScopedRelatedFilter),
        ("stock_location", AccountScopedRelatedFilter),
    ]
    list_select_related = ["account", "integration", "stock_location"]
    search_fields = ["identifier", "request_id"]
    # The log grows without bound; skip the unfiltered COUNT(*) on every search.
    show_full_result_count = False
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

    @admin.display(description="payload")
    def payload_pretty(self, obj: ImportItem) -> SafeString | None:
        return pretty_json(obj.payload)

    @admin.display(description="errors")
    def errors_pretty(self, obj: ImportItem) -> SafeString | None:
        return pretty_json(obj.errors)
