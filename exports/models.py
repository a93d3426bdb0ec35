"""Export queues, the outbox of export items, deliveries and their attempts (spec: Events)."""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import AccountOwned
from core.jsonenc import DecimalJSONField, OrderedJSONField
from core.outbox import EntityType  # the one enumeration of entity types; the queue's and item's choices


class Trigger(models.TextChoices):
    REALTIME = "realtime", _("Realtime")
    HOURLY = "hourly", _("Hourly")
    DAILY = "daily", _("Daily")


class ExportStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    SUCCESS = "success", _("Success")
    FAILURE = "failure", _("Failure")
    SKIPPED = "skipped", _("Skipped")


class ExportQueue(AccountOwned):
    """Which entities go where: trigger, transform and delivery, configured by staff."""

    name = models.CharField(max_length=200)
    entity_type = models.CharField(max_length=40, choices=EntityType.choices)
    enabled = models.BooleanField(default=True)
    filters = DecimalJSONField(
        default=dict,
        blank=True,
        help_text='{"stock_locations": [ids], "markets": [ids], "ignore_stock_event_types": [types]}',
    )
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.REALTIME)
    daily_at = models.TimeField(null=True, blank=True, help_text="Local time of a daily run (account time zone).")
    # JSON text on every database: the order of their keys is configured (a simple JSON transform's output keys, a
    # web hook's headers) and kept, where PostgreSQL's jsonb would reorder them. The filters' keys mean no order.
    transform = OrderedJSONField(default=dict, help_text='{"type": "identity"|"mustache"|..., ...}')
    delivery = OrderedJSONField(default=dict, help_text='{"type": "webhook"|"email"|"ftp"|"sftp", ...}')
    # Deliveries of this queue sent at the same time, across every worker (empty: EXPORT_QUEUE_CONCURRENCY): the
    # endpoint's bound. 1 sends them one at a time, in order.
    concurrency = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Deliveries sent at the same time (empty: the service's default). 1 keeps them in order.",
    )
    # Auto-disable (as Svix does, docs/breaker.md): the first failed delivery since the last success, and why and when
    # the service turned ``enabled`` off after EXPORT_QUEUE_DISABLE_AFTER_DAYS of failures (empty: it did not).
    failing_since = models.DateTimeField(null=True, blank=True, editable=False)
    disabled_at = models.DateTimeField(null=True, blank=True, editable=False)
    disabled_reason = models.TextField(blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="export_queue_name_unique")]
        indexes = [models.Index(fields=["account", "entity_type", "enabled"])]

    def __str__(self) -> str:
        return self.name


class ExportDelivery(AccountOwned):
    """One wrapper sent to the destination: one element in real time, a batch for a cron window.

    Retry state lives here (``attempts``, ``next_attempt_at``), not in Celery. ``lease_until`` marks a
    delivery a worker is sending right now (taken just before its send, longer than the task's hard time limit);
    one whose lease ran out (the worker was killed) is taken up again. ``handed_off_at`` is when a task for it
    was last published (or is due to run, for a retry handed over with a countdown): the sweeper publishes it
    again only once that hand-off is older than its grace period.
    """

    queue = models.ForeignKey(ExportQueue, on_delete=models.CASCADE, related_name="deliveries")
    delivery_id = models.CharField(max_length=64, unique=True, help_text="Sent as webhook-id / file name.")
    window = models.CharField(max_length=32, blank=True, help_text="Cron window, e.g. 2026-11-22T14 (hourly).")
    status = models.CharField(max_length=16, choices=ExportStatus.choices, default=ExportStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    lease_until = models.DateTimeField(null=True, blank=True)
    # The process sending it (core.liveness name, ``hostname:pid``; "" outside a worker): a lease whose owner stopped
    # proving it is alive is taken over by the sweeper before ``lease_until``.
    lease_owner = models.CharField(max_length=200, blank=True, default="")
    handed_off_at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # Not sent because the destination's circuit breaker was open (``exports.circuit``): not an attempt; the
    # delivery is due again at ``paused_until``, the breaker's reopening.
    paused_until = models.DateTimeField(null=True, blank=True)
    pause_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "export deliveries"  # the singular is Django's own
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["queue", "window"], condition=~models.Q(window=""), name="export_delivery_one_per_window"
            )
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"]),
            # One queue's next due delivery, and its live leases (the queue's concurrency cap).
            models.Index(fields=["queue", "status", "next_attempt_at"], name="export_deliv_queue_due"),
            models.Index(fields=["queue", "lease_until"], name="export_deliv_queue_lease"),
            # An account's live leases: the worker processes it occupies (its fair share).
            models.Index(fields=["account", "lease_until"], name="export_deliv_account_lease"),
        ]

    def __str__(self) -> str:
        return self.delivery_id


class ExportItem(AccountOwned):
    """One entity in one queue: the outbox row, written in the transaction that creates the entity.

    ``object_id`` refers to the entity's row (the registry of entity types loads and serialises it);
    the export log lists these items with the outcome of their delivery.
    """

    queue = models.ForeignKey(ExportQueue, on_delete=models.CASCADE, related_name="items")
    entity_type = models.CharField(max_length=40, choices=EntityType.choices)
    object_id = models.BigIntegerField()
    element_key = models.CharField(max_length=255)
    status = models.CharField(max_length=16, choices=ExportStatus.choices, default=ExportStatus.PENDING)
    delivery = models.ForeignKey(ExportDelivery, on_delete=models.SET_NULL, null=True, blank=True, related_name="items")
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "export log entry"
        verbose_name_plural = "export log"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["queue", "status"]),
            models.Index(fields=["entity_type", "object_id"]),
            # /metrics and the dashboard (docs/notes/history.md): items created in a recent window; each queue's
            # pending items and the oldest of them (a partial index: only what is pending).
            models.Index(fields=["created_at"], name="export_item_created"),
            models.Index(
                fields=["queue", "created_at"], condition=models.Q(status="pending"), name="export_item_pending"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.entity_type} {self.element_key}: {self.status}"


class ExportAttempt(AccountOwned):
    """One try of a delivery: what was sent, in short, and what the destination answered."""

    delivery = models.ForeignKey(ExportDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    ok = models.BooleanField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    # Cut to ``exports.deliveries.base.SENT_CHARS`` and ``ANSWER_BYTES`` before they are stored. A default in the
    # database too: adding the columns rewrites no row, and rows written without them read as "".
    sent = models.TextField(blank=True, default="", db_default="", help_text="What was sent, in short, no secret.")
    answer = models.TextField(
        blank=True, default="", db_default="", help_text="The start of the destination's answer (512 bytes at most)."
    )

    class Meta:
        ordering = ["delivery", "number"]
        # /metrics and the dashboard read every account's recent attempts (docs/notes/history.md).
        indexes = [models.Index(fields=["started_at"], name="export_attempt_started")]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}"
