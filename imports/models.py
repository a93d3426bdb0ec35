"""The import queue and log: every posted item, its payload and its outcome."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.models import Account, AccountOwned, Integration, StockLocation
from core.jsonenc import DecimalJSONField


class ImportKind(models.TextChoices):
    INCOMING_ORDER = "incoming_order", _("Incoming Order")
    EXTERNAL_ORDER = "external_order", _("External Order")
    OUTGOING_ORDER_STATE_CHANGE = "outgoing_order_state_change", _("Outgoing Order State Change")
    DISCOUNT_CAMPAIGN = "discount_campaign", _("Discount Campaign")
    DISCOUNT_CAMPAIGN_DELETION = "discount_campaign_deletion", _("Discount Campaign Deletion")
    PRODUCT_RULE = "product_rule", _("Product Rule")
    PRODUCT_RULE_DELETION = "product_rule_deletion", _("Product Rule Deletion")
    STOCK_EVENT = "stock_event", _("Stock Event")  # an external_reset, applied in the request


QUEUED_KINDS = (
    ImportKind.INCOMING_ORDER,
    ImportKind.EXTERNAL_ORDER,
    ImportKind.OUTGOING_ORDER_STATE_CHANGE,
)


class ImportStatus(models.TextChoices):
    PENDING = "pending", _("Pending")  # queued, not yet materialised
    SUCCESS = "success", _("Success")
    FAILURE = "failure", _("Failure")  # queued, then failed when materialised (duplicate, unknown order, ...)
    REJECTED = "rejected", _("Rejected")  # refused by validation in the request, never queued


class ImportItem(AccountOwned):
    # No index of its own: the composite (account, integration, status) index leads with it.
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_index=False)
    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="import_items")
    kind = models.CharField(max_length=32, choices=ImportKind.choices)
    request_id = models.UUIDField(db_index=True, help_text="All items of one request share it.")
    index = models.PositiveIntegerField(help_text="Position of the item in the request body.")
    identifier = models.CharField(max_length=255, blank=True)
    # No index of its own: the duplicate check reads pending items through import_item_pending_ident, and a second
    # index leading with the column let the planner choose it and filter thousands of rows (docs/benchmarks.md).
    stock_location = models.ForeignKey(
        StockLocation, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )
    markets = models.JSONField(default=list, blank=True)
    payload = DecimalJSONField(null=True)
    status = models.CharField(max_length=16, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    message = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "import log entry"
        verbose_name_plural = "import log"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["account", "integration", "status"]),
            models.Index(fields=["status", "created_at"]),
            # The duplicate check of each order import looks only at pending items: a small partial index
            # that stays fast whatever the size of the log and however stale the planner's statistics.
            models.Index(
                fields=["stock_location", "identifier"],
                condition=models.Q(status="pending"),
                name="import_item_pending_ident",
            ),
            # What materialising takes (an account's oldest pending items) and the sweeper and the backlog
            # metric read: pending items only, so the status update that ends an item's stay adds nothing here.
            models.Index(fields=["account", "id"], condition=models.Q(status="pending"), name="import_item_pending"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.identifier or self.index}: {self.status}"
