"""Admin of the ledger's stock: levels and events are shown, never edited by hand.

A level only moves through a stock event (so that exports and the history explain every change), and an
event is a record; a correction is a new event (a stock count or an external reset) from the POS or an import.
"""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import AccountOwnedAdmin, ReadOnlyAdminMixin, scoped_filters
from ledger.models import StockEvent, StockLevel


@admin.register(StockLevel)
class StockLevelAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["product_id", "variant_id", "stock_location", "quantity", "account", "updated_at"]
    list_filter = scoped_filters()
    list_select_related = ["account", "stock_location"]
    search_fields = ["product_id", "variant_id"]


@admin.register(StockEvent)
class StockEventAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = [
        "id",
        "type",
        "product_id",
        "variant_id",
        "stock_location",
        "adjustment",
        "new_stock_value",
        "sale_id",
        "stock_count_id",
        "timestamp",
        "account",
    ]
    list_filter = scoped_filters("type", "timestamp")
    list_select_related = ["account", "stock_location"]
    search_fields = ["product_id", "variant_id", "sale_id", "stock_count_id"]
